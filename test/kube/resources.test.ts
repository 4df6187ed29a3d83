import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CRDS,
  DEPLOYMENTS,
  NAMESPACES,
  SECRETS,
  apiVersionOf,
  resourceId,
  resourcePath,
} from '../../kube/resources.ts';

test('REST paths follow the apiserver layout: /api/v1 for the core group, /apis/<group>/<version> otherwise', () => {
  assert.equal(resourcePath(SECRETS), '/api/v1/secrets');
  assert.equal(resourcePath(SECRETS, 'team-a'), '/api/v1/namespaces/team-a/secrets');
  assert.equal(resourcePath(SECRETS, 'team-a', 'db', 'status'), '/api/v1/namespaces/team-a/secrets/db/status');
  assert.equal(resourcePath(DEPLOYMENTS, 'team-a', 'web'), '/apis/apps/v1/namespaces/team-a/deployments/web');
});

test('a cluster-scoped resource ignores the namespace; names are URL-encoded', () => {
  assert.equal(resourcePath(NAMESPACES, 'ignored', 'team-a'), '/api/v1/namespaces/team-a');
  assert.equal(
    resourcePath(CRDS, undefined, 'a.b.io'),
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.b.io',
  );
  assert.equal(resourcePath(SECRETS, 'ns', 'a/../b'), '/api/v1/namespaces/ns/secrets/a%2F..%2Fb');
});

test("apiVersion is the object's: v1 for the core group; resource ids are distinct per resource", () => {
  assert.equal(apiVersionOf(SECRETS), 'v1');
  assert.equal(apiVersionOf(DEPLOYMENTS), 'apps/v1');
  assert.equal(resourceId(SECRETS), 'core/v1/secrets');
  assert.equal(resourceId(DEPLOYMENTS), 'apps/v1/deployments');
});

test('refs are frozen: no caller can repoint a shared resource', () => {
  assert.ok(Object.isFrozen(SECRETS));
});
