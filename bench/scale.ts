// `npm run bench -- scale`: the whole Mooncake conversation trace (12,031 requests) on 16, 64 and
// 256 aggregated workers, and the trace followed by a time-shifted copy of itself on 16 workers,
// each in a fresh process (bench/traceRun.ts), three rounds of all four (interleaved, so that a change
// of load on a shared machine falls on each alike): the median wall time, the highest peak memory and
// the report size of each. Its figures are the targets of the large-cluster work (256 workers within
// 1.5× the wall time of 16, every run within 300 MB) and of twice the requests within 2.1× the wall
// time, printed with met / MISSED by bench/index.ts, and each run's report digest beside the one
// the golden record keeps for it (bench/longRuns.ts: a moved digest counts as missed).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchFigure, TargetFigure } from './harness';
import { median } from './harness';
import { TRACE, wholeTraceRunName, type WholeTraceRun as TraceFigures } from './traceRun';
import { digestFigure } from './recordedDigests';

const WORKER_COUNTS = [16, 64, 256];
const ROUNDS = 3;
const PEAK_TARGET_MB = 300;
const SCALE_TARGET = 1.5;
/** Twice the requests should take at most a little more than twice the time (issue 10). */
const DOUBLED_TARGET = 2.1;

/** One configuration's runs: what each measured, and their median wall and highest peak. */
interface Runs {
  name: string;
  /** Its name in the golden record's long runs (bench/longRuns.ts). */
  recordName: string;
  passes: TraceFigures[];
}

function traceRun(args: string[]): TraceFigures {
  const run = spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'traceRun.ts'), ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`bench/traceRun.ts ${args.join(' ')} failed (${run.status}): ${run.stderr.slice(0, 500)}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as TraceFigures;
}

const wallOf = (runs: Runs) => median(runs.passes.map((pass) => pass.wall_s));
const peakOf = (runs: Runs) => Math.max(...runs.passes.map((pass) => pass.peak_rss_mb));

function describe(runs: Runs): string {
  const [first] = runs.passes;
  const digests = new Set(runs.passes.map((pass) => pass.digest));
  if (digests.size !== 1) throw new Error(`the runs of ${runs.name} gave different digests: ${[...digests].join(', ')}`);
  const walls = runs.passes.map((pass) => pass.wall_s.toFixed(2)).join(', ');
  const peaks = runs.passes.map((pass) => Math.round(pass.peak_rss_mb)).join(', ');
  return (
    `scale: ${runs.name}: ${first.finished}/${first.requests} requests in ${wallOf(runs).toFixed(2)} s wall, median of ${walls} ` +
    `(${Math.round(first.requests / wallOf(runs))} requests/s), peak ${Math.round(peakOf(runs))} MB, highest of ${peaks}, ` +
    `report ${first.report_mb.toFixed(1)} MB\n`
  );
}

export function runScaleBenchmark(): BenchFigure[] {
  if (!fs.existsSync(TRACE)) {
    process.stdout.write(`scale: skipped, the trace ${TRACE} is not there\n`);
    return [];
  }
  const byWorkers: Runs[] = WORKER_COUNTS.map((workers) => ({ name: `${workers} workers`, recordName: wholeTraceRunName(workers, false), passes: [] }));
  const twice: Runs = { name: 'the trace twice (the copy time-shifted), 16 workers', recordName: wholeTraceRunName(16, true), passes: [] };
  for (let round = 0; round < ROUNDS; round++) {
    WORKER_COUNTS.forEach((workers, i) => byWorkers[i].passes.push(traceRun([String(workers)])));
    twice.passes.push(traceRun(['16', '--doubled']));
  }
  for (const runs of [...byWorkers, twice]) process.stdout.write(describe(runs));
  const [sixteen] = byWorkers;
  return [
    { benchmark: 'scale', label: 'wall(trace twice) ÷ wall(trace), 16 workers, medians', value: wallOf(twice) / wallOf(sixteen), unit: '×', target: DOUBLED_TARGET, better: 'lower', decimals: 2 },
    ...byWorkers.map((runs): TargetFigure => ({ benchmark: 'scale', label: `peak RSS, ${runs.name} (highest run)`, value: peakOf(runs), unit: 'MB', target: PEAK_TARGET_MB, better: 'lower' })),
    { benchmark: 'scale', label: 'wall(256 workers) ÷ wall(16 workers), medians', value: wallOf(byWorkers[byWorkers.length - 1]) / wallOf(sixteen), unit: '×', target: SCALE_TARGET, better: 'lower', decimals: 2 },
    ...[...byWorkers, twice].map((runs) => digestFigure('scale', runs.recordName, runs.passes[0].digest)),
  ];
}
