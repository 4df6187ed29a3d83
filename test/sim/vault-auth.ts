// Auth methods of the Vault simulator: kubernetes (vault-plugin-auth-kubernetes path_role.go /
// path_login.go behaviour), jwt (minimal, vault-plugin-auth-jwt) and approle (minimal).
import { randomBytes, randomUUID } from 'node:crypto';
import type { JwtVerifier, SaTokenVerifier } from './vault-jwt.ts';
import {
  SimError,
  badRequest,
  dataResponse,
  globMatch,
  listChildren,
  noContent,
  noHandler,
  notFound,
  permissionDenied,
  stringList,
  ttlSeconds,
  type SimOp,
  type SimResponse,
} from './vault-engine.ts';
import type { TokenStore } from './vault-tokens.ts';

export interface AuthEngine {
  readonly type: string;
  handle(op: SimOp, rest: string, body: Record<string, unknown>, mount: string): Promise<SimResponse>;
  /** Paths served without a token (login). */
  unauthenticated(rest: string): boolean;
  exists(rest: string): boolean;
}

/** Token options common to every role (tokenutil.TokenParams). */
interface TokenParams {
  token_policies: string[];
  token_ttl: number;
  token_max_ttl: number;
}

function tokenParams(body: Record<string, unknown>, existing?: TokenParams): TokenParams {
  const policies =
    body.token_policies !== undefined
      ? stringList(body.token_policies)
      : body.policies !== undefined
        ? stringList(body.policies)
        : (existing?.token_policies ?? []);
  return {
    token_policies: policies,
    token_ttl: ttlSeconds(body.token_ttl ?? body.ttl, 'token_ttl') ?? existing?.token_ttl ?? 0,
    token_max_ttl: ttlSeconds(body.token_max_ttl ?? body.max_ttl, 'token_max_ttl') ?? existing?.token_max_ttl ?? 0,
  };
}

function tokenParamsOut(p: TokenParams): Record<string, unknown> {
  return {
    token_policies: p.token_policies,
    policies: p.token_policies,
    token_ttl: p.token_ttl,
    ttl: p.token_ttl,
    token_max_ttl: p.token_max_ttl,
    max_ttl: p.token_max_ttl,
    token_bound_cidrs: [],
    token_explicit_max_ttl: 0,
    token_no_default_policy: false,
    token_num_uses: 0,
    token_period: 0,
    period: 0,
    num_uses: 0,
    token_type: 'default',
  };
}

function split(rest: string): string[] {
  return rest.split('/');
}

interface K8sRole extends TokenParams {
  bound_service_account_names: string[];
  bound_service_account_namespaces: string[];
  audience: string;
  alias_name_source: string;
}

export class KubernetesAuthEngine implements AuthEngine {
  readonly type = 'kubernetes';
  readonly roles = new Map<string, K8sRole>();
  private config: Record<string, unknown> = {};

  constructor(
    private readonly tokens: TokenStore,
    private readonly verify: SaTokenVerifier,
  ) {}

  unauthenticated(rest: string): boolean {
    return rest === 'login';
  }

  exists(rest: string): boolean {
    const [a, name] = split(rest);
    return a === 'role' && name !== undefined && this.roles.has(name.toLowerCase());
  }

