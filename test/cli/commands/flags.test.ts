// Flags declared once: the help of `vaultgate controller`, `webhook`, `run`, `dev` and `template` lists every declared flag
// with its default and environment variable, the parser takes exactly the declared flags, a flag left out
// reads as its declared default (then its environment variable, when it has one), and the controller app
// built without an option uses the same default as the flag.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import {
  CONTROLLER_HELP,
  CONTROLLER_OPTIONS,
  CONTROLLER_SECTIONS,
  controllerOptionsFrom,
} from '../../../cli/commands/controller.ts';
import {
  defaultText,
  defineCommand,
  type Flag,
  FlagReader,
  type FlagSection,
  flagsOf,
  HELP_FLAG,
  sectionsHelp,
} from '../../../cli/commands/flags.ts';
import { DEV_HELP, DEV_OPTIONS, DEV_SECTIONS } from '../../../cli/commands/dev.ts';
import { DEV_PODS_HELP, DEV_PODS_OPTIONS, DEV_PODS_SECTIONS } from '../../../cli/commands/dev-pods.ts';
import { RUN_HELP, RUN_OPTIONS, RUN_SECTIONS } from '../../../cli/commands/run.ts';
import { TEMPLATE_HELP, TEMPLATE_OPTIONS, TEMPLATE_SECTIONS } from '../../../cli/commands/template.ts';
import { WEBHOOK_HELP, WEBHOOK_OPTIONS, WEBHOOK_SECTIONS } from '../../../cli/commands/webhook.ts';
import { buildControllerApp } from '../../../controller/main.ts';
import { silentLogger } from '../../../observability/log.ts';
import { FakeKubeClient } from '../../sim/kube-fake-client.ts';

/** The help entries: each starts at a line `  --flag` or `  -h, --flag`; continuation lines joined. */
function helpEntries(help: string): Map<string, string> {
  const entries = new Map<string, string>();
  let current: string | undefined;
  for (const line of help.split('\n')) {
    const m = /^ {2}(?:-\w, )?--([a-z0-9-]+)/.exec(line);
    if (m?.[1]) {
      current = m[1];
      entries.set(current, line.trim());
    } else if (current && /^ {3,}\S/.test(line)) {
      entries.set(current, `${entries.get(current)} ${line.trim()}`);
    } else current = undefined;
  }
  return entries;
}

const commands: Array<[string, readonly FlagSection[], string, Record<string, unknown>]> = [
  ['controller', CONTROLLER_SECTIONS, CONTROLLER_HELP, CONTROLLER_OPTIONS],
  ['webhook', WEBHOOK_SECTIONS, WEBHOOK_HELP, WEBHOOK_OPTIONS],
  ['run', RUN_SECTIONS, RUN_HELP, RUN_OPTIONS],
  ['dev', DEV_SECTIONS, DEV_HELP, DEV_OPTIONS],
  ['dev --pods', DEV_PODS_SECTIONS, DEV_PODS_HELP, DEV_PODS_OPTIONS],
  ['template', TEMPLATE_SECTIONS, TEMPLATE_HELP, TEMPLATE_OPTIONS],
];

void describe('flags declared once: help and parser come from the declarations', () => {
  for (const [command, sections, help, options] of commands) {
    void test(`vaultgate ${command} --help lists every declared flag with its default and environment variable`, () => {
      const entries = helpEntries(help);
      for (const f of flagsOf(sections)) {
        const entry = entries.get(f.name);
        assert.ok(entry, `--${f.name} has an entry in the help of ${command}`);
        const dflt = defaultText(f);
        if (dflt !== undefined)
          assert.ok(entry.includes(`default ${dflt}`), `--${f.name}: "default ${dflt}" in ${JSON.stringify(entry)}`);
        if (f.env) assert.ok(entry.includes(`env ${f.env}`), `--${f.name}: "env ${f.env}" in ${JSON.stringify(entry)}`);
        if (f.negation) assert.ok(entry.includes(`--${f.negation}`), `--${f.negation} beside --${f.name}`);
      }
      // and nothing the parser would refuse
      for (const name of entries.keys()) assert.ok(name in options, `--${name} in the help is a flag the parser takes`);
    });

    void test(`vaultgate ${command}: the parser takes exactly the declared flags (and their negations)`, () => {
      const declared = flagsOf(sections)
        .flatMap((f) => [f.name, ...(f.negation ? [f.negation] : [])])
        .sort();
      assert.deepEqual(Object.keys(options).sort(), declared);
    });

    void test(`vaultgate ${command}: no help line is wider than 110 columns`, () => {
      const wide = help.split('\n').filter((l) => l.length > 110);
      assert.deepEqual(wide, []);
    });
  }

  void test('a flag left out reads as its environment variable, then its default; one given wins', () => {
    const sections: FlagSection[] = [
      {
        title: 't',
        flags: [
          { name: 'ns', type: 'string', env: 'POD_NS', default: 'fallback', help: 'h' },
          { name: 'n', type: 'integer', default: 7, min: 1, max: 9, help: 'h' },
          { name: 'on', type: 'boolean', default: true, negation: 'no-on', help: 'h' },
        ] satisfies Flag[],
      },
    ];
    assert.equal(new FlagReader(sections, {}, {}).string('ns'), 'fallback');
    assert.equal(new FlagReader(sections, {}, { POD_NS: 'from-env' }).string('ns'), 'from-env');
    assert.equal(new FlagReader(sections, { ns: 'given' }, { POD_NS: 'from-env' }).string('ns'), 'given');
    assert.equal(new FlagReader(sections, {}, {}).int('n'), 7);
    assert.equal(new FlagReader(sections, { n: '3' }, {}).int('n'), 3);
    assert.throws(
      () => new FlagReader(sections, { n: '10' }, {}).int('n'),
      /--n must be a whole number between 1 and 9, got "10"/,
    );
    assert.equal(new FlagReader(sections, {}, {}).bool('on'), true);
    assert.equal(new FlagReader(sections, { 'no-on': true }, {}).bool('on'), false);
    assert.equal(new FlagReader(sections, {}, {}).given('ns'), false);
  });
});

