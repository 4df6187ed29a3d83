// ESO's Password generator (go-password's algorithm): composition, defaults and its refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SYMBOLS, generatePassword, passwordProblem } from '../../../eso/generators/password.ts';

const count = (s: string, re: RegExp): number => [...s].filter((c) => re.test(c)).length;

test('defaults as ESO: length 24 (also for 0), 25 % digits and symbols, letters of both cases, no repeats', () => {
  for (const length of [undefined, 0]) {
    const p = generatePassword({ ...(length !== undefined ? { length } : {}) }).toString('latin1');
    assert.equal(p.length, 24);
    assert.equal(count(p, /[0-9]/), 6);
    assert.equal(count(p, /[^A-Za-z0-9]/), 6);
    assert.ok([...p].every((c) => /[A-Za-z0-9]/.test(c) || DEFAULT_SYMBOLS.includes(c)));
    assert.equal(new Set(p).size, 24);
  }
});

test('noUpper, symbolCharacters, explicit counts, allowRepeat', () => {
  const p = generatePassword({
    length: 40,
    digits: 3,
    symbols: 30,
    symbolCharacters: '-_',
    noUpper: true,
    allowRepeat: true,
  });
  const s = p.toString('latin1');
  assert.equal(count(s, /[A-Z]/), 0);
  assert.equal(count(s, /[0-9]/), 3);
  assert.equal(count(s, /[-_]/), 30);
  assert.equal(s.length, 40);
});

test('crypto random: 1,000 passwords are all different', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) seen.add(generatePassword({}).toString('latin1'));
  assert.equal(seen.size, 1000);
});

test("go-password's refusals, and vaultgate's bounds (never a hang on a hostile spec)", () => {
  assert.deepEqual(passwordProblem({ length: 8, digits: 5, symbols: 5 }), {
    field: 'length',
    message: 'number of digits and symbols must be less than total length',
  });
  assert.equal(passwordProblem({ length: 80, digits: 0, symbols: 0 })?.field, 'length'); // 80 letters > 52 without repeats
  assert.equal(passwordProblem({ length: 80, digits: 0, symbols: 0, allowRepeat: true }), undefined);
  assert.equal(passwordProblem({ length: 5000, allowRepeat: true })?.field, 'length');
  assert.equal(passwordProblem({ symbols: 3, symbolCharacters: '!!' })?.field, 'symbols');
  // Symbols that are letters already drawn: go-password loops forever; here an error, at once.
  assert.throws(
    () => generatePassword({ length: 54, digits: 0, symbols: 2, symbolCharacters: 'ab' }),
    /symbols exceeds available symbols/,
  );
});