  async handle(op: SimOp, rest: string, body: Record<string, unknown>, mount: string): Promise<SimResponse> {
    const [section, name, more] = split(rest);
    if (section === 'config' && name === undefined) {
      if (op === 'read') {
        if (Object.keys(this.config).length === 0) throw notFound(); // OpenBao: 404, errors [] before any config
        const { token_reviewer_jwt: _hidden, ...shown } = this.config;
        return dataResponse({
          disable_iss_validation: true,
          disable_local_ca_jwt: false,
          issuer: '',
          kubernetes_ca_cert: '',
          pem_keys: [],
          ...shown,
        });
      }
      if (op === 'create' || op === 'update') {
        if (typeof body.kubernetes_host !== 'string' || !body.kubernetes_host) throw badRequest('no host provided');
        // As OpenBao 2.7.2 (seen in the contract): without a CA in the request it falls back to the pod's
        // service-account CA file, which does not exist outside a pod.
        if (typeof body.kubernetes_ca_cert !== 'string' || !body.kubernetes_ca_cert) {
          throw badRequest(
            body.disable_local_ca_jwt === true
              ? 'kubernetes_ca_cert must be given when disable_local_ca_jwt is true'
              : 'open /var/run/secrets/kubernetes.io/serviceaccount/ca.crt: no such file or directory',
          );
        }
        this.config = { ...body };
        return noContent();
      }
    }
    if (section === 'role' && (name === undefined || name === '') && op === 'list') {
      const keys = listChildren(this.roles.keys(), '');
      if (keys.length === 0) throw notFound();
      return dataResponse({ keys });
    }
    if (section === 'role' && name && more === undefined) return this.role(op, name.toLowerCase(), body);
    if (section === 'login' && name === undefined && (op === 'create' || op === 'update'))
      return this.login(body, mount);
    throw noHandler(`auth/${mount}/${rest}`);
  }

  private role(op: SimOp, name: string, body: Record<string, unknown>): SimResponse {
    const existing = this.roles.get(name);
    switch (op) {
      case 'read':
        if (!existing) throw notFound();
        return dataResponse({ ...tokenParamsOut(existing), ...existing, bound_service_account_namespace_selector: '' });
      case 'delete':
        this.roles.delete(name);
        return noContent();
      case 'create':
      case 'update': {
        const names =
          body.bound_service_account_names !== undefined
            ? stringList(body.bound_service_account_names)
            : (existing?.bound_service_account_names ?? []);
        const namespaces =
          body.bound_service_account_namespaces !== undefined
            ? stringList(body.bound_service_account_namespaces)
            : (existing?.bound_service_account_namespaces ?? []);
        if (names.length === 0) throw badRequest('"bound_service_account_names" can not be empty');
        if (namespaces.length === 0) throw badRequest('"bound_service_account_namespaces" can not be empty');
        if (names.length === 1 && names[0] === '*' && namespaces.length === 1 && namespaces[0] === '*') {
          throw badRequest('service_account_names and service_account_namespaces can not both be "*"');
        }
        const params = tokenParams(body, existing);
        if (params.token_max_ttl > 0 && params.token_ttl > params.token_max_ttl)
          throw badRequest('token ttl should not be greater than token max ttl');
        this.roles.set(name, {
          ...params,
          bound_service_account_names: names,
          bound_service_account_namespaces: namespaces,
          audience: typeof body.audience === 'string' ? body.audience : (existing?.audience ?? ''),
          alias_name_source:
            typeof body.alias_name_source === 'string'
              ? body.alias_name_source
              : (existing?.alias_name_source ?? 'serviceaccount_uid'),
        });
        return noContent();
      }
      default:
        throw new SimError(405, ['unsupported operation']);
    }
  }

  private async login(body: Record<string, unknown>, mount: string): Promise<SimResponse> {
    const roleName = typeof body.role === 'string' ? body.role : '';
    const jwt = typeof body.jwt === 'string' ? body.jwt : '';
    if (!roleName) throw badRequest('missing role');
    if (!jwt) throw badRequest('missing jwt');
    const role = this.roles.get(roleName.toLowerCase());
    if (!role) throw badRequest(`invalid role name "${roleName}"`);
    // TokenReview with the role's audience (none → the apiserver's default audiences).
    const sa = await this.verify(jwt, role.audience ? [role.audience] : []);
    if (!sa) throw permissionDenied();
    if (!role.bound_service_account_names.some((p) => globMatch(p, sa.name)))
      throw new SimError(403, ['service account name not authorized']);
    if (!role.bound_service_account_namespaces.some((p) => globMatch(p, sa.namespace)))
      throw new SimError(403, ['namespace not authorized']);
    const t = this.tokens.issue({
      policies: role.token_policies,
      ttl: role.token_ttl,
      maxTtl: role.token_max_ttl,
      path: `auth/${mount}/login`,
      displayName: `${mount}-${sa.namespace}-${sa.name}`,
      meta: {
        role: roleName,
        service_account_name: sa.name,
        service_account_namespace: sa.namespace,
        service_account_uid: sa.uid,
        service_account_secret_name: '',
      },
    });
    return dataResponse(null, { auth: this.tokens.authBlock(t) });
  }
}

