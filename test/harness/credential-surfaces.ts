// Where a credential a VaultDynamicSecret holds must never show: what a user reads of the object (its
// status) and of its namespace (Events), and what an operator reads of the controller (its log, which
// every controller process of an E2E stack appends to, and its metrics). The texts, by where, for
// rollout-checks.ts's assertNoSecretIn.
import type { ControllerHandle } from './e2e-processes.ts';
import type { E2EStack } from './e2e-stack.ts';
import { readFileSync } from 'node:fs';

export interface CredentialSurfaces extends Record<string, string> {
  status: string;
  events: string;
  'controller log': string;
  metrics: string;
}

export async function credentialSurfaces(
  stack: E2EStack,
  o: { namespace: string; objectPath: string; controller: ControllerHandle },
): Promise<CredentialSurfaces> {
  return {
    status: JSON.stringify((await stack.cp.request('GET', o.objectPath)).body),
    events: (await stack.cp.request('GET', `/api/v1/namespaces/${o.namespace}/events`)).text,
    'controller log': readFileSync(o.controller.logPath, 'utf8'),
    metrics: await (await fetch(`${o.controller.metricsUrl}/metrics`)).text(),
  };
}
