// The Vault contract suite against the simulator (always runs; the real tier runs it against OpenBao).
import { VaultSim } from '../sim/vault.ts';
import { describeVaultContract } from './vault.contract.ts';

let sim: VaultSim | undefined;

describeVaultContract(
  'simulator',
  async () => {
    sim = await VaultSim.start();
    const s = sim;
    return {
      addr: s.addr,
      rootToken: s.rootToken,
      kubernetes: { mount: 'kubernetes', jwtFor: (ns, sa) => Promise.resolve(s.jwtFor(ns, sa)) },
      seal: { seal: () => Promise.resolve(s.seal()), unseal: () => Promise.resolve(s.unseal()) },
    };
  },
  async () => {
    await sim?.stop();
  },
);
