// The Kubernetes contract suite against the in-process fake the reconciler tests use (FakeKube over the
// simulator's store), so the fake is held to the same cases as the real apiserver (test/real/contract.test.ts).
import { describeKubeContract } from './kube.contract.ts';
import { FakeKube } from '../controller/reconcilers/harness.ts';

describeKubeContract(
  'in-process fake (FakeKube)',
  () => {
    const kube = new FakeKube();
    kube.tokenFor = null;
    return Promise.resolve({ client: kube, compact: () => Promise.resolve(kube.store.compact()) });
  },
  () => Promise.resolve(),
);
