// `npm run golden`: replays every example config as test/unit/golden-digests.test.ts does and
// prints each run's report digest and KV event log digest beside the recorded ones
// (test/fixtures/golden-digests.json), marking those that moved. `--write` records them instead:
// for a change of results made on purpose (say why in docs/model.md). Needs ../shared for the
// Mooncake examples: without it, it prints them as not run and refuses to write.
// Exit 0 when nothing moved (or the record was written), 1 when something moved, 2 for bad arguments.
//
//   npm run golden [-- --write]
import fs from 'node:fs';
import path from 'node:path';
import { GOLDEN_FILE, goldenRuns, goldenText, measureGolden, readGolden, SHARED, type GoldenDigests } from '../test/support/golden';

function main(argv: string[]): number {
  const unknown = argv.filter((arg) => arg !== '--write');
  if (unknown.length > 0) {
    process.stderr.write(`golden: unknown argument ${unknown[0]}; usage: npm run golden [-- --write]\n`);
    return 2;
  }
  const write = argv.includes('--write');
  const haveShared = fs.existsSync(path.join(SHARED, 'data', 'mooncake'));
  const recorded = fs.existsSync(GOLDEN_FILE) ? readGolden().runs : {};
  const measured: Record<string, GoldenDigests> = {};
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
    process.stdout.write(`${same ? 'same ' : before === undefined ? 'new  ' : 'MOVED'} ${run.name}\n      report ${now.report}${now.events === null ? '' : `\n      events ${now.events}`}\n`);
    if (!same && before !== undefined) process.stdout.write(`      (recorded: report ${before.report}${before.events === null ? '' : `, events ${before.events}`})\n`);
  }
  if (write) {
    if (!haveShared) {
      process.stderr.write('golden: --write needs ../shared/data/mooncake (the Mooncake examples would go unrecorded)\n');
      return 2;
    }
    fs.writeFileSync(GOLDEN_FILE, goldenText(measured));
    process.stdout.write(`golden: recorded ${Object.keys(measured).length} runs in ${path.relative(process.cwd(), GOLDEN_FILE)}\n`);
    return 0;
  }
  process.stdout.write(moved === 0 ? 'golden: every run gives its recorded digests\n' : `golden: ${moved} run(s) differ from the record; --write records them\n`);
  return moved === 0 ? 0 : 1;
}

process.exit(main(process.argv.slice(2)));
