// Last-line scrubbing for text that leaves the process as an Event note, a condition message or an error
// message. Code must still never put a secret there; this catches credentials that slip in through
// upstream error strings (e.g. a Vault or apiserver message echoing a token).
const PATTERNS: RegExp[] = [
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, // JWTs (service-account tokens)
  /\bhv[sbr]\.[A-Za-z0-9_-]{20,}/g, // Vault 1.10+ service/batch/recovery tokens
  /\b[sbr]\.[A-Za-z0-9]{24}\b/g, // legacy Vault tokens
  /(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, // Authorization header values
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

export function redactSecrets(text: string): string {
  let out = text;
  for (const re of PATTERNS) out = out.replace(re, '[REDACTED]');
  return out;
}
