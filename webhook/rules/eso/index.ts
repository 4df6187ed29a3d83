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
import { esoKindHandler } from './handler.ts';
import { isOurClass, namespaceOf, obj, str } from './access.ts';
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
export { isOurClass } from './access.ts';

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

function storeHandler(kind: StoreKind): KindHandler {
  return esoKindHandler({ group: ESO_GROUP, version: ESO_VERSION, kind }, (o, ctx, req) =>
    isOurClass(str(obj(o.spec)?.controller), ctx.controllerClass)
      ? validateStore(kind, o, kind === 'SecretStore' ? namespaceOf(o, req) : undefined, ctx)
      : undefined,
  );
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

/** The handler of an ESO kind that carries templates: their total text is size-limited. */
function templatedHandler(
  kind: 'ExternalSecret' | 'ClusterExternalSecret' | 'PushSecret',
  version: string,
  rules: (o: KubeObject, ctx: EsoAdmissionContext, req: AdmissionRequest) => Finding[] | undefined,
): KindHandler {
  return esoKindHandler({ group: ESO_GROUP, version, kind }, rules, (o) => templateSizeFindings(kind, o));
}

const externalSecretHandler = templatedHandler('ExternalSecret', ESO_VERSION, (o, ctx, req) =>
  storeOfAnotherClass(obj(obj(o.spec)?.secretStoreRef), ctx, namespaceOf(o, req))
    ? undefined
    : validateExternalSecret(o),
);

/**
 * A ClusterExternalSecret has no class either; one whose ExternalSecrets read a ClusterSecretStore of
 * another class is that controller's (its SecretStores are per namespace: the controller decides there).
 */
const clusterExternalSecretHandler = templatedHandler('ClusterExternalSecret', ESO_VERSION, (o, ctx) =>
  storeOfAnotherClass(obj(obj(obj(o.spec)?.externalSecretSpec)?.secretStoreRef), ctx)
    ? undefined
    : validateClusterExternalSecret(o),
);

/** A PushSecret whose stores are all another controller's (named ones only) is that controller's. */
const pushSecretHandler = templatedHandler('PushSecret', ESO_PUSH_VERSION, (o, ctx, req) => {
  const refs = (Array.isArray(obj(o.spec)?.secretStoreRefs) ? (obj(o.spec)?.secretStoreRefs as unknown[]) : []).map(
    (r) => obj(r),
  );
  if (refs.length > 0 && refs.every((r) => storeOfAnotherClass(r, ctx, namespaceOf(o, req)))) return undefined;
  return validatePushSecret(o);
});

export const esoHandlers: KindHandler[] = [
  storeHandler('SecretStore'),
  storeHandler('ClusterSecretStore'),
  externalSecretHandler,
  clusterExternalSecretHandler,
  pushSecretHandler,
  ...generatorHandlers,
];
