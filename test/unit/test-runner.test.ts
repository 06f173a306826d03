// Unit tests of `npm test`'s own counting (scripts/test.js): a scenario counts by its worst step,
// so undefined, pending, ambiguous and failed steps all count as failed and only skipped ones as
// skipped; a failed test's TAP block is kept whole, a parent failing only through subtests is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { fakeMessages, FakeScenario } from '../support/messages';

const runner = require(path.join(ROOT, 'scripts', 'test.js')) as {
  countScenarios(ndjson: string): { passed: number; failed: number; skipped: number };
  failedTapBlocks(tap: string): string[];
};

const one = (name: string, line: number, status: FakeScenario['steps'][number]['status']): FakeScenario => ({
  uri: 'features/x.feature',
  line,
  name,
  steps: [
    { keyword: 'Given', text: 'a step that passes', status: 'PASSED' },
    { keyword: 'Then', text: `a step that is ${status.toLowerCase()}`, status },
  ],
});

test('undefined, pending, ambiguous and failed steps count their scenario as failed; skipped as skipped', () => {
  const counts = runner.countScenarios(
    fakeMessages([one('passes', 1, 'PASSED'), one('undefined', 2, 'UNDEFINED'), one('pending', 3, 'PENDING'), one('ambiguous', 4, 'AMBIGUOUS'), one('fails', 5, 'FAILED'), one('skipped', 6, 'SKIPPED')]),
  );
  assert.deepEqual(counts, { passed: 1, failed: 4, skipped: 1 });
});

test('failed TAP blocks are printed whole; a parent failing only through its subtests is left out', () => {
  const tap = ['ok 1 - fine', '    not ok 1 - child', '      ---', "      error: 'boom'", '      ...', 'not ok 2 - parent', '  ---', "  failureType: 'subtestsFailed'", '  ...'].join('\n');
  assert.deepEqual(runner.failedTapBlocks(tap), ["    not ok 1 - child\n      ---\n      error: 'boom'\n      ..."]);
});
