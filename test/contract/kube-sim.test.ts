// The Kubernetes contract suite against the simulator.
import { describeKubeContract } from './kube.contract.ts';
import { KubeSim } from '../sim/kube.ts';

let sim: KubeSim | undefined;
describeKubeContract(
  'simulator',
  async () => {
    sim = await KubeSim.start();
    return { kubeconfig: sim.kubeConfig(), compact: () => Promise.resolve(sim!.compact()) };
  },
  async () => {
    await sim?.close();
  },
);
