// Product modules without a unit test of their name (test/static/module-tests.test.ts), each with its reason.
// "tested by <file>" is checked: that test imports the module. Remove an entry when the module gets a test
// named for it (the static test fails until it is removed).
export const MODULE_TEST_ALLOWLIST: Record<string, string> = {
  'audit/access/model.ts': 'tested by test/audit/access/report.test.ts (the access report over manifest fixtures)',
  'audit/access/sources.ts': 'tested by test/audit/access/report.test.ts (manifests read from files)',
  'certs/kube-adapter.ts':
    "wiring: the certificate keeper's Kubernetes calls, run against the simulator by test/controller/cert-keeper.test.ts",
  'cli/commands/dev-pods.ts':
    'tested by test/cli/commands/flags.test.ts (its flags); the rest needs root, containerd and a kubelet, the harness test/harness/node/ that test/real/pods.test.ts runs',
  'cli/commands/dev.ts': '`vaultgate dev`: run by test/real/dev.test.ts (real tier)',
  'cli/commands/plan.ts':
    'tested by test/audit/plan/plan.refused.test.ts (and end to end by test/cli/commands/audit.test.ts)',
  'cli/commands/shared-flags.ts':
    'flag declarations and sharedOptionsFrom, which reads them; parsed and checked by test/cli/commands/flags.test.ts through the commands',
  'cli/commands/webhook.ts': 'tested by test/cli/commands/flags.test.ts (flags, help, options)',
  'cli/main.ts': 'the command dispatcher: every end-to-end CLI test (test/cli/commands/validate.test.ts …) runs it',
  'controller/defaults.ts': "constants only: the controller's flag defaults (cli/commands/controller.ts declares them)",
  'controller/reconcilers/common.ts': 'tested by test/controller/reconcilers/error-policy.test.ts',
  'controller/reconcilers/kv-reader.ts': 'tested by test/controller/reconcilers/externalsecret.test.ts',
  'controller/reconcilers/vault-object.ts':
    'the VaultPolicy/VaultRoleBinding plan executor, run through both reconcilers by test/controller/reconcilers/vaultpolicy.test.ts and vaultrolebinding.test.ts',
  'eso/render-worker.ts':
    "a worker thread's entry point, started by controller/reconcilers/render-pool.ts; test/controller/reconcilers/render-pool.test.ts runs it",
  'kube/kube-client.ts': 'the KubeClient interface and one constant (its field-manager name): nothing runs',
  'kube/kube-transport.ts':
    'the HTTP layer of http-kube-client.ts, run by test/kube/http-kube-client.test.ts and the contract suite (test/contract)',
  'schemas/eso-kinds.ts': 'tested by test/eso/manifests.test.ts (ESO kinds served as ESO serves them)',
  'schemas/schema-refs.ts':
    '$ref resolution under generate.ts and validator.ts; test/schemas/generate.test.ts checks its output (the CRDs) is current',
  'vault/auth.ts':
    'login, lookup, renew and revoke calls; run against the Vault simulator through vault/token-cache.ts by test/vault/token-cache.test.ts',
  'vault/metrics.ts': 'metric declarations; their values are asserted through test/vault/client.test.ts',
  'webhook/defaults.ts': "constants only: the webhook's flag defaults (cli/commands/webhook.ts declares them)",
  'webhook/http-app.ts': 'tested by test/webhook/server.test.ts',
  'webhook/main.ts': 'pure wiring: starts the process from its options',
  'webhook/metrics-server.ts': 'tested by test/webhook/server.audit.test.ts',
  'webhook/rules/eso/access.ts': 'finding constructors for the ESO rules, tested with them in test/webhook/rules/eso/',
  'webhook/rules/eso/index.ts': 'tested by test/webhook/rules/eso/clusterexternalsecret-rules.test.ts',
  'webhook/rules/eso/template-size.ts':
    'rule eso.template.too-large, asserted by test/webhook/review/size-gate.test.ts',
  'webhook/rules/eso/vault-servers.ts': 'tested by test/webhook/rules/eso/token-audiences.oracle.test.ts',
  'webhook/rules/schema.ts': 'one line over schemas/validator.ts (tested by test/schemas/validator.test.ts)',
  'webhook/security-headers.ts': 'tested by test/webhook/http-fast-path.test.ts',
};
