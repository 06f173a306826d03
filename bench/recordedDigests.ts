// The long runs' report digests as test/fixtures/golden-digests.json records them (`long_runs`; see
// bench/longRuns.ts), and a benchmark's digest beside its record as a figure --check judges.
import fs from 'node:fs';
import type { DigestFigure } from './harness';
import { GOLDEN_FILE, readGolden } from '../test/support/golden';

/** The digest recorded for a long run, or null (no record file, or nothing recorded for it). */
export function recordedLongDigest(name: string): string | null {
  if (!fs.existsSync(GOLDEN_FILE)) return null;
  return readGolden().long_runs?.[name] ?? null;
}

/** A benchmark's long-run digest beside its record, for the bench to print and --check to judge. */
export function digestFigure(benchmark: string, run: string, digest: string): DigestFigure {
  return { kind: 'digest', benchmark, run, digest, recorded: recordedLongDigest(run) };
}