interface JwtRole extends TokenParams {
  role_type: string;
  bound_audiences: string[];
  bound_subject: string;
  bound_claims: Record<string, unknown>;
  user_claim: string;
}

export class JwtAuthEngine implements AuthEngine {
  readonly type = 'jwt';
  readonly roles = new Map<string, JwtRole>();
  private config: Record<string, unknown> = {};

  constructor(
    private readonly tokens: TokenStore,
    private readonly verify: JwtVerifier,
  ) {}

  unauthenticated(rest: string): boolean {
    return rest === 'login';
  }

  exists(rest: string): boolean {
    const [a, name] = split(rest);
    return a === 'role' && name !== undefined && this.roles.has(name);
  }

  async handle(op: SimOp, rest: string, body: Record<string, unknown>, mount: string): Promise<SimResponse> {
    const [section, name] = split(rest);
    if (section === 'config' && name === undefined) {
      if (op === 'read') return dataResponse(this.config);
      this.config = { ...body };
      return noContent();
    }
    if (section === 'role' && !name && op === 'list') {
      const keys = listChildren(this.roles.keys(), '');
      if (keys.length === 0) throw notFound();
      return dataResponse({ keys });
    }
    if (section === 'role' && name) {
      if (op === 'read') {
        const r = this.roles.get(name);
        if (!r) throw notFound();
        return dataResponse({ ...tokenParamsOut(r), ...r });
      }
      if (op === 'delete') {
        this.roles.delete(name);
        return noContent();
      }
      const role: JwtRole = {
        ...tokenParams(body, this.roles.get(name)),
        role_type: typeof body.role_type === 'string' ? body.role_type : 'oidc',
        bound_audiences: stringList(body.bound_audiences),
        bound_subject: typeof body.bound_subject === 'string' ? body.bound_subject : '',
        bound_claims:
          body.bound_claims && typeof body.bound_claims === 'object'
            ? (body.bound_claims as Record<string, unknown>)
            : {},
        user_claim: typeof body.user_claim === 'string' ? body.user_claim : '',
      };
      if (!role.user_claim) throw badRequest('a user claim must be defined on the role');
      if (
        role.role_type === 'jwt' &&
        role.bound_audiences.length === 0 &&
        !role.bound_subject &&
        Object.keys(role.bound_claims).length === 0
      ) {
        throw badRequest('must have at least one bound constraint when creating/updating a role');
      }
      this.roles.set(name, role);
      return noContent();
    }
    if (section === 'login' && name === undefined) return this.login(body, mount);
    throw noHandler(`auth/${mount}/${rest}`);
  }

  private async login(body: Record<string, unknown>, mount: string): Promise<SimResponse> {
    const roleName =
      typeof body.role === 'string' && body.role
        ? body.role
        : typeof this.config.default_role === 'string'
          ? this.config.default_role
          : '';
    if (!roleName) throw badRequest('missing role');
    const role = this.roles.get(roleName);
    if (!role) throw badRequest(`role "${roleName}" could not be found`);
    const jwt = typeof body.jwt === 'string' ? body.jwt : '';
    if (!jwt) throw badRequest('missing token');
    const claims = await this.verify(jwt);
    if (!claims) throw badRequest('error validating token: invalid signature or expired');
    const aud = Array.isArray(claims.aud) ? claims.aud : claims.aud ? [claims.aud] : [];
    if (role.bound_audiences.length > 0 && !role.bound_audiences.some((a) => aud.includes(a))) {
      throw badRequest(
        'error validating token: invalid audience (aud) claim: audience claim does not match any expected audience',
      );
    }
    if (role.bound_subject && claims.sub !== role.bound_subject)
      throw badRequest('error validating token: invalid subject (sub) claim');
    for (const [k, want] of Object.entries(role.bound_claims)) {
      const wants = Array.isArray(want) ? want : [want];
      if (!wants.includes(claims[k]))
        throw badRequest(`error validating claims: claim "${k}" does not match any associated bound claim values`);
    }
    const user = claims[role.user_claim];
    if (typeof user !== 'string') throw badRequest(`claim "${role.user_claim}" not found in token`);
    const t = this.tokens.issue({
      policies: role.token_policies,
      ttl: role.token_ttl,
      maxTtl: role.token_max_ttl,
      path: `auth/${mount}/login`,
      displayName: `${mount}-${user}`,
      meta: { role: roleName },
    });
    return dataResponse(null, { auth: this.tokens.authBlock(t) });
  }
}

