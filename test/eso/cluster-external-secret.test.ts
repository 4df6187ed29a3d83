// ClusterExternalSecret as ESO computes it: the namespaces it selects, the name of the ExternalSecrets
// it creates, their spec as ESO writes it, and its status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asEsoWritesIt,
  clusterExternalSecretStatus,
  externalSecretNameOf,
  NAMESPACES_FAILED,
  type NamespaceView,
  targetNamespaces,
} from '../../eso/cluster-external-secret.ts';

const namespaces: NamespaceView[] = [
  { name: 'b', labels: { 'kubernetes.io/metadata.name': 'b', team: 'x' } },
  { name: 'a', labels: { 'kubernetes.io/metadata.name': 'a', team: 'x' } },
  { name: 'c', labels: { 'kubernetes.io/metadata.name': 'c' } },
];

test('namespaces by name, by selector and by selectors, each once and sorted; none selected by nothing', () => {
  assert.deepEqual(targetNamespaces({ namespaceSelector: { matchLabels: { team: 'x' } } }, namespaces), ['a', 'b']);
  assert.deepEqual(
    targetNamespaces({ namespaces: ['c', 'b'], namespaceSelectors: [{ matchLabels: { team: 'x' } }] }, namespaces),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(targetNamespaces({ namespaces: ['gone'] }, namespaces), []);
  assert.deepEqual(targetNamespaces({}, namespaces), []);
});

test("the ExternalSecret's name defaults to the ClusterExternalSecret's; durations as Go prints them", () => {
  assert.equal(externalSecretNameOf({ metadata: { name: 'ces' }, spec: {} }), 'ces');
  assert.equal(externalSecretNameOf({ metadata: { name: 'ces' }, spec: { externalSecretName: 'es' } }), 'es');
  const spec = asEsoWritesIt({ refreshInterval: '1h', secretStoreRef: { name: 's' } });
  assert.equal(spec.refreshInterval, '1h0m0s');
});

test('status lists failed namespaces with reasons and provisioned ones, sorted; Ready only if none failed', () => {
  const status = clusterExternalSecretStatus('es', [
    { namespace: 'z' },
    { namespace: 'b', error: 'external secret already exists in namespace' },
    { namespace: 'a' },
  ]);
  assert.deepEqual(status.provisionedNamespaces, ['a', 'z']);
  assert.deepEqual(status.failedNamespaces, [
    { namespace: 'b', reason: 'external secret already exists in namespace' },
  ]);
  assert.deepEqual(status.conditions, [{ type: 'Ready', status: 'False', message: NAMESPACES_FAILED }]);
  assert.deepEqual(clusterExternalSecretStatus('es', [{ namespace: 'a' }]).conditions, [
    { type: 'Ready', status: 'True' },
  ]);
});
