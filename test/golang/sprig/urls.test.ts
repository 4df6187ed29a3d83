// Sprig's urlParse and urlJoin (Go's net/url): the parts of a URL as a map, and back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { urlJoin, urlParse } from '../../../golang/sprig/urls.ts';

test('urlParse splits a URL into the parts Sprig names', () => {
  const u = urlParse('https://user:pw@db.example.com:8443/a/b?x=1&y=2#frag');
  assert.deepEqual(Object.fromEntries(u), {
    scheme: 'https',
    host: 'db.example.com:8443',
    hostname: 'db.example.com',
    path: '/a/b',
    query: 'x=1&y=2',
    opaque: '',
    fragment: 'frag',
    userinfo: 'user:pw',
  });
});

test('urlJoin puts the parts back together', () => {
  const text = 'https://user:pw@db.example.com:8443/a/b?x=1#frag';
  assert.equal(urlJoin(urlParse(text)), text);
});
