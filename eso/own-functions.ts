// ESO's own template functions (pkg/template/v2 of ESO v0.16.2: yaml.go, pem.go, pem_chain.go, jwk.go),
// ported from its source: toYaml/fromYaml (sigs.k8s.io/yaml), filterPEM and filterCertChain (Go's
// encoding/pem and the AuthorityKeyId/SubjectKeyId chain walk), jwkPublicKeyPem/jwkPrivateKeyPem (JWK
// to PKIX / PKCS#8 PEM). Error texts are ESO's where they carry no data, fixed texts where Go's would
// quote the input (a key, a certificate).
import { createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto';
import 'reflect-metadata';
import { AuthorityKeyIdentifierExtension, SubjectKeyIdentifierExtension, X509Certificate } from '@peculiar/x509';
import { parseDocument } from 'yaml';
import {
  toGoYaml,
  fail,
  fixed,
  type FuncTable,
  GoMap,
  fromJsValue,
  goString,
  isMap,
  utf8Text,
  pemDecode,
  pemEncode,
} from '../golang/index.ts';
import { decodeChain, pkcs8Der } from './pkcs12.ts';

function filterPEM(pemType: string, input: string): string {
  let data = input;
  let blocks = '';
  let rest = '';
  for (;;) {
    const d = pemDecode(data);
    rest = d.rest;
    data = d.rest;
    if (!d.block) break;
    if (d.block.type.toLowerCase() !== pemType.toLowerCase() && !equalFold(d.block.type, pemType)) continue;
    blocks += pemEncode(d.block.type, d.block.bytes, d.block.headers);
  }
  if (blocks.length === 0 && rest.length !== 0) fail('error filtering pem: found junk');
  return blocks;
}

const equalFold = (a: string, b: string): boolean => utf8Text(a).toLowerCase() === utf8Text(b).toLowerCase();

// ---- the certificate chain (pem_chain.go) ----

interface CertNode {
  raw: Buffer;
  aki?: string;
  ski?: string;
  parent?: CertNode;
  isParent: boolean;
}

function parseCert(der: Buffer): CertNode {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(der);
  } catch {
    return fail('x509: malformed certificate');
  }
  const aki = cert.getExtension(AuthorityKeyIdentifierExtension)?.keyId;
  const ski = cert.getExtension(SubjectKeyIdentifierExtension)?.keyId;
  return { raw: der, ...(aki ? { aki } : {}), ...(ski ? { ski } : {}), isParent: false };
}

/** fetchX509CertChains: leaf → intermediates → root by AuthorityKeyId = SubjectKeyId (nil = nil too). */
function certChain(input: string): CertNode[] {
  const nodes: CertNode[] = [];
  let data = input;
  for (;;) {
    const d = pemDecode(data);
    data = d.rest;
    if (!d.block) break;
    nodes.push(parseCert(d.block.bytes));
  }
  for (let i = 0; i < nodes.length; i++) {
    for (let j = 0; j < nodes.length; j++) {
      if (i === j) continue;
      if ((nodes[i]!.aki ?? '') === (nodes[j]!.ski ?? '')) {
        nodes[j]!.isParent = true;
        nodes[i]!.parent = nodes[j];
        break;
      }
    }
  }
  let leaf: CertNode | undefined;
  for (const n of nodes) {
    if (!n.isParent) {
      if (leaf) fail('found multiple leaf or disjunct certificates');
      leaf = n;
    }
  }
  if (!leaf) fail('no leaf certificate found');
  const chain: CertNode[] = [];
  for (let n: CertNode | undefined = leaf; n; n = n.parent) {
    if (chain.length >= nodes.length) fail('constructing chain resulted in cycle');
    chain.push(n);
  }
  return chain;
}

const isRoot = (c: CertNode): boolean => c.aki === undefined || c.aki === c.ski;

function filterCertChain(certType: string, input: string): string {
  const ordered = certChain(input);
  const enc = (c: CertNode): string => pemEncode('CERTIFICATE', c.raw);
  switch (certType) {
    case 'leaf': {
      const c = ordered[0]!;
      if (c.aki !== undefined && c.aki !== c.ski) return enc(c);
      return '';
    }
    case 'intermediate': {
      if (ordered.length < 2) return '';
      let out = '';
      for (const c of ordered.slice(1)) {
        if (isRoot(c)) break;
        out += enc(c);
      }
      return out;
    }
    case 'root': {
      const c = ordered[ordered.length - 1]!;
      return isRoot(c) ? enc(c) : '';
    }
  }
  return '';
}

