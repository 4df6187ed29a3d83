// `npm run bench`: prints every benchmark's figures. Timing lives here, never in tests.
import { benchWebhook } from './webhook.ts';

function print(title: string, figures: Record<string, number | string>): void {
  console.log(`\n== ${title}`);
  const width = Math.max(...Object.keys(figures).map((k) => k.length));
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(width)}  ${v}`);
}

const only = process.argv[2];
// The peer benchmark (ESO and vaultgate on real servers, 1,000 and 10,000 ExternalSecrets) takes most of
// an hour: only when named, `npm run bench -- peer`.
if (only === 'peer') {
  const peer = await import('./peer.ts');
  const one = process.env.BENCH_PEER_ONLY;
  console.log(
    one === 'admission'
      ? await peer.benchPeerAdmission()
      : one === 'storm'
        ? await peer.benchPeerStorm()
        : one === 'memory'
          ? await peer.benchPeerMemory()
          : one === 'idle'
            ? await peer.benchPeerIdle()
            : one
              ? await peer.benchPeerOne(one as 'vaultgate')
              : await peer.benchPeer(),
  );
}
// The credential lifecycle under ESO's generator and vaultgate (about 25 minutes): only when named.
if (only === 'lifecycle') {
  const { benchLifecycle } = await import('./lifecycle.ts');
  console.log(await benchLifecycle());
}
if (!only || only === 'webhook') {
  print('admission webhook (20-rule VaultPolicy CREATE, HTTPS keep-alive, 16 connections)', await benchWebhook());
  const { benchWebhookMaxSize } = await import('./webhook-max-size.ts');
  print(
    'admission webhook: maximum-size reviews (7 MiB raw HCL / ESO templates) in flight, answer time against the 5 s webhook timeout',
    await benchWebhookMaxSize(),
  );
}
if (!only || only === 'render') {
  const { benchRender } = await import('./render.ts');
  print(
    'template rendering: in process vs the render pool of worker threads (per render; issue #20)',
    await benchRender(),
  );
}
if (only === 'memory') {
  const { benchMemory } = await import('./memory.ts');
  print(
    'memory per cached object: each kind through the informer at two sizes, heap after GC, per cut of the cache transform (issue #24)',
    await benchMemory(),
  );
}
if (only === 'storm') {
  const { benchStorm } = await import('./storm.ts');
  print(
    'refresh storm, SIMULATORS: a new ExternalSecret while every other one is force-synced (issue #24)',
    await benchStorm(),
  );
}
if (!only || only === 'controller') {
  const { benchController } = await import('./controller.ts');
  const real = await benchController();
  print('controller on the real kube-apiserver and OpenBao (1,000 ExternalSecrets over 100 Vault paths)', real);
  const { benchControllerSim } = await import('./controller-sim.ts');
  const sim = await benchControllerSim();
  print('controller, EXTRA ROWS on SIMULATORS (in-process Kubernetes store + Vault simulator, not real servers)', sim);
  const ratio = (a: unknown, b: unknown): string => (Number(b) > 0 ? (Number(a) / Number(b)).toFixed(2) : 'n/a');
  print('controller: real servers vs simulators, same run (ratio real / simulator)', {
    time_until_all_secrets: ratio(real.initial_all_secrets_correct_ms, sim.initial_sync_all_secrets_ms),
    initial_vault_kv_reads: ratio(real.initial_vault_kv_read, sim.initial_vault_reads),
    initial_vault_logins: ratio(real.initial_vault_logins_ok, sim.initial_vault_logins),
    vault_kv_reads_per_refresh: ratio(
      Number(real.refresh_vault_kv_reads_per_100_refreshes) / 100,
      Number(sim.refresh_cycle_vault_reads) / Number(sim.external_secrets),
    ),
  });
}
