// The one list of ESO template functions: what vaultgate renders, what it refuses and why (admission
// shows the reason), and what ESO itself removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ESO_REMOVED_FUNCTIONS,
  isEsoTemplateFunction,
  isSupportedTemplateFunction,
  REFUSED_TEMPLATE_FUNCTIONS,
  refusalReason,
  SUPPORTED_TEMPLATE_FUNCTIONS,
} from '../../eso/function-map.ts';

test("Go's builtins, Sprig and ESO's own functions are rendered; and/or are there too", () => {
  for (const f of ['printf', 'index', 'and', 'or', 'b64dec', 'toJson', 'semverCompare', 'pkcs12cert', 'filterPEM'])
    assert.ok(isSupportedTemplateFunction(f), f);
});

test('a function whose output changes on every render is refused with the reason, yet known to the parser', () => {
  for (const f of ['now', 'randAlphaNum', 'uuidv4', 'genCA', 'encryptAES', 'getHostByName']) {
    assert.equal(isSupportedTemplateFunction(f), false, f);
    assert.equal(isEsoTemplateFunction(f), true, `${f}: ESO's parser knows it, so the refusal is ours`);
    assert.ok(REFUSED_TEMPLATE_FUNCTIONS.has(f));
  }
  assert.match(refusalReason('now') ?? '', /changes on every render/);
  assert.match(refusalReason('getHostByName') ?? '', /DNS/);
});

test("env and expandenv are not ESO functions at all; an unknown name says it is not ESO's", () => {
  assert.equal(isEsoTemplateFunction('env'), false);
  assert.match(refusalReason('env') ?? '', /environment/);
  assert.ok(ESO_REMOVED_FUNCTIONS.has('getSecretKey'));
  assert.match(refusalReason('noSuchFunction') ?? '', /not a function of ESO's template engine/);
  assert.equal(refusalReason('upper'), undefined);
});

test('no function is both rendered and refused, and the list is sorted for the README and admission', () => {
  for (const f of SUPPORTED_TEMPLATE_FUNCTIONS)
    assert.ok(!REFUSED_TEMPLATE_FUNCTIONS.has(f) && !ESO_REMOVED_FUNCTIONS.has(f), f);
  assert.deepEqual([...SUPPORTED_TEMPLATE_FUNCTIONS], [...SUPPORTED_TEMPLATE_FUNCTIONS].sort());
});
