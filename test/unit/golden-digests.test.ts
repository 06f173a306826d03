// The example configs give the results recorded in test/fixtures/golden-digests.json (see
// test/support/golden.ts): a change of any report's digest, or of the KV events' hashes or order,
// fails here with every run that moved and what to do if it was meant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPORT_VERSION } from '../../src/report/report';
import { GOLDEN_ADVICE, GOLDEN_FILE, goldenRuns, measureGolden, readGolden, SHARED, writeRefusal, type GoldenRun } from '../support/golden';
import { longRuns } from '../../bench/longRuns';

const haveShared = fs.existsSync(path.join(SHARED, 'data', 'mooncake'));

test('the golden record is of this report version and pins every example config, no more', () => {
  const record = readGolden();
  assert.equal(record.report_version, REPORT_VERSION, `${path.relative(process.cwd(), GOLDEN_FILE)} was recorded for report version ${record.report_version}. ${GOLDEN_ADVICE}`);
  assert.deepEqual(Object.keys(record.runs).sort(), goldenRuns().map((run) => run.name).sort(), `a new or removed example config. ${GOLDEN_ADVICE}`);
});

test('the golden record pins every long run of the benchmarks by its report digest, no more', () => {
  const recorded = readGolden().long_runs ?? {};
  assert.deepEqual(Object.keys(recorded), longRuns().map((run) => run.name), `a new, removed or renamed long run. ${GOLDEN_ADVICE}`);
  for (const [name, digest] of Object.entries(recorded)) assert.match(digest, /^sha256:[0-9a-f]{64}$/, name);
});

/** The runs among `runs` whose report, or KV event log where it is pinned, differs from the record (a run not recorded is named by the test above). */
function moved(runs: GoldenRun[]): string[] {
  const record = readGolden();
  const lines: string[] = [];
  for (const run of runs) {
    const recorded = record.runs[run.name];
    if (recorded === undefined) continue;
    const now = measureGolden(run);
    if (now.report !== recorded.report) lines.push(`${run.name}: report ${now.report}, recorded ${recorded.report}`);
    if (now.events !== recorded.events) lines.push(`${run.name}: KV event log ${now.events}, recorded ${recorded.events}`);
  }
  return lines;
}

const movedMessage = (lines: string[]) => `results moved:\n  ${lines.join('\n  ')}\n${GOLDEN_ADVICE}`;

test('every example config that needs no published trace gives its recorded report and KV event log', () => {
  const lines = moved(goldenRuns().filter((run) => !run.needsShared));
  assert.deepEqual(lines, [], movedMessage(lines));
});

test('every Mooncake example gives its recorded report on its first requests', { skip: !haveShared && 'no ../shared/data/mooncake here' }, () => {
  const lines = moved(goldenRuns().filter((run) => run.needsShared));
  assert.deepEqual(lines, [], movedMessage(lines));
});

test('recording the examples alone is refused when one moved: the long runs would keep a stale record', () => {
  assert.match(writeRefusal({ long: false, movedExamples: 2 }) ?? '', /^2 example run\(s\) moved.*npm run golden -- --long --write$/);
  assert.equal(writeRefusal({ long: true, movedExamples: 2 }), null, 'with --long both are recorded');
  assert.equal(writeRefusal({ long: false, movedExamples: 0 }), null, 'nothing moved: the long runs are as recorded');
});
