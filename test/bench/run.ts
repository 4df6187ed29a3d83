// `npm run bench`: prints every benchmark's figures. Timing lives here, never in tests.
import { benchWebhook } from './webhook.ts';

function print(title: string, figures: Record<string, number | string>): void {
  console.log(`\n== ${title}`);
  const width = Math.max(...Object.keys(figures).map((k) => k.length));
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(width)}  ${v}`);
}

const only = process.argv[2];
if (!only || only === 'webhook') {
  print('admission webhook (20-rule VaultPolicy CREATE, HTTPS keep-alive, 16 connections)', await benchWebhook());
}
if (!only || only === 'controller') {
  const mod = await import('./controller.ts').catch(() => undefined) as { benchController?: () => Promise<Record<string, number | string>> } | undefined;
  if (mod?.benchController) print('controller (1,000 ExternalSecrets over 100 Vault paths)', await mod.benchController());
  else console.log('\n== controller: benchmark not available yet');
}
