// Key material for the differential test of ESO's own template functions: a root → intermediate → leaf
// chain with SubjectKeyId/AuthorityKeyId (filterCertChain's walk), a self-signed certificate without them,
// PEM bundles with keys and junk (filterPEM), and JWKs of every key type jwx parses (jwkPublicKeyPem,
// jwkPrivateKeyPem). Made fresh per run: both engines see the same data.
import 'reflect-metadata';
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

type KeyPair = webcrypto.CryptoKeyPair;

async function keyPair(): Promise<KeyPair> {
  return webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
}

async function cert(
  subject: string,
  keys: KeyPair,
  issuer?: { name: string; keys: KeyPair },
  opts: { ids?: boolean } = {},
): Promise<string> {
  const ids = opts.ids ?? true;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(issuer === undefined || subject !== 'leaf', undefined, true),
  ];
  if (ids) extensions.push(await x509.SubjectKeyIdentifierExtension.create(keys.publicKey));
  if (ids && issuer) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuer.keys.publicKey));
  const c = await x509.X509CertificateGenerator.create({
    serialNumber: String(Math.floor(Math.random() * 1e9)),
    subject: `CN=${subject}`,
    issuer: `CN=${issuer?.name ?? subject}`,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + DAY),
    publicKey: keys.publicKey,
    signingKey: (issuer?.keys ?? keys).privateKey,
    signingAlgorithm: ALG,
    extensions,
  });
  return c.toString('pem').replace(/\r/g, '') + '\n';
}

export interface PkiData {
  data: Record<string, string>;
  cases: string[];
}

export async function pkiData(): Promise<PkiData> {
  const root = await keyPair();
  const inter = await keyPair();
  const leaf = await keyPair();
  const rootPem = await cert('root', root);
  const interPem = await cert('inter', inter, { name: 'root', keys: root });
  const leafPem = await cert('leaf', leaf, { name: 'inter', keys: inter });
  const plainPem = await cert('plain', await keyPair(), undefined, { ids: false });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ed = generateKeyPairSync('ed25519');
  const keyPem = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const jwk = (k: { export(o: { format: 'jwk' }): object }): string => JSON.stringify(k.export({ format: 'jwk' }));
  const data: Record<string, string> = {
    chain: leafPem + interPem + rootPem,
    shuffled: rootPem + leafPem + interPem,
    rootOnly: rootPem,
    leafOnly: leafPem,
    plain: plainPem,
    twoRoots: rootPem + plainPem,
    bundle: `junk before\n${leafPem}${keyPem}trailing junk\n`,
    keyOnly: keyPem,
    junk: 'not a pem at all',
    headers: `-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\nA: b\n\nAAEC\n-----END X-----\n`,
    crlf: leafPem.replace(/\n/g, '\r\n'),
    badB64: '-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n',
    jwkEcPub: jwk(ec.publicKey),
    jwkEcPriv: jwk(ec.privateKey),
    jwkEc384Pub: jwk(ec384.publicKey),
    jwkRsaPub: jwk(rsa.publicKey),
    jwkRsaPriv: jwk(rsa.privateKey),
    jwkEdPub: jwk(ed.publicKey),
    jwkEdPriv: jwk(ed.privateKey),
    jwkOct: '{"kty":"oct","k":"c2VjcmV0"}',
    jwkBad: '{"kty":"EC"}',
    notJson: 'nope',
  };
  const cases: string[] = [];
  for (const k of Object.keys(data)) {
    for (const t of ['CERTIFICATE', 'certificate', 'PRIVATE KEY', 'X']) cases.push(`{{ .${k} | filterPEM "${t}" }}`);
    for (const t of ['leaf', 'intermediate', 'root', 'other']) cases.push(`{{ .${k} | filterCertChain "${t}" }}`);
    cases.push(`{{ .${k} | jwkPublicKeyPem }}`, `{{ .${k} | jwkPrivateKeyPem }}`);
  }
  cases.push(
    '{{ .chain | filterPEM "CERTIFICATE" | filterCertChain "leaf" | filterPEM "CERTIFICATE" }}',
    '{{ filterPEM "CERTIFICATE" "" }}',
    '{{ filterCertChain "leaf" "" }}',
  );
  return { data, cases };
}

