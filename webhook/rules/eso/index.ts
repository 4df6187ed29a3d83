// Admission handlers for the ESO-compatible kinds (external-secrets.io/v1, Vault provider only).
// Registered by the admission core's kind registry (webhook/admission/kinds.ts).
//
// Controller class, as ESO's ShouldProcessStore: a store whose spec.controller is empty belongs to
// every controller, one naming another class is not ours and is admitted untouched. ExternalSecrets
// have no class of their own; they follow their store's. To coexist with an installed ESO, give every
// store a class (ESO's or vaultgate's `--controller-class`).
//
// Findings: the schema's (schemas/*.schema.json, as the CRD) plus the semantic rules; a schema finding
// on a field a rule already explains is dropped. Ratcheting, as Kubernetes does for CRD validation: an
// UPDATE that leaves spec unchanged (labels, finalizers) or touches an object being deleted only warns,
// so an object stored before vaultgate (or while its webhook was down) never becomes stuck (ESO #2015).
// No mutation: ESO has no mutating webhook and every ESO default is expressible in the CRD schema.
import type { AdmissionContext } from '../../admission/context.ts';
import type { Finding, KindHandler, KubeObject } from '../../admission/kinds.ts';
import type { AdmissionRequest } from '../../admission/types.ts';
import { ESO_GROUP, ESO_PUSH_VERSION, ESO_VERSION } from '../../../schemas/eso-kinds.ts';
import { ratchet, withoutShadowedSchemaFindings } from '../finding.ts';
import { schemaFindings } from '../schema.ts';
import { obj, str } from './access.ts';
import { validateExternalSecret } from './externalsecret-rules.ts';
import { validateClusterExternalSecret } from './clusterexternalsecret-rules.ts';
import { validatePushSecret } from './pushsecret-rules.ts';
import { type StoreKind, validateStore } from './store-rules.ts';
import { templateSizeFindings } from './template-size.ts';
import { generatorHandlers } from './generator-handlers.ts';

export { validateExternalSecret, EXTERNALSECRET_FEATURES_NOT_SUPPORTED } from './externalsecret-rules.ts';
export { validateClusterExternalSecret } from './clusterexternalsecret-rules.ts';
export { validatePushSecret, PUSHSECRET_FEATURES_NOT_SUPPORTED } from './pushsecret-rules.ts';
export {
  validateStore,
  STORE_FEATURES_NOT_SUPPORTED,
  SUPPORTED_AUTH_METHODS,
  ESO_AUTH_ORDER,
  type StoreKind,
} from './store-rules.ts';
export { SUPPORTED_TEMPLATE_FUNCTIONS, SUPPORTED_TEMPLATE_KEYWORDS } from '../../../eso/function-map.ts';
export { checkTemplate } from '../../../eso/template.ts';
export { lexTemplate } from '../../../golang/template/index.ts';
export { MAX_TEMPLATE_TEXT, templateSizeFindings } from './template-size.ts';
export { parseGoDuration } from '../../../golang/index.ts';
export { ratchet } from '../finding.ts';

export interface StoreReference {
  kind: StoreKind;
  name: string;
  /** The ExternalSecret's namespace for a SecretStore; undefined for a ClusterSecretStore. */
  namespace?: string;
}

/**
 * What the ESO handlers may additionally know. `storeControllerClass` (optional, from the informer
 * cache) tells the class of an ExternalSecret's store: undefined when the store is unknown, which is
 * treated as ours (the store may simply be created later in the same apply).
 */
export interface EsoAdmissionContext extends AdmissionContext {
  storeControllerClass?(ref: StoreReference): string | undefined;
}

/** ESO's rule: an empty class is every controller's; otherwise the classes must be equal. */
export function isOurClass(objectClass: string | undefined, ourClass: string): boolean {
  return !objectClass || objectClass === ourClass;
}

function namespaceOf(o: KubeObject, req: AdmissionRequest): string | undefined {
  return str(obj(o.metadata)?.namespace) || req.namespace || undefined;
}

