// The one rule for Vault paths a tenant controls (ExternalSecret keys and find.path, PushSecret remote
// keys, a store's mount path, VaultPolicy paths in rules and raw HCL) and for every path the Vault adapter
// sends: each segment must name itself. A `.` or `..` segment is resolved by the HTTP client (and by any
// proxy) before Vault sees the request, so `team-a/../team-b/db` passes a prefix check on `team-a/` and
// then reaches team-b's secret; an empty segment (`a//b`) is collapsed the same way. Percent-encoded
// characters (`%2e%2e` is `..` to a URL parser), a backslash (a separator to WHATWG URL parsers), `?` and
// `#` (they end the path) and control characters would make the request name another path than the one
// that was checked, so they are refused too. Admission (webhook/rules), the controller's re-check
// (controller/reconcilers) and the adapter (vault/client.ts, on the path exactly as it is sent) all call
// this function. Pure; the lowest layer that may hold it is the Vault adapter, which every other caller
// sits above.

export interface VaultPathProblem {
  /** Stable sub-rule: `dot-segment`, `empty-segment` or `url-character`. */
  code: 'dot-segment' | 'empty-segment' | 'url-character';
  message: string;
}

const URL_CHARACTER = /[\\?#\x00-\x1f\x7f]|%[0-9A-Fa-f]{2}/;

/**
 * What makes `path` reach another path than it names, or [] when nothing does. Leading slashes (the
 * adapter and ESO's key resolution strip them) and one trailing slash (a listing prefix) are tolerated;
 * `allowTrailingGlob` lets a policy pattern end in `*` (`secret/data/app/*`).
 */
export function vaultPathProblems(path: string, opts: { allowTrailingGlob?: boolean } = {}): VaultPathProblem[] {
  // Most paths are plain segments: nothing below can fire on them.
  if (PLAIN.test(path)) return [];
  const out: VaultPathProblem[] = [];
  let body = path.replace(/^\/+/, '');
  if (opts.allowTrailingGlob && body.endsWith('*')) body = body.slice(0, -1);
  if (body.endsWith('/')) body = body.slice(0, -1);
  const segments = body === '' ? [] : body.split('/');
  if (segments.some((s) => s === '.' || s === '..')) {
    out.push({
      code: 'dot-segment',
      message: `${JSON.stringify(path)} has a "." or ".." segment, which would be resolved to another path before Vault sees it; write the path itself`,
    });
  }
  if (segments.some((s) => s === '')) {
    out.push({
      code: 'empty-segment',
      message: `${JSON.stringify(path)} has an empty segment ("//"), which would be collapsed to another path before Vault sees it`,
    });
  }
  if (URL_CHARACTER.test(path)) {
    out.push({
      code: 'url-character',
      message: `${JSON.stringify(path)} contains a percent-encoded character, a backslash, "?", "#" or a control character, which would change the path a request names; write each character itself`,
    });
  }
  return out;
}

/** Segments of letters, digits, `_`, `-`, and dots inside a segment (never a whole `.`/`..` segment). */
const PLAIN = /^(?:(?!\.\.?(?:\/|$))[A-Za-z0-9_.+-]+\/)*(?!\.\.?\/?$)[A-Za-z0-9_.+-]+\/?$/;
