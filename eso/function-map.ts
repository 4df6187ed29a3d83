// The one list of template functions: what ESO v0.16.2's engine v2 registers (pkg/template/v2
// template.go: Go's builtins, Sprig's TxtFuncMap minus env/expandenv, ESO's own functions), which of
// them vaultgate renders (the function tables below), and, for every one it does not, why. Admission
// (checkTemplate) and the controller's engine, both in template.ts, read this file,
// so they cannot disagree; the README's ESO section lists the same.
import type { GoFunc } from '../golang/index.ts';
import { ESO_OWN_FUNCS } from './own-functions.ts';
import { GO_BUILTINS } from '../golang/template/index.ts';
import { SPRIG_FUNCS } from '../golang/sprig/index.ts';

const NONDETERMINISTIC =
  'its output changes on every render (clock, randomness or a random salt/IV), so the Secret would be rewritten on every refresh and never converge';

/** Functions ESO registers that vaultgate refuses, each with the reason admission gives. */
export const REFUSED_TEMPLATE_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  [
    'getHostByName',
    'it makes a DNS lookup from the controller: a template must not reach the network, and the answer changes',
  ],
  ...[
    'now',
    'ago',
    'randAlphaNum',
    'randAlpha',
    'randAscii',
    'randNumeric',
    'randInt',
    'randBytes',
    'uuidv4',
    'shuffle',
    'bcrypt',
    'htpasswd',
    'genPrivateKey',
    'genCA',
    'genCAWithKey',
    'genSelfSignedCert',
    'genSelfSignedCertWithKey',
    'genSignedCert',
    'genSignedCertWithKey',
    'encryptAES',
    'pemToPkcs12',
    'pemToPkcs12Pass',
    'fullPemToPkcs12',
    'fullPemToPkcs12Pass',
  ].map((f): [string, string] => [f, NONDETERMINISTIC]),
]);

/** Functions ESO itself removes from Sprig's map: a template using them fails to parse in ESO too. */
export const ESO_REMOVED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['env', "ESO removes it from Sprig's functions: a template must not read the controller's environment"],
  ['expandenv', "ESO removes it from Sprig's functions: a template must not read the controller's environment"],
  [
    'getSecretKey',
    "ESO removed it (it read Secrets through the Kubernetes API, across namespaces): a template reads only the ExternalSecret's own data",
  ],
]);

/** Every function vaultgate renders, by name, with its Go signature. */
export const TEMPLATE_FUNCTIONS: ReadonlyMap<string, GoFunc> = new Map(
  Object.entries({ ...GO_BUILTINS, ...SPRIG_FUNCS, ...ESO_OWN_FUNCS }).filter(
    ([name]) => !REFUSED_TEMPLATE_FUNCTIONS.has(name),
  ),
);

/** and/or are part of Go's grammar of calls (evaluated lazily by the executor), not table entries. */
export const LAZY_BUILTINS: readonly string[] = ['and', 'or'];

export const SUPPORTED_TEMPLATE_FUNCTIONS: readonly string[] = [...LAZY_BUILTINS, ...TEMPLATE_FUNCTIONS.keys()].sort();

/** Every keyword of Go's text/template grammar: all supported. */
export const GO_TEMPLATE_KEYWORDS: readonly string[] = [
  'if',
  'else',
  'end',
  'range',
  'with',
  'define',
  'template',
  'block',
  'break',
  'continue',
];
export const SUPPORTED_TEMPLATE_KEYWORDS: readonly string[] = GO_TEMPLATE_KEYWORDS;

const supported = new Set(SUPPORTED_TEMPLATE_FUNCTIONS);

export function isSupportedTemplateFunction(name: string): boolean {
  return supported.has(name);
}

/** Whether Go's parser, given ESO's function map, knows the name (refused or not). */
export function isEsoTemplateFunction(name: string): boolean {
  return supported.has(name) || REFUSED_TEMPLATE_FUNCTIONS.has(name);
}

export function isSupportedTemplateKeyword(name: string): boolean {
  return GO_TEMPLATE_KEYWORDS.includes(name);
}

/** Why a function is not rendered (undefined if it is). */
export function refusalReason(name: string): string | undefined {
  if (supported.has(name)) return undefined;
  return (
    REFUSED_TEMPLATE_FUNCTIONS.get(name) ??
    ESO_REMOVED_FUNCTIONS.get(name) ??
    "it is not a function of ESO's template engine v2 (Go text/template, Sprig, ESO's own)"
  );
}
