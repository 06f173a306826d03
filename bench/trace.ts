// `npm run bench -- trace`: the whole Mooncake conversation trace (12,031 requests) on 16
// aggregated workers with private G2, and beside it, in the same bench run, the ingest-only pass
// (read, parse and block-hash the trace), each in fresh processes (bench/traceRun.ts), three
// passes of each. Figures: simulated requests per wall second (median replay; target ≥ 7,700), the
// replay's wall over the ingest's wall (medians; target ≤ 10), the peak RSS of a fresh replay
// process (the highest of the passes; target ≤ 300 MB) and the replay's report digest beside the
// one the golden record keeps (bench/longRuns.ts: a moved digest counts as missed). May read the clock.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchFigure } from './harness';
import { childCpuSeconds, median } from './harness';
import { TRACE, wholeTraceRunName, type WholeTraceRun as ReplayPass } from './traceRun';
import { digestFigure } from './recordedDigests';

const WORKERS = 16;
const PASSES = 3;
const REQUESTS_PER_SECOND_TARGET = 7_700;
const WALL_OVER_INGEST_TARGET = 10;
const PEAK_RSS_TARGET_MB = 300;

interface IngestPass {
  requests: number;
  blocks: number;
  wall_s: number;
  peak_rss_mb: number;
}

/** Runs bench/traceRun.ts with `arg` in a fresh process; returns its JSON line and the CPU seconds it used. */
function freshPass<T>(arg: string): { pass: T; cpu_s: number | null } {
  const cpuBefore = childCpuSeconds();
  const run = spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'traceRun.ts'), arg], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`bench/traceRun.ts ${arg} failed (${run.status}): ${run.stderr.slice(0, 500)}`);
  const cpuAfter = childCpuSeconds();
  return { pass: JSON.parse(run.stdout.trim().split('\n').at(-1)!) as T, cpu_s: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore };
}

const seconds = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');

export function runTraceBenchmark(): BenchFigure[] {
  if (!fs.existsSync(TRACE)) {
    process.stdout.write(`trace: skipped, the trace ${TRACE} is not there\n`);
    return [];
  }
  const ingests: IngestPass[] = [];
  const replays: ReplayPass[] = [];
  const replayCpu: number[] = [];
  // Interleaved, so that a change of load on a shared machine falls on both alike.
  for (let i = 0; i < PASSES; i++) {
    ingests.push(freshPass<IngestPass>('--ingest').pass);
    const replay = freshPass<ReplayPass>(String(WORKERS));
    replays.push(replay.pass);
    if (replay.cpu_s !== null) replayCpu.push(replay.cpu_s);
  }
  const digests = new Set(replays.map((pass) => pass.digest));
  if (digests.size !== 1) throw new Error(`the ${PASSES} replays of the trace gave different digests: ${[...digests].join(', ')}`);
  const [first] = replays;
  const replayWall = median(replays.map((pass) => pass.wall_s));
  const ingestWall = median(ingests.map((pass) => pass.wall_s));
  process.stdout.write(
    `trace: ${first.finished}/${first.requests} requests on ${WORKERS} workers with G2, ${PASSES} fresh processes each (load ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} cores): ` +
      `replay ${seconds(replays.map((pass) => pass.wall_s))} s wall` +
      (replayCpu.length > 0 ? ` (whole process ${seconds(replayCpu)} s CPU)` : '') +
      `; ingest only (read, parse, hash ${ingests[0].blocks.toLocaleString('en-US')} blocks) ${seconds(ingests.map((pass) => pass.wall_s))} s wall\n`,
  );
  return [
    { benchmark: 'trace', label: 'simulated requests per wall second (median replay)', value: first.requests / replayWall, unit: 'requests/s', target: REQUESTS_PER_SECOND_TARGET, better: 'higher' },
    { benchmark: 'trace', label: `replay wall ÷ ingest-only wall (${replayWall.toFixed(2)} s ÷ ${ingestWall.toFixed(2)} s)`, value: replayWall / ingestWall, unit: '×', target: WALL_OVER_INGEST_TARGET, better: 'lower', decimals: 1 },
    { benchmark: 'trace', label: 'peak RSS of a fresh replay process (highest pass)', value: Math.max(...replays.map((pass) => pass.peak_rss_mb)), unit: 'MB', target: PEAK_RSS_TARGET_MB, better: 'lower' },
    digestFigure('trace', wholeTraceRunName(WORKERS, false), first.digest),
  ];
}