/** The leaf-first ordered chain of PEM certificates, as ESO's pkcs12cert returns it. */
export function orderedChainPem(pemData: string): string | undefined {
  try {
    return certChain(pemData)
      .map((c) => pemEncode('CERTIFICATE', c.raw))
      .join('');
  } catch {
    return undefined;
  }
}

// ---- JWK (jwk.go, lestrrat-go/jwx ParseKey) ----

function parseJwk(s: string): JsonWebKey {
  let v: unknown;
  try {
    v = JSON.parse(utf8Text(s));
  } catch {
    return fail('failed to parse the JWK: the input is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail('failed to parse the JWK: not a JSON object');
  return v as JsonWebKey;
}

function jwkPublicKeyPem(s: string): string {
  const jwk = parseJwk(s);
  // ESO marshals the key jwx gives as a PKIX public key: a private or symmetric JWK fails there.
  if (jwk.kty === 'oct') fail('x509: unsupported public key type: []uint8');
  if (jwk.d !== undefined) fail('x509: only public keys can be marshalled as PKIX (the JWK holds a private key)');
  try {
    return goString(createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString());
  } catch {
    return fail('failed to parse the JWK as a public key');
  }
}

function jwkPrivateKeyPem(s: string): string {
  const jwk = parseJwk(s);
  if (jwk.kty === 'oct') fail('x509: unknown key type while marshaling PKCS#8: []uint8');
  if (jwk.d === undefined) fail('x509: unknown key type while marshaling PKCS#8 (the JWK holds a public key)');
  try {
    return goString(createPrivateKey({ key: jwk, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }).toString());
  } catch {
    return fail('failed to parse the JWK as a private key');
  }
}

// ---- YAML (yaml.go) ----

/** ESO's fromYaml: a map, never an error; a document that is not a YAML map gives {"Error": "..."}. */
function fromYaml(s: string): GoMap {
  const doc = parseDocument(utf8Text(s), { version: '1.1', logLevel: 'silent', prettyErrors: false, merge: true });
  // The text is ours, not sigs.k8s.io/yaml's (its message quotes the document, which is secret data).
  if (doc.errors.length > 0)
    return new GoMap([['Error', 'error converting YAML to JSON: the document is not valid YAML']]);
  const v = fromJsValue(doc.toJS({ maxAliasCount: 100 }));
  if (v === null) return new GoMap();
  if (!isMap(v))
    return new GoMap([
      [
        'Error',
        `error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : 'number'} into Go value of type map[string]interface {}`,
      ],
    ]);
  return v;
}

// ---- PKCS#12 (pkcs12.go) ----

function pkcs12keyPass(pass: string, input: string): string {
  const chain = decodeChain(Buffer.from(input, 'latin1'), utf8Text(pass));
  return pemEncode('PRIVATE KEY', pkcs8Der(chain.key));
}

function pkcs12certPass(pass: string, input: string): string {
  const chain = decodeChain(Buffer.from(input, 'latin1'), utf8Text(pass));
  const pemData = [chain.cert, ...chain.caCerts].map((c) => pemEncode('CERTIFICATE', c)).join('');
  // ESO orders the chain leaf first when it can, else returns the certificates as found.
  return orderedChainPem(pemData) ?? pemData;
}

export const ESO_OWN_FUNCS: FuncTable = {
  pkcs12key: fixed(['string'], (input) => pkcs12keyPass('', input)),
  pkcs12keyPass: fixed(['string', 'string'], pkcs12keyPass),
  pkcs12cert: fixed(['string'], (input) => pkcs12certPass('', input)),
  pkcs12certPass: fixed(['string', 'string'], pkcs12certPass),
  toYaml: fixed(['any'], (v) => {
    try {
      return toGoYaml(v);
    } catch {
      return '';
    }
  }),
  fromYaml: fixed(['string'], fromYaml),
  filterPEM: fixed(['string', 'string'], filterPEM),
  filterCertChain: fixed(['string', 'string'], filterCertChain),
  jwkPublicKeyPem: fixed(['string'], jwkPublicKeyPem),
  jwkPrivateKeyPem: fixed(['string'], jwkPrivateKeyPem),
};
