// The vaultgate kinds' admission handlers (ESO kinds register from webhook/rules/eso/index.ts).
import type { KindHandler } from '../admission/kinds.ts';
import { vaultPolicyHandler } from './vaultpolicy.ts';
import { vaultRoleBindingHandler } from './vaultrolebinding.ts';
import { vaultGuardrailHandler } from './vaultguardrail.ts';
import { vaultDynamicSecretAccessHandler } from './vaultdynamicsecret-access.ts';

export const vaultgateHandlers: KindHandler[] = [
  vaultPolicyHandler,
  vaultRoleBindingHandler,
  vaultGuardrailHandler,
  // VaultDynamicSecret's own rules plus the access rules over the store's Vault identity
  vaultDynamicSecretAccessHandler,
];