/** PKCS#12 files of a chain and its leaf key, made by go-pkcs12's encoders through the Go oracle (base64). */
export async function pkcs12Data(
  ask: (
    reqs: Array<{
      kind: 'pkcs12';
      encoder: 'Legacy' | 'LegacyRC2' | 'LegacyDES' | 'Modern' | 'Modern2023' | 'Passwordless';
      certPem: string;
      keyPem: string;
      password: string;
    }>,
  ) => Promise<Array<{ output?: string; error?: string }>>,
): Promise<PkiData> {
  const root = await keyPair();
  const inter = await keyPair();
  const leaf = await keyPair();
  const leafPem = await cert('leaf', leaf, { name: 'inter', keys: inter });
  const chainPem = leafPem + (await cert('inter', inter, { name: 'root', keys: root })) + (await cert('root', root));
  const pkcs8 = (k: webcrypto.CryptoKey) =>
    webcrypto.subtle
      .exportKey('pkcs8', k)
      .then(
        (der) =>
          `-----BEGIN PRIVATE KEY-----\n${Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END PRIVATE KEY-----\n`,
      );
  const leafKey = await pkcs8(leaf.privateKey);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rsaKey = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const encoders = ['Legacy', 'LegacyRC2', 'LegacyDES', 'Modern', 'Modern2023', 'Passwordless'] as const;
  const reqs = [
    ...encoders.map((encoder) => ({
      kind: 'pkcs12' as const,
      encoder,
      certPem: chainPem,
      keyPem: leafKey,
      password: encoder === 'Passwordless' ? '' : 'pw-Lk93',
    })),
    { kind: 'pkcs12' as const, encoder: 'Modern2023' as const, certPem: leafPem, keyPem: leafKey, password: '' },
    {
      kind: 'pkcs12' as const,
      encoder: 'LegacyDES' as const,
      certPem: leafPem,
      keyPem: rsaKey,
      password: 'ünïcode pw',
    },
  ];
  const made = await ask(reqs);
  const data: Record<string, string> = {};
  made.forEach((m, i) => {
    if (!m.output) throw new Error(`go-pkcs12 could not encode: ${m.error ?? ''}`);
    data[`p12_${i}`] = m.output;
  });
  const cases: string[] = [];
  for (const k of Object.keys(data)) {
    for (const pass of ['', 'pw-Lk93', 'ünïcode pw', 'wrong'])
      cases.push(`{{ .${k} | b64dec | pkcs12keyPass "${pass}" }}`, `{{ .${k} | b64dec | pkcs12certPass "${pass}" }}`);
    cases.push(
      `{{ .${k} | b64dec | pkcs12key }}`,
      `{{ .${k} | b64dec | pkcs12cert }}`,
      `{{ .${k} | pkcs12key }}`,
      `{{ .${k} | b64dec | trunc 100 | pkcs12key }}`,
    );
  }
  return { data, cases };
}

/** A DER SEQUENCE of INTEGERs (each given as its content bytes), for "DSA PRIVATE KEY" blocks. */
function derInts(ints: number[][], tag = 0x30): Buffer {
  const body = Buffer.concat(ints.map((b) => Buffer.from([0x02, b.length, ...b])));
  return Buffer.concat([Buffer.from([tag, body.length]), body]);
}
const pemOf = (type: string, der: Buffer): string =>
  `-----BEGIN ${type}-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END ${type}-----\n`;

