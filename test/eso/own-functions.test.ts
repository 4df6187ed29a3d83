// ESO's own template functions (filterPEM, filterCertChain, jwkPublicKeyPem, jwkPrivateKeyPem,
// toYaml/fromYaml) over fresh key material (test/eso/template-pki.ts), answers as ESO v0.16.2 gives
// them; test/eso/go-differential.test.ts holds them to ESO's Go code when the Go oracle is available.
import 'reflect-metadata';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { ESO_OWN_FUNCS } from '../../eso/own-functions.ts';
import { GoMap } from '../../golang/values.ts';
import { render } from '../golang/template/render.ts';
import { pkiData } from './template-pki.ts';

const { data } = await pkiData();
const dot = new GoMap(Object.entries(data));
const eso = (src: string): string => render(src, dot, ESO_OWN_FUNCS);
const certs = (pem: string): number => pem.split('-----BEGIN CERTIFICATE-----').length - 1;

test('filterPEM keeps the blocks of one type (case-insensitive), drops junk around them', () => {
  const out = eso('{{ .bundle | filterPEM "certificate" }}');
  assert.equal(out, data.leafOnly);
  assert.match(eso('{{ .bundle | filterPEM "PRIVATE KEY" }}'), /^-----BEGIN PRIVATE KEY-----/);
  assert.throws(() => eso('{{ .junk | filterPEM "CERTIFICATE" }}'), /error filtering pem: found junk/);
});

test('filterCertChain picks leaf, intermediates or root, in whatever order the chain was given', () => {
  for (const input of ['chain', 'shuffled']) {
    assert.equal(eso(`{{ .${input} | filterCertChain "leaf" }}`), data.leafOnly, input);
    assert.equal(eso(`{{ .${input} | filterCertChain "root" }}`), data.rootOnly, input);
    assert.equal(certs(eso(`{{ .${input} | filterCertChain "intermediate" }}`)), 1, input);
  }
  assert.equal(eso('{{ .rootOnly | filterCertChain "leaf" }}'), '', 'a root alone has no leaf');
  assert.equal(eso('{{ .twoRoots | filterCertChain "leaf" }}'), '', 'two self-signed certificates: no leaf');
  assert.throws(() => eso('{{ .badB64 | filterCertChain "leaf" }}'), /filterCertChain/);
});

test('a JWK becomes the PEM of the same key; a broken JWK is refused without quoting it', () => {
  const pub = eso('{{ .jwkEcPub | jwkPublicKeyPem }}');
  assert.deepEqual(createPublicKey(pub).export({ format: 'jwk' }), JSON.parse(data.jwkEcPub!));
  assert.match(eso('{{ .jwkRsaPriv | jwkPrivateKeyPem }}'), /^-----BEGIN PRIVATE KEY-----/);
  assert.throws(
    () => eso('{{ .jwkBad | jwkPublicKeyPem }}'),
    (e: Error) => /error calling jwkPublicKeyPem/.test(e.message) && !e.message.includes('"kty"'),
  );
});

test('toYaml and fromYaml round trip a map; bad YAML gives an Error key, as ESO does', () => {
  assert.equal(render('{{ fromYaml "a: 1\\nb: [x]" | toYaml }}', null, ESO_OWN_FUNCS), 'a: 1\nb:\n- x');
  assert.match(render('{{ (fromYaml "a: [") }}', null, ESO_OWN_FUNCS), /Error/);
});
