// Admission handlers for ESO's generators (generators.external-secrets.io/v1alpha1), registered with the
// ESO handlers (index.ts). A generator naming another controller class (spec.controller) is admitted
// untouched, as a store of another class is. Findings: the schema's plus generator-rules.ts', ratcheted.
import type { AdmissionContext } from '../../admission/context.ts';
import type { Finding, KindHandler, KubeObject } from '../../admission/kinds.ts';
import type { AdmissionRequest } from '../../admission/types.ts';
import { GENERATOR_GROUP, GENERATOR_VERSION } from '../../../schemas/generator-kinds.ts';
import { esoKindHandler } from './handler.ts';
import { isOurClass, namespaceOf, obj, str } from './access.ts';
import { validateClusterGenerator, validatePasswordSpec, validateVaultGeneratorSpec } from './generator-rules.ts';

const ofOurClass = (spec: Record<string, unknown> | undefined, ctx: AdmissionContext): boolean =>
  isOurClass(str(spec?.controller), ctx.controllerClass);

const handler = (
  kind: string,
  rules: (o: KubeObject, ctx: AdmissionContext, req: AdmissionRequest) => Finding[],
): KindHandler => esoKindHandler({ group: GENERATOR_GROUP, version: GENERATOR_VERSION, kind }, rules);

export const generatorHandlers: KindHandler[] = [
  handler('Password', (o) => validatePasswordSpec(obj(o.spec))),
  handler('VaultDynamicSecret', (o, ctx, req) => {
    const spec = obj(o.spec);
    if (!ofOurClass(spec, ctx)) return [];
    return validateVaultGeneratorSpec(spec, namespaceOf(o, req), ctx);
  }),
  handler('ClusterGenerator', (o, ctx) =>
    ofOurClass(obj(obj(obj(o.spec)?.generator)?.vaultDynamicSecretSpec), ctx) ? validateClusterGenerator(o, ctx) : [],
  ),
];
