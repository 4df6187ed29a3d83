// The Go oracle registers ESO's own template functions from a copy of ESO v0.16.2's pkg/template/v2
// (test/upstream/go-oracle/eso_*.go: importing ESO's package would compile controller-runtime and
// client-go for the fast tier). The copy must stay ESO's source: each file equals the module's, apart
// from the package line and the two header lines that say where it came from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { esoModuleDir, GO_ORACLE_SRC } from '../upstream/go-oracle.ts';

void test("the oracle's copy of ESO's template functions is ESO v0.16.2's source", { timeout: 600_000 }, () => {
  const dir = esoModuleDir();
  for (const f of ['pkcs12.go', 'pem.go', 'pem_chain.go', 'jwk.go', 'yaml.go']) {
    const ours = readFileSync(join(GO_ORACLE_SRC, `eso_${f}`), 'utf8')
      .split('\n')
      .slice(3)
      .join('\n')
      .replace(/^package main$/m, 'package template');
    assert.equal(ours, readFileSync(join(dir, 'pkg/template/v2', f), 'utf8'), f);
  }
  // The registration in main.go lists exactly the functions ESO's template.go registers.
  const names = (src: string): string[] =>
    [
      ...src
        .slice(src.indexOf('tplFuncs = '))
        .slice(0, 1200)
        .matchAll(/"(\w+)":\s/g),
    ]
      .map((m) => m[1]!)
      .sort();
  assert.deepEqual(
    names(readFileSync(join(GO_ORACLE_SRC, 'main.go'), 'utf8')),
    names(readFileSync(join(dir, 'pkg/template/v2/template.go'), 'utf8')),
  );
});
