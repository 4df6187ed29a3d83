// What verifyAuditFiles makes of one line of a file before any chain check: an audit record, a broken
// record (reported), or another program's log line on a shared stdout (counted as ignored).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUDIT_FORMAT } from '../../trail/record.ts';
import { parseLine } from '../../trail/verify.ts';

const where = { file: 'a.log', line: 3 };
const record = JSON.stringify({ audit: AUDIT_FORMAT, replica: 'w0', chain: 'c', seq: 0 });
const brokenRecord = `{"audit":"${AUDIT_FORMAT}","replica":"w0","seq":`;

const cases: Array<{ line: string; cutOffLastLine: boolean; is: string; message?: string }> = [
  { line: record, cutOffLastLine: false, is: 'record' },
  // A complete record is a record even on a last line without its newline.
  { line: record, cutOffLastLine: true, is: 'record' },
  { line: '{"level":"info","msg":"listening"}', cutOffLastLine: false, is: 'other' },
  { line: 'plain text from another program', cutOffLastLine: false, is: 'other' },
  { line: 'null', cutOffLastLine: false, is: 'other' },
  { line: `{"audit":"vaultgate/v1"}`, cutOffLastLine: false, is: 'other' },
  {
    line: brokenRecord,
    cutOffLastLine: false,
    is: 'unparsable',
    message: 'a.log:3: an audit record that is not valid JSON (cut short or edited)',
  },
  // Any unreadable last line of a file that does not end in a newline: the file was cut off mid-write.
  {
    line: brokenRecord,
    cutOffLastLine: true,
    is: 'truncated',
    message: 'a.log:3: the last line is an incomplete record: the file was cut off (truncated) mid-record',
  },
  { line: 'plain text', cutOffLastLine: true, is: 'truncated' },
];

for (const c of cases) {
  void test(`${JSON.stringify(c.line).slice(0, 50)}${c.cutOffLastLine ? ' (cut-off last line)' : ''} is ${c.is}`, () => {
    const parsed = parseLine(c.line, where, c.cutOffLastLine);
    if (parsed.kind === 'broken') {
      assert.equal(parsed.issue.kind, c.is);
      assert.equal(parsed.issue.severity, 'error');
      assert.equal(parsed.issue.file, 'a.log');
      assert.equal(parsed.issue.line, 3);
      if (c.message) assert.equal(parsed.issue.message, c.message);
    } else {
      assert.equal(parsed.kind, c.is);
      if (parsed.kind === 'record') assert.deepEqual(parsed.record, JSON.parse(c.line));
    }
  });
}
