// Unit tests of `npm test`'s own counting (scripts/test.js): a scenario counts by its worst step,
// so undefined, pending, ambiguous and failed steps all count as failed and only skipped ones as
// skipped; a failed test's TAP block is kept whole, a parent failing only through subtests is not;
// the unit tests' own temporary folder links tsx's compile cache, and what they leave there (a
// kvqual-* entry, never the cache) is named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { fakeMessages, FakeScenario } from '../support/messages';

const runner = require(path.join(ROOT, 'scripts', 'test.js')) as {
  countScenarios(ndjson: string): { passed: number; failed: number; skipped: number };
  failedTapBlocks(tap: string): string[];
  leftovers(folder: string): string[];
  unitsTempFolder(system?: string): string;
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

test("the unit tests' temporary folder links tsx's compile cache; a kvqual-* entry left there is named, the cache is not", () => {
  const system = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-test-runner-'));
  try {
    const cache = `tsx-${process.geteuid?.() ?? os.userInfo().username}`;
    fs.mkdirSync(path.join(system, cache));
    const folder = runner.unitsTempFolder(system);
    assert.ok(path.basename(folder).startsWith('kvqual-test-units-'));
    assert.equal(fs.realpathSync(path.join(folder, cache)), fs.realpathSync(path.join(system, cache)), 'the cache is the system one');
    assert.deepEqual(runner.leftovers(folder), []);
    fs.mkdirSync(path.join(folder, 'kvqual-replay-cli-x'));
    fs.writeFileSync(path.join(folder, 'kvqual-a-file'), '');
    fs.mkdirSync(path.join(folder, 'other'));
    assert.deepEqual(runner.leftovers(folder), ['kvqual-a-file', 'kvqual-replay-cli-x']);
  } finally {
    fs.rmSync(system, { recursive: true, force: true });
  }
});

test("a runner's temporary folder on a machine with no tsx cache yet: the system's is made and linked, so that what the run compiles is kept", () => {
  const system = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-test-runner-'));
  try {
    const cache = `tsx-${process.geteuid?.() ?? os.userInfo().username}`;
    const folder = runner.unitsTempFolder(system);
    assert.ok(fs.statSync(path.join(system, cache)).isDirectory(), 'the system cache is made');
    assert.equal(fs.realpathSync(path.join(folder, cache)), fs.realpathSync(path.join(system, cache)));
    assert.deepEqual(runner.leftovers(folder), []);
  } finally {
    fs.rmSync(system, { recursive: true, force: true });
  }
});
