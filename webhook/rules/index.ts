// The vaultgate kinds' admission handlers (ESO kinds register from webhook/rules/eso/index.ts).
import type { KindHandler } from '../admission/kinds.ts';
import { vaultPolicyHandler } from './vaultpolicy.ts';
import { vaultRoleBindingHandler } from './vaultrolebinding.ts';
import { vaultGuardrailHandler } from './vaultguardrail.ts';
import { vaultDynamicSecretHandler } from './vaultdynamicsecret.ts';

export const vaultgateHandlers: KindHandler[] = [
  vaultPolicyHandler,
  vaultRoleBindingHandler,
  vaultGuardrailHandler,
  vaultDynamicSecretHandler,
];
