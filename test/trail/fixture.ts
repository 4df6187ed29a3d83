// What the trail's file tests share: a temporary directory and a signing key for one test file (made
// before its tests, the directory removed after), the audit event they append, and the files read back.
import { after, before } from 'node:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateAuditKey, type AuditKey } from '../../trail/keys.ts';
import { auditVaultWrite } from '../../trail/events.ts';

export interface TrailFixture {
  /** The file's temporary directory; there once its `before` hook ran. */
  readonly dir: string;
  readonly key: AuditKey;
}

/** Registers the file's `before`/`after` hooks: call it at the top level. */
export function trailFixture(prefix: string): TrailFixture {
  let made: { dir: string; key: AuditKey } | undefined;
  const get = () => {
    if (!made) throw new Error('trailFixture: used before the file`s before hook ran');
    return made;
  };
  before(async () => {
    made = { dir: mkdtempSync(join(tmpdir(), prefix)), key: await generateAuditKey() };
  });
  after(() => {
    if (made) rmSync(made.dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return get().dir;
    },
    get key() {
      return get().key;
    },
  };
}

/** The i-th of a run of distinct audit events: a policy update. */
export const policyUpdate = (i: number) =>
  auditVaultWrite({
    action: 'update',
    object: 'policy',
    vaultName: `vaultgate.ns.policy-${i}`,
    reason: 'spec changed',
  });

/** Files as verifyAuditFiles takes them. */
export const readAll = (files: string[]) => files.map((f) => ({ name: f, text: readFileSync(f, 'utf8') }));
