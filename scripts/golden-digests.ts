// `npm run golden`: replays every example config as test/unit/golden-digests.test.ts does and
// prints each run's report digest and KV event log digest beside the recorded ones
// (test/fixtures/golden-digests.json), marking those that moved. `--long` also runs the benchmarks'
// long runs (bench/longRuns.ts: the e2e workload, the whole Mooncake trace on 16, 64 and 256
// workers and twice; a minute or so) and compares their report digests. `--write` records what
// ran instead: for a change of results made on purpose (say why in docs/model.md); the long runs'
// record is kept as it was unless --long ran them, and --write without --long is refused when an
// example run moved (the long runs run the same simulator: their record would go stale). Needs ../shared for the Mooncake examples and
// the whole trace: without it, it prints them as not run and refuses to write.
// Exit 0 when nothing moved (or the record was written), 1 when something moved, 2 for bad arguments.
//
//   npm run golden [-- --long] [-- --write]
import fs from 'node:fs';
import path from 'node:path';
import { GOLDEN_FILE, goldenRuns, goldenText, measureGolden, readGolden, SHARED, writeRefusal, type GoldenDigests, type GoldenRecord } from '../test/support/golden';
import { haveTrace, longRuns } from '../bench/longRuns';

const USAGE = 'usage: npm run golden [-- --long] [-- --write]';

/** Where a run stands against the record: its first word on the line. */
function standing(same: boolean, recorded: boolean): string {
  return same ? 'same ' : recorded ? 'MOVED' : 'new  ';
}

/** The example configs' runs: measured, printed beside the record; how many moved. */
function exampleRuns(recorded: GoldenRecord['runs'], haveShared: boolean, measured: Record<string, GoldenDigests>): number {
  let moved = 0;
  for (const run of goldenRuns()) {
    if (run.needsShared && !haveShared) {
      process.stdout.write(`not run (no ../shared/data/mooncake): ${run.name}\n`);
      continue;
    }
    const now = measureGolden(run);
    measured[run.name] = now;
    const before = recorded[run.name];
    const same = before !== undefined && before.report === now.report && before.events === now.events;
    if (!same) moved++;
    process.stdout.write(`${standing(same, before !== undefined)} ${run.name}\n      report ${now.report}${now.events === null ? '' : `\n      events ${now.events}`}\n`);
    if (!same && before !== undefined) process.stdout.write(`      (recorded: report ${before.report}${before.events === null ? '' : `, events ${before.events}`})\n`);
  }
  return moved;
}

/** The long runs: measured, printed beside the record; how many moved. */
function longRunDigests(recorded: Record<string, string>, measured: Record<string, string>): number {
  let moved = 0;
  for (const run of longRuns()) {
    if (run.needsTrace && !haveTrace()) {
      process.stdout.write(`not run (no ../shared/data/mooncake): ${run.name}\n`);
      continue;
    }
    const now = run.digest();
    measured[run.name] = now;
    const before = recorded[run.name];
    if (before !== now) moved++;
    process.stdout.write(`${standing(before === now, before !== undefined)} ${run.name}\n      report ${now}\n`);
    if (before !== undefined && before !== now) process.stdout.write(`      (recorded: report ${before})\n`);
  }
  return moved;
}

function main(argv: string[]): number {
  const unknown = argv.filter((arg) => arg !== '--write' && arg !== '--long');
  if (unknown.length > 0) {
    process.stderr.write(`golden: unknown argument ${unknown[0]}; ${USAGE}\n`);
    return 2;
  }
  const write = argv.includes('--write');
  const long = argv.includes('--long');
  const haveShared = fs.existsSync(path.join(SHARED, 'data', 'mooncake'));
  if (write && !haveShared) {
    process.stderr.write('golden: --write needs ../shared/data/mooncake (the Mooncake examples would go unrecorded)\n');
    return 2;
  }
  const record: GoldenRecord = fs.existsSync(GOLDEN_FILE) ? readGolden() : { report_version: 0, runs: {} };
  const measured: Record<string, GoldenDigests> = {};
  const measuredLong: Record<string, string> = {};
  let moved = exampleRuns(record.runs, haveShared, measured);
  const refusal = write ? writeRefusal({ long, movedExamples: moved }) : null;
  if (refusal !== null) {
    process.stderr.write(`golden: nothing recorded: ${refusal}\n`);
    return 2;
  }
  if (long) moved += longRunDigests(record.long_runs ?? {}, measuredLong);
  if (write) {
    fs.writeFileSync(GOLDEN_FILE, goldenText(measured, long ? measuredLong : (record.long_runs ?? {})));
    const longNote = long ? ` and ${Object.keys(measuredLong).length} long runs` : ' (the long runs as they were: --long records them)';
    process.stdout.write(`golden: recorded ${Object.keys(measured).length} runs${longNote} in ${path.relative(process.cwd(), GOLDEN_FILE)}\n`);
    return 0;
  }
  process.stdout.write(moved === 0 ? 'golden: every run gives its recorded digests\n' : `golden: ${moved} run(s) differ from the record; --write records them\n`);
  return moved === 0 ? 0 : 1;
}

process.exit(main(process.argv.slice(2)));
