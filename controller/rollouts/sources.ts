// The objects that name workloads to restart: ExternalSecrets opt in with an annotation
// (eso/rollout-targets.ts), VaultDynamicSecrets list spec.rolloutRestartTargets.
import type { KubeObject } from '../../kube/objects.ts';
import { EXTERNAL_SECRETS, VAULT_DYNAMIC_SECRETS } from '../../schemas/resources.ts';
import { workloadKind, workloadNameProblem } from '../../kube/workloads.ts';
import { externalSecretRolloutTargets } from '../../eso/rollout-targets.ts';
import type { RolloutSource } from './coordinator.ts';

type ExternalSecretShape = KubeObject & { spec?: { target?: { name?: string; creationPolicy?: string } } };

/** An ExternalSecret's opted-in targets and its target Secret (none with creationPolicy None: it writes nothing). */
export const externalSecretSource: RolloutSource = {
  resource: EXTERNAL_SECRETS,
  // An unreadable list names nothing (admission refuses it; the controller does not guess).
  targets: (o) => {
    const parsed = externalSecretRolloutTargets(o);
    return parsed.problems.length > 0 ? [] : parsed.refs;
  },
  secretName: (o) => {
    const target = (o as ExternalSecretShape).spec?.target;
    return target?.creationPolicy === 'None' ? undefined : (target?.name ?? o.metadata.name);
  },
  // Every target an ExternalSecret writes carries the managed label the Secret informer selects.
  cachedSecrets: true,
};

type VaultDynamicSecretShape = KubeObject & {
  spec?: { target?: { name?: string }; rolloutRestartTargets?: { kind?: string; name?: string }[] };
};

/** A VaultDynamicSecret's spec.rolloutRestartTargets (admitted: same namespace, these kinds) and its target Secret. */
export const vaultDynamicSecretSource: RolloutSource = {
  resource: VAULT_DYNAMIC_SECRETS,
  targets: (o) =>
    ((o as VaultDynamicSecretShape).spec?.rolloutRestartTargets ?? []).flatMap((t) => {
      const kind = workloadKind(t.kind ?? '');
      return kind && typeof t.name === 'string' && !workloadNameProblem(t.name) ? [{ kind, name: t.name }] : [];
    }),
  secretName: (o) => (o as VaultDynamicSecretShape).spec?.target?.name ?? o.metadata.name,
  // Its Secrets carry the managed label too; one not cached yet is read with a GET.
  cachedSecrets: false,
};
