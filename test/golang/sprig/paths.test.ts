// Sprig's base, dir, clean and ext: Go's path package (slash-separated, lexical).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basePath, cleanPath, dirPath, extPath } from '../../../golang/sprig/paths.ts';

test("path.Base, Dir, Clean and Ext as Go's path package answers", () => {
  assert.equal(basePath('foo/bar/baz'), 'baz');
  assert.equal(basePath(''), '.');
  assert.equal(basePath('/a/b/'), 'b');
  assert.equal(dirPath('foo/bar/baz'), 'foo/bar');
  assert.equal(dirPath('/a'), '/');
  assert.equal(cleanPath('a//b/../c/./d'), 'a/c/d');
  assert.equal(cleanPath('/../x'), '/x');
  assert.equal(cleanPath(''), '.');
  assert.equal(extPath('archive.tar.gz'), '.gz');
  assert.equal(extPath('dir.d/file'), '');
});
