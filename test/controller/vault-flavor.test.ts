// The target flavour as a setting: `--vault-flavor` / `--vault-version` on the webhook and the
// controller (OpenBao 2.7 by default), the chart's vault.flavor / vault.version passed to both
// Deployments, and the controller's start-up comparison with the server's version.
/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   rendered manifests are untyped YAML */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { CONTROLLER_HELP, CONTROLLER_OPTIONS, controllerOptionsFrom } from '../../cli/commands/controller.ts';
import { WEBHOOK_HELP, WEBHOOK_OPTIONS, webhookOptionsFrom } from '../../cli/commands/webhook.ts';
import { checkVaultVersion } from '../../controller/main.ts';
import { createLogger, silentLogger } from '../../observability/log.ts';
import { parseVaultTarget, versionMismatch } from '../../policy/capabilities.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';
import { helm, helmSkip, one, render, CHART_DIR } from '../chart/render.ts';

const deps = { client: new FakeKubeClient(), log: silentLogger, env: { POD_NAMESPACE: 'vaultgate', VAULT_TOKEN: 't' } };
const controller = (args: string[]) =>
  controllerOptionsFrom(
    parseArgs({ args: ['--vault-addr=http://v', ...args], options: CONTROLLER_OPTIONS, strict: true }).values,
    deps,
  );
const webhook = (args: string[]) =>
  webhookOptionsFrom(
    parseArgs({ args: ['--no-kube', '--no-audit', ...args], options: WEBHOOK_OPTIONS, strict: true }).values,
  );

/** A logger whose JSON lines are kept. */
function capture(): {
  log: ReturnType<typeof createLogger>;
  lines: () => Array<{ level: number; msg: string; [k: string]: unknown }>;
} {
  const out: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(chunk.toString());
      cb();
    },
  });
  return {
    log: createLogger({ level: 'info', name: 'controller', destination }),
    lines: () =>
      out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string }),
  };
}

void describe('--vault-flavor / --vault-version', () => {
  void test('default: OpenBao 2.7, on both processes', () => {
    assert.deepEqual(controller([]).vaultTarget, { flavor: 'openbao', version: '2.7' });
    assert.deepEqual(webhook([]).vaultTarget, { flavor: 'openbao', version: '2.7' });
  });

  void test('HashiCorp Vault with its version', () => {
    assert.deepEqual(controller(['--vault-flavor=vault', '--vault-version=1.19']).vaultTarget, {
      flavor: 'vault',
      version: '1.19',
    });
    assert.deepEqual(webhook(['--vault-flavor=vault', '--vault-version=v1.19.2']).vaultTarget, {
      flavor: 'vault',
      version: '1.19.2',
    });
  });

  void test('a bad setting is refused naming the flag and the rule', () => {
    assert.throws(
      () => controller(['--vault-flavor=hashicorp']),
      /--vault-flavor must be one of openbao, vault .*got "hashicorp"/,
    );
    assert.throws(() => webhook(['--vault-flavor=vault']), /--vault-version is required with --vault-flavor=vault/);
    assert.throws(
      () => controller(['--vault-version=latest']),
      /--vault-version must be a version such as 2\.7 or 2\.7\.2, got "latest"/,
    );
  });

  void test('--help documents both flags on both commands', () => {
    for (const help of [CONTROLLER_HELP, WEBHOOK_HELP])
      for (const f of ['--vault-flavor', '--vault-version']) assert.ok(help.includes(f), f);
  });
});

void describe('the controller compares the server version with the setting at start', () => {
  const bao = parseVaultTarget(undefined, undefined);

  void test('OpenBao 2.7.2 matches 2.7: an info line, no warning', async () => {
    const { log, lines } = capture();
    const r = await checkVaultVersion(bao, () => Promise.resolve('2.7.2'), log);
    assert.equal(r.result, 'match');
    assert.ok(!lines().some((l) => l.level >= 40), JSON.stringify(lines()));
  });

  void test('another version: a warning naming both and the settings to change', async () => {
    const { log, lines } = capture();
    const r = await checkVaultVersion(bao, () => Promise.resolve('1.19.0+ent'), log);
    assert.equal(r.result, 'mismatch');
    const warn = lines().find((l) => l.level === 40);
    assert.ok(warn, JSON.stringify(lines()));
    assert.match(
      warn.msg,
      /the server reports version 1\.19\.0\+ent, but vaultgate is set up for OpenBao 2\.7 \(--vault-flavor\/--vault-version, chart vault\.flavor\/vault\.version\)/,
    );
    assert.equal(warn.serverVersion, '1.19.0+ent');
  });

  void test('an unreachable server: a warning, never a failure', async () => {
    const { log, lines } = capture();
    const r = await checkVaultVersion(bao, () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:8200')), log);
    assert.equal(r.result, 'unknown');
    assert.match(lines().find((l) => l.level === 40)?.msg ?? '', /could not read the Vault server version/);
  });

  void test('major.minor decides', () => {
    assert.equal(versionMismatch(bao, '2.7.0'), undefined);
    assert.match(versionMismatch(bao, '2.6.2') ?? '', /reports version 2\.6\.2/);
    assert.equal(versionMismatch({ flavor: 'vault', version: '1.19' }, 'v1.19.3'), undefined);
  });
});

void describe('chart: vault.flavor / vault.version', { skip: helmSkip() }, () => {
  const args = (objs: ReturnType<typeof render>, suffix: string): string[] =>
    one(objs, 'Deployment', suffix).spec.template.spec.containers[0].args as string[];

  void test('both Deployments get the setting (default openbao 2.7)', () => {
    const objs = render();
    for (const suffix of ['-controller', '-webhook']) {
      assert.ok(args(objs, suffix).includes('--vault-flavor=openbao'), suffix);
      assert.ok(args(objs, suffix).includes('--vault-version=2.7'), suffix);
    }
    const vault = render({ set: ['vault.flavor=vault', 'vault.version=1.19'] });
    for (const suffix of ['-controller', '-webhook']) {
      assert.ok(args(vault, suffix).includes('--vault-flavor=vault'), suffix);
      assert.ok(args(vault, suffix).includes('--vault-version=1.19'), suffix);
    }
  });

  void test('values.schema.json refuses a bad flavour or an unquoted version, naming the value', () => {
    const bad = helm(['template', 'rel', CHART_DIR, '--set', 'vault.flavor=hashicorp']);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /\/vault\/flavor'?: value must be one of 'openbao', 'vault'/);
    const dir = mkdtempSync(join(tmpdir(), 'vg-values-'));
    try {
      writeFileSync(join(dir, 'number.yaml'), 'vault:\n  version: 2.10\n');
      const number = helm(['template', 'rel', CHART_DIR, '-f', join(dir, 'number.yaml')]);
      assert.notEqual(number.status, 0, 'a YAML number (2.10 would become 2.1) is refused');
      assert.match(number.stderr, /\/vault\/version/);
      writeFileSync(join(dir, 'string.yaml'), 'vault:\n  version: "2.10"\n');
      assert.equal(helm(['template', 'rel', CHART_DIR, '-f', join(dir, 'string.yaml')]).status, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