function storeHandler(kind: StoreKind): KindHandler {
  return {
    group: ESO_GROUP,
    version: ESO_VERSION,
    kind,
    tolerate: ratchet,
    validate(o: KubeObject, old: KubeObject | undefined, ctx: AdmissionContext, req: AdmissionRequest): Finding[] {
      if (!isOurClass(str(obj(o.spec)?.controller), ctx.controllerClass)) return [];
      const semantic = validateStore(kind, o, kind === 'SecretStore' ? namespaceOf(o, req) : undefined, ctx);
      return ratchet(withoutShadowedSchemaFindings(schemaFindings(o), semantic), o, old);
    },
  };
}

/**
 * Whether `ref` names a store (known to the admission cache) of another controller class: the object is
 * then that controller's to judge. Without `namespace` (a ClusterExternalSecret) only a ClusterSecretStore
 * can tell: SecretStores are per namespace, and the controller decides there.
 */
function storeOfAnotherClass(
  ref: Record<string, unknown> | undefined,
  ctx: EsoAdmissionContext,
  namespace?: string,
): boolean {
  const name = str(ref?.name);
  if (!name || !ctx.storeControllerClass) return false;
  const kind: StoreKind = ref?.kind === 'ClusterSecretStore' ? 'ClusterSecretStore' : 'SecretStore';
  if (kind === 'SecretStore' && namespace === undefined) return false;
  const storeClass = ctx.storeControllerClass({ kind, name, ...(kind === 'SecretStore' ? { namespace } : {}) });
  return storeClass !== undefined && !isOurClass(storeClass, ctx.controllerClass);
}

const externalSecretHandler: KindHandler = {
  group: ESO_GROUP,
  version: ESO_VERSION,
  kind: 'ExternalSecret',
  limits: (o) => templateSizeFindings('ExternalSecret', o),
  tolerate: ratchet,
  validate(o: KubeObject, old: KubeObject | undefined, ctx: EsoAdmissionContext, req: AdmissionRequest): Finding[] {
    if (storeOfAnotherClass(obj(obj(o.spec)?.secretStoreRef), ctx, namespaceOf(o, req))) return [];
    return ratchet(withoutShadowedSchemaFindings(schemaFindings(o), validateExternalSecret(o)), o, old);
  },
};

/**
 * A ClusterExternalSecret has no class either; one whose ExternalSecrets read a ClusterSecretStore of
 * another class is that controller's (its SecretStores are per namespace: the controller decides there).
 */
const clusterExternalSecretHandler: KindHandler = {
  group: ESO_GROUP,
  version: ESO_VERSION,
  kind: 'ClusterExternalSecret',
  limits: (o) => templateSizeFindings('ClusterExternalSecret', o),
  tolerate: ratchet,
  validate(o: KubeObject, old: KubeObject | undefined, ctx: EsoAdmissionContext): Finding[] {
    if (storeOfAnotherClass(obj(obj(obj(o.spec)?.externalSecretSpec)?.secretStoreRef), ctx)) return [];
    return ratchet(withoutShadowedSchemaFindings(schemaFindings(o), validateClusterExternalSecret(o)), o, old);
  },
};

/** A PushSecret whose stores are all another controller's (named ones only) is that controller's. */
const pushSecretHandler: KindHandler = {
  group: ESO_GROUP,
  version: ESO_PUSH_VERSION,
  kind: 'PushSecret',
  limits: (o) => templateSizeFindings('PushSecret', o),
  tolerate: ratchet,
  validate(o: KubeObject, old: KubeObject | undefined, ctx: EsoAdmissionContext, req: AdmissionRequest): Finding[] {
    const refs = (Array.isArray(obj(o.spec)?.secretStoreRefs) ? (obj(o.spec)?.secretStoreRefs as unknown[]) : []).map(
      (r) => obj(r),
    );
    if (refs.length > 0 && refs.every((r) => storeOfAnotherClass(r, ctx, namespaceOf(o, req)))) return [];
    return ratchet(withoutShadowedSchemaFindings(schemaFindings(o), validatePushSecret(o)), o, old);
  },
};

export const esoHandlers: KindHandler[] = [
  storeHandler('SecretStore'),
  storeHandler('ClusterSecretStore'),
  externalSecretHandler,
  clusterExternalSecretHandler,
  pushSecretHandler,
  ...generatorHandlers,
];
