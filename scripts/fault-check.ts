// The planted-fault check of `npm run qualify` on its own, in one process, for a run 1 stream already
// written (src/signoff/faults.ts says what it checks; qualify itself runs the same check after run 1
// in run 1's own process, scripts/first-run.ts): the step definitions are loaded once through
// cucumber's API, then the scenarios run
// once per planted simulator fault (src/fuzz/simulatorFaults.ts), the fault switched between the runs,
// each run given only the survivors of the one before (scripts/suiteInProcess.ts). One Node start and one load of the steps,
// where a cucumber process per fault would pay both fifteen times.
//
//   node --require tsx/cjs scripts/fault-check.ts RUN1_MESSAGES OUT_JSON [FAULT…]
//
// RUN1_MESSAGES is run 1's message stream (what passed there is tried); OUT_JSON receives the
// FaultCheck. The run's profile is cucumber.js's `replay`. FAULT… tries only those faults, in that
// order (the tests of the check and an inquiry into one scenario); qualify always tries them all.
import fs from 'node:fs';
import path from 'node:path';
import { parseRun } from '../src/signoff/messages';
import { SIMULATOR_FAULT_ENV, SIMULATOR_FAULT_NAMES, simulatorFaultAsked } from '../src/fuzz/simulatorFaults';
import { faultCheckInProcess } from './suiteInProcess';

async function main(argv: string[]): Promise<void> {
  const [firstMessages, out, ...only] = argv;
  if (firstMessages === undefined || out === undefined) throw new Error('usage: fault-check.ts RUN1_MESSAGES OUT_JSON [FAULT…]');
  const faults = only.length === 0 ? SIMULATOR_FAULT_NAMES : only.map((name) => simulatorFaultAsked({ [SIMULATOR_FAULT_ENV]: name })!);
  const first = parseRun(fs.readFileSync(firstMessages, 'utf8'));
  const check = await faultCheckInProcess(path.resolve(__dirname, '..'), process.env, first, faults);
  fs.writeFileSync(out, `${JSON.stringify(check)}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`fault-check: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 2;
});
