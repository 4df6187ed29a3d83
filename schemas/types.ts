// Friendly names for the generated types (schemas/types.generated.ts comes from the JSON Schemas).
export type * from './types.generated.ts';
export type {
  VaultPolicy,
  VaultPolicySpec,
  VaultPolicyRule,
  VaultPolicyStatus,
  VaultRoleBinding,
  VaultRoleBindingSpec,
  VaultRoleBindingStatus,
  VaultGuardrail,
  VaultGuardrailSpec,
  VaultGuardrailStatus,
  Condition,
  LabelSelector,
  LabelSelectorRequirement,
  ObjectMeta,
} from './types.generated.ts';

import type { VaultPolicyRule } from './types.generated.ts';
export type Capability = VaultPolicyRule['capabilities'][number];
export type GuardrailMode = 'enforce' | 'warn' | 'audit';