interface AppRole extends TokenParams {
  roleId: string;
  secretIds: Set<string>;
}

export class AppRoleAuthEngine implements AuthEngine {
  readonly type = 'approle';
  readonly roles = new Map<string, AppRole>();

  constructor(private readonly tokens: TokenStore) {}

  unauthenticated(rest: string): boolean {
    return rest === 'login';
  }

  exists(rest: string): boolean {
    const [a, name] = split(rest);
    return a === 'role' && name !== undefined && this.roles.has(name);
  }

  handle(op: SimOp, rest: string, body: Record<string, unknown>, mount: string): Promise<SimResponse> {
    return Promise.resolve(this.route(op, rest, body, mount));
  }

  private route(op: SimOp, rest: string, body: Record<string, unknown>, mount: string): SimResponse {
    const [section, name, sub] = split(rest);
    if (section === 'role' && !name && op === 'list') {
      const keys = listChildren(this.roles.keys(), '');
      if (keys.length === 0) throw notFound();
      return dataResponse({ keys });
    }
    if (section === 'role' && name) {
      const r = this.roles.get(name);
      if (sub === 'role-id' && op === 'read') {
        if (!r) throw badRequest(`role "${name}" does not exist`);
        return dataResponse({ role_id: r.roleId });
      }
      if (sub === 'secret-id' && (op === 'create' || op === 'update')) {
        if (!r) throw badRequest(`role "${name}" does not exist`);
        const secretId = randomUUID();
        r.secretIds.add(secretId);
        return dataResponse({
          secret_id: secretId,
          secret_id_accessor: randomBytes(8).toString('hex'),
          secret_id_ttl: 0,
          secret_id_num_uses: 0,
        });
      }
      if (sub === undefined) {
        if (op === 'read') {
          if (!r) throw notFound();
          return dataResponse({ ...tokenParamsOut(r), bind_secret_id: true, secret_id_ttl: 0, secret_id_num_uses: 0 });
        }
        if (op === 'delete') {
          this.roles.delete(name);
          return noContent();
        }
        this.roles.set(name, {
          ...tokenParams(body, r),
          roleId: r?.roleId ?? randomUUID(),
          secretIds: r?.secretIds ?? new Set(),
        });
        return noContent();
      }
    }
    if (section === 'login' && name === undefined) {
      const roleId = typeof body.role_id === 'string' ? body.role_id : '';
      if (!roleId) throw badRequest('missing role_id');
      const role = [...this.roles.values()].find((x) => x.roleId === roleId);
      if (!role) throw badRequest('invalid role ID');
      if (typeof body.secret_id !== 'string' || !role.secretIds.has(body.secret_id))
        throw badRequest('invalid secret id');
      const t = this.tokens.issue({
        policies: role.token_policies,
        ttl: role.token_ttl,
        maxTtl: role.token_max_ttl,
        path: `auth/${mount}/login`,
        displayName: mount,
      });
      return dataResponse(null, { auth: this.tokens.authBlock(t) });
    }
    throw noHandler(`auth/${mount}/${rest}`);
  }
}