void describe('defineCommand: the parser, the help and the parse of a command come from one declaration', () => {
  const sections: FlagSection[] = [
    { title: 'Options', flags: [{ name: 'n', type: 'integer', arg: 'n', default: 1, help: 'a number' }, HELP_FLAG] },
  ];
  const command = defineCommand('demo', sections, (flagsHelp) => `Usage: vaultgate demo\n\n${flagsHelp}Exit 0.\n`);

  void test("the help is the command's text with its flags' entries where the text places them", () => {
    assert.equal(command.help, `Usage: vaultgate demo\n\n${sectionsHelp(sections)}Exit 0.\n`);
    assert.deepEqual(Object.keys(command.options).sort(), ['help', 'n']);
  });

  void test('parse: what build makes of the flags; --help prints the help (0); an unknown flag is a usage error (2)', (t) => {
    const out = t.mock.method(process.stdout, 'write', () => true);
    const err = t.mock.method(process.stderr, 'write', () => true);
    const n = (argv: string[]): number => command.parse(argv, (v) => new FlagReader(sections, v, {}).int('n'));
    assert.equal(n(['--n', '3']), 3);
    assert.equal(n(['--help']), 0);
    assert.equal(n(['--bogus']), 2);
    assert.equal(n(['--n', 'x']), 2);
    t.mock.restoreAll();
    assert.deepEqual(
      out.mock.calls.map((c) => c.arguments[0]),
      [command.help],
    );
    assert.deepEqual(
      err.mock.calls.map((c) => c.arguments[0]),
      [
        "vaultgate demo: Unknown option '--bogus'\n(see vaultgate demo --help)\n",
        'vaultgate demo: --n must be a whole number of at least 0, got "x"\n(see vaultgate demo --help)\n',
      ],
    );
  });
});

void describe('the controller app and its flags agree on defaults', () => {
  const client = new FakeKubeClient();
  const fromFlags = controllerOptionsFrom(
    parseArgs({ args: ['--vault-addr=http://vault:8200'], options: CONTROLLER_OPTIONS, strict: true }).values,
    { client, log: silentLogger, env: { VAULT_TOKEN: 't' } },
  );
  const declared = (name: string): unknown => flagsOf(CONTROLLER_SECTIONS).find((f) => f.name === name)?.default;

  void test("--workers: the flag's default, what the flags give the app, and what the app runs without the option are one number (the chart's 16)", async () => {
    assert.equal(declared('workers'), 16);
    assert.equal(fromFlags.workers, 16);
    const app = buildControllerApp({
      client,
      vault: { address: 'http://vault:8200', auth: { method: 'token', token: 't' } },
      log: silentLogger,
    });
    const gauge = await app.registry.getSingleMetric('controller_runtime_max_concurrent_reconciles')!.get();
    const perController: Record<string, number> = Object.fromEntries(
      gauge.values.map((v) => [String(v.labels.controller), v.value]),
    );
    assert.equal(perController.vaultpolicy, declared('workers'));
    assert.equal(perController.vaultrolebinding, declared('workers'));
    assert.equal(perController.externalsecret, declared('workers'));
    await app.stop();
  });

  void test("--vault-timeout, --drift-check, --metrics-port, --name-prefix: the flag's default is what the app gets", () => {
    assert.equal(fromFlags.vault.timeoutMs, declared('vault-timeout'));
    assert.equal(fromFlags.driftCheckMs, declared('drift-check'));
    assert.equal(fromFlags.metricsPort, declared('metrics-port'));
    assert.equal(fromFlags.namePrefix, declared('name-prefix'));
    assert.equal(fromFlags.leaderElection?.name, declared('leader-election-name'));
  });
});
