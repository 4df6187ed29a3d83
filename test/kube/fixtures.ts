// Shared by the kube controller tests: a VaultPolicy object to reconcile, and a poll until a condition holds.
import type { KubeObject } from '../../kube/objects.ts';

export const vp = (name: string): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default' },
  spec: { policy: 'p' },
});

/** Polls every 5 ms until `cond` holds; throws naming `what` after 10 s. */
export async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
