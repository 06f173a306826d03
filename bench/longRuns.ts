// The benchmarks' long runs, pinned by their report digests in test/fixtures/golden-digests.json
// (`long_runs`): the e2e benchmark's 10,000 generated requests and the whole Mooncake conversation
// trace on 16, 64 and 256 workers and twice on 16. The example configs' golden digests pin short
// runs; these pin the long ones, where caches fill, evict and refill for minutes of virtual time,
// so that a change made for speed that changes results is seen. `npm run golden -- --long` checks
// them (and records them with --write); the e2e, trace and scale benchmarks print theirs beside
// the record, a moved one counting as a missed target.
import fs from 'node:fs';
import { E2E_REQUESTS, E2E_RUN_NAME, runEndToEnd } from './endToEnd';
import { runWholeTrace, TRACE, wholeTraceRunName } from './traceRun';

export interface LongRun {
  name: string;
  /** Needs the published trace beside the checkout (TRACE). */
  needsTrace: boolean;
  /** Runs it in this process (seconds each) and gives its report digest. */
  digest(): string;
}

/** Every long run, in the record's order. */
export function longRuns(): LongRun[] {
  const trace = (workers: number, twice: boolean): LongRun => ({ name: wholeTraceRunName(workers, twice), needsTrace: true, digest: () => runWholeTrace(workers, twice).digest });
  return [{ name: E2E_RUN_NAME, needsTrace: false, digest: () => runEndToEnd(E2E_REQUESTS).digest }, trace(16, false), trace(64, false), trace(256, false), trace(16, true)];
}

export function haveTrace(): boolean {
  return fs.existsSync(TRACE);
}