/** Certificates and keys of every type Sprig's buildCustomCert may be given, and its cases. */
export async function customCertData(): Promise<PkiData> {
  const ecKeys = await keyPair();
  const leafPem = await cert('leaf', ecKeys);
  const plainPem = await cert('plain', await keyPair(), undefined, { ids: false });
  const gen = (type: string, opts: Record<string, unknown> = {}) =>
    (generateKeyPairSync as (t: string, o: object) => { privateKey: import('node:crypto').KeyObject })(type, opts)
      .privateKey;
  const ec256 = gen('ec', { namedCurve: 'P-256' });
  const rsa = gen('rsa', { modulusLength: 1024 });
  const keys: Record<string, string> = {
    kEc8: ec256.export({ type: 'pkcs8', format: 'pem' }).toString(),
    kEc1: ec256.export({ type: 'sec1', format: 'pem' }).toString(),
    kEc384: gen('ec', { namedCurve: 'P-384' }).export({ type: 'sec1', format: 'pem' }).toString(),
    kEc521: gen('ec', { namedCurve: 'P-521' }).export({ type: 'pkcs8', format: 'pem' }).toString(),
    kK1: gen('ec', { namedCurve: 'secp256k1' }).export({ type: 'sec1', format: 'pem' }).toString(),
    kK18: gen('ec', { namedCurve: 'secp256k1' }).export({ type: 'pkcs8', format: 'pem' }).toString(),
    kRsa1: rsa.export({ type: 'pkcs1', format: 'pem' }).toString(),
    kRsa8: rsa.export({ type: 'pkcs8', format: 'pem' }).toString(),
    kPss: gen('rsa-pss', { modulusLength: 1024 }).export({ type: 'pkcs8', format: 'pem' }).toString(),
    kEd: gen('ed25519').export({ type: 'pkcs8', format: 'pem' }).toString(),
    kX25519: gen('x25519').export({ type: 'pkcs8', format: 'pem' }).toString(),
    kEd448: gen('ed448').export({ type: 'pkcs8', format: 'pem' }).toString(),
    kDsa8: gen('dsa', { modulusLength: 1024, divisorLength: 160 }).export({ type: 'pkcs8', format: 'pem' }).toString(),
    kDsa: pemOf('DSA PRIVATE KEY', derInts([[0], [0x05], [0x07], [0x02], [0x00, 0x80], [0x01]])),
    kDsaBig: pemOf('DSA PRIVATE KEY', derInts([[0], [0x7f, 1, 2, 3, 4, 5, 6, 7, 8], [1], [2], [3], [4], [5]])),
    kDsa5: pemOf('DSA PRIVATE KEY', derInts([[0], [1], [2], [3], [4]])),
    kDsaPad: pemOf('DSA PRIVATE KEY', derInts([[0, 1], [1], [2], [3], [4], [5]])),
    kDsaSet: pemOf('DSA PRIVATE KEY', derInts([[0], [1], [2], [3], [4], [5]], 0x31)),
    kDsaVer: pemOf('DSA PRIVATE KEY', derInts([[1, 2, 3, 4, 5, 6, 7, 8, 9], [1], [2], [3], [4], [5]])),
    kSsh: pemOf('OPENSSH PRIVATE KEY', Buffer.from('openssh-key-v1')),
    kEnc: pemOf('ENCRYPTED PRIVATE KEY', Buffer.from([0x30, 0])),
    kPub: rsa
      .export({ type: 'pkcs1', format: 'pem' })
      .toString()
      .replace(/RSA PRIVATE KEY/g, 'PUBLIC KEY'),
    kRsaAsEc: rsa
      .export({ type: 'pkcs1', format: 'pem' })
      .toString()
      .replace(/RSA PRIVATE KEY/g, 'EC PRIVATE KEY'),
    kEcAsRsa: ec256
      .export({ type: 'sec1', format: 'pem' })
      .toString()
      .replace(/EC PRIVATE KEY/g, 'RSA PRIVATE KEY'),
    kJunk: 'not a key',
    kEmpty: '',
    kBadB64: '-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n',
  };
  const certs: Record<string, string> = {
    cLeaf: leafPem,
    cPlain: plainPem,
    cChain: leafPem + plainPem,
    cJunkFirst: `junk\n${leafPem}`,
    cOtherType: leafPem.replace(/CERTIFICATE/g, 'X509 THING'),
    cKey: keys.kEc8!,
    cTrunc: pemOf('CERTIFICATE', Buffer.from(leafPem.split('\n').slice(1, -2).join(''), 'base64').subarray(0, 100)),
    cJunk: 'junk',
    cEmpty: '',
  };
  const data: Record<string, string> = { ...keys, ...certs };
  const cases: string[] = [];
  for (const c of Object.keys(certs)) {
    for (const k of Object.keys(keys))
      cases.push(
        `{{ $c := buildCustomCert (b64enc .${c}) (b64enc .${k}) }}{{ $c.Cert | sha256sum }}|{{ $c.Key | sha256sum }}`,
      );
  }
  cases.push(
    '{{ (buildCustomCert (b64enc .cLeaf) (b64enc .kEc8)).Cert }}',
    '{{ (buildCustomCert (b64enc .cLeaf) (b64enc .kRsa1)).Key }}',
    '{{ buildCustomCert (b64enc .cLeaf) (b64enc .kEd) }}',
    '{{ buildCustomCert (b64enc .cLeaf) (b64enc .kEd) | toJson }}',
    '{{ buildCustomCert (b64enc .cLeaf) (b64enc .kEd) | typeOf }}|{{ buildCustomCert (b64enc .cLeaf) (b64enc .kEd) | kindOf }}',
    '{{ $a := buildCustomCert (b64enc .cLeaf) (b64enc .kEd) }}{{ $b := buildCustomCert (b64enc .cLeaf) (b64enc .kEd) }}{{ eq $a $b }}|{{ deepEqual $a $b }}|{{ empty $a }}',
    '{{ (buildCustomCert (b64enc .cLeaf) (b64enc .kEd)).Nope }}',
    '{{ (buildCustomCert (b64enc .cLeaf) (b64enc .kEd)).Cert 1 }}',
    '{{ (buildCustomCert (b64enc .cLeaf) (b64enc .kEd)).cert }}',
    '{{ buildCustomCert "!!" (b64enc .kEd) }}',
    '{{ buildCustomCert (b64enc .cLeaf) "!!" }}',
    '{{ buildCustomCert "" "" }}',
    '{{ buildCustomCert (b64enc .cLeaf) }}',
    '{{ buildCustomCert 1 "x" }}',
    '{{ buildCustomCert nil "x" }}',
    '{{ b64enc .kEd | buildCustomCert (b64enc .cLeaf) | toYaml }}',
    '{{ buildCustomCert (b64enc .cLeaf | printf "%s\\n") (b64enc .kEd) | len }}',
    '{{ (buildCustomCert (b64enc .cLeaf) (b64enc .kEd)).Cert | filterPEM "CERTIFICATE" | sha256sum }}',
  );
  return { data, cases };
}
