// Which Vault servers a secret store may name. The controller sends a ServiceAccount token (minted by
// a TokenRequest for the store's ServiceAccount) to spec.provider.vault.server, and the tenant writes
// that field: unchecked, a SecretStore is a token oracle (any SA of the namespace, delivered to any
// host) and a way to make the controller pod call any URL. So the server must be one the cluster admin
// allowed: the cluster default (the chart passes vault.address) plus what enforce guardrails selecting
// the store's namespace add (`spec.allowedVaultServers`). With neither configured, any server is allowed
// (offline `vaultgate validate`, and installs that have not set one: the README says to set it).
// Admission checks it (rule eso.store.vault-server) and the controller checks it again before it mints a
// token or sends a request (controller/reconcilers/store-connector.ts).
import type { AdmissionContext } from '../../admission/context.ts';
import { matchingGuardrails } from '../guardrails.ts';

/**
 * A server is `scheme://host[:port]`, optionally with one trailing `/`: nothing the client would send as
 * part of every request's path (`/v1/secret/data/team-b/db?x=` makes every read go where the tenant
 * chose), no user info, no query, no fragment, no backslash (a separator to URL parsers). Host: a DNS
 * name, an IPv4 address or a bracketed IPv6 address.
 */
const SERVER_SYNTAX =
  /^https?:\/\/(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?\/?$/i;

/** Why `server` is not `scheme://host[:port]`, or undefined when it is. The value is not quoted: user info may hold a password. */
export function vaultServerSyntaxProblem(server: string): string | undefined {
  if (SERVER_SYNTAX.test(server) && vaultOrigin(server) !== undefined) return undefined;
  return 'must be scheme://host[:port] (http or https, e.g. "https://vault.example:8200"), optionally ending in "/": no path, query ("?"), fragment ("#"), user info ("@") or backslash';
}

/** scheme://host:port with the default port made explicit; undefined when not an http(s) URL. */
export function vaultOrigin(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  return `${u.protocol}//${u.hostname.toLowerCase()}:${port}`;
}

/** The origins a store in `namespace` (undefined: a ClusterSecretStore) may use; undefined = unrestricted. */
export function allowedVaultServers(namespace: string | undefined, ctx: AdmissionContext): string[] | undefined {
  const fromGuardrails =
    namespace === undefined
      ? []
      : matchingGuardrails(namespace, ctx)
          .filter((g) => g.mode === 'enforce')
          .flatMap((g) => g.allowedVaultServers ?? []);
  const all = [...(ctx.vaultServers ?? []), ...fromGuardrails];
  if (all.length === 0) return undefined;
  return [...new Set(all.map((s) => vaultOrigin(s) ?? s))];
}

/** Why `server` may not be used by a store in `namespace`, or undefined when it may. */
export function vaultServerProblem(
  server: string,
  namespace: string | undefined,
  ctx: AdmissionContext,
): string | undefined {
  const allowed = allowedVaultServers(namespace, ctx);
  if (!allowed) return undefined;
  const origin = vaultOrigin(server);
  if (origin && allowed.includes(origin)) return undefined;
  return `Vault server ${JSON.stringify(server)} is not one this cluster allows (${allowed.join(', ')}): the controller sends ServiceAccount tokens to this address. A cluster admin allows more with an enforce VaultGuardrail's spec.allowedVaultServers, or the controller's and webhook's --allowed-vault-server`;
}
