// `npm run bench -- trace`: the whole Mooncake conversation trace (12,031 requests) on 16
// aggregated workers with private G2, and beside it, in the same bench run, the ingest-only pass
// (read, parse and block-hash the trace), each in fresh processes (bench/traceRun.ts), three
// passes of each. Figures: simulated requests per wall second (median replay; target ≥ 7,700), the
// replay's wall over the ingest's wall (medians; target ≤ 10), the peak RSS of a fresh replay
// process (the highest of the passes; target ≤ 300 MB) and the replay's report digest beside the
// one the golden record keeps (bench/longRuns.ts: a moved digest counts as missed). Beside them, in
// the same rounds, the same replay through the command line as a user runs it (`kvqual replay`,
// bench/cliReplay.ts: the whole process timed from outside): its requests per wall second (target
// ≥ 7,700), its wall over the runner's (medians; target ≤ 1.1: the command line should cost no more
// than its start), its peak RSS (≤ 300 MB) and its digest beside the record. May read the clock.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchFigure } from './harness';
import { childCpuSeconds, median } from './harness';
import { TRACE, wholeTraceRunName, type WholeTraceRun as ReplayPass } from './traceRun';
import { digestFigure } from './recordedDigests';
import { cliReplayPass, howKvqualRuns, writeWholeTraceConfig, type CliReplayPass } from './cliReplay';

const WORKERS = 16;
const PASSES = 3;
const REQUESTS_PER_SECOND_TARGET = 7_700;
const WALL_OVER_INGEST_TARGET = 10;
const PEAK_RSS_TARGET_MB = 300;
const CLI_OVER_RUNNER_TARGET = 1.1;

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
  const clis: CliReplayPass[] = [];
  const cliConfig = writeWholeTraceConfig(WORKERS);
  // Interleaved, so that a change of load on a shared machine falls on all alike.
  try {
    for (let i = 0; i < PASSES; i++) {
      ingests.push(freshPass<IngestPass>('--ingest').pass);
      const replay = freshPass<ReplayPass>(String(WORKERS));
      replays.push(replay.pass);
      if (replay.cpu_s !== null) replayCpu.push(replay.cpu_s);
      clis.push(cliReplayPass(cliConfig.config));
    }
  } finally {
    fs.rmSync(cliConfig.folder, { recursive: true, force: true });
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
      `; ingest only (read, parse, hash ${ingests[0].blocks.toLocaleString('en-US')} blocks) ${seconds(ingests.map((pass) => pass.wall_s))} s wall` +
      `; kvqual replay (the whole process, ${howKvqualRuns()}) ${seconds(clis.map((pass) => pass.wall_s))} s wall` +
      (clis.every((pass) => pass.cpu_s !== null) ? ` (${seconds(clis.map((pass) => pass.cpu_s!))} s CPU)` : '') +
      '\n',
  );
  const cliWall = median(clis.map((pass) => pass.wall_s));
  return [
    { benchmark: 'trace', label: 'simulated requests per wall second (median replay)', value: first.requests / replayWall, unit: 'requests/s', target: REQUESTS_PER_SECOND_TARGET, better: 'higher' },
    { benchmark: 'trace', label: `replay wall ÷ ingest-only wall (${replayWall.toFixed(2)} s ÷ ${ingestWall.toFixed(2)} s)`, value: replayWall / ingestWall, unit: '×', target: WALL_OVER_INGEST_TARGET, better: 'lower', decimals: 1 },
    { benchmark: 'trace', label: 'peak RSS of a fresh replay process (highest pass)', value: Math.max(...replays.map((pass) => pass.peak_rss_mb)), unit: 'MB', target: PEAK_RSS_TARGET_MB, better: 'lower' },
    digestFigure('trace', wholeTraceRunName(WORKERS, false), first.digest),
    { benchmark: 'trace', label: 'kvqual replay: simulated requests per wall second of the whole process (median)', value: first.requests / cliWall, unit: 'requests/s', target: REQUESTS_PER_SECOND_TARGET, better: 'higher' },
    { benchmark: 'trace', label: `kvqual replay wall ÷ the runner's replay wall (${cliWall.toFixed(2)} s ÷ ${replayWall.toFixed(2)} s)`, value: cliWall / replayWall, unit: '×', target: CLI_OVER_RUNNER_TARGET, better: 'lower', decimals: 2 },
    { benchmark: 'trace', label: 'kvqual replay: peak RSS (highest pass)', value: Math.max(...clis.map((pass) => pass.peak_rss_mb)), unit: 'MB', target: PEAK_RSS_TARGET_MB, better: 'lower' },
    ...[...new Set(clis.map((pass) => pass.digest))].map((digest) => digestFigure('trace (kvqual replay)', wholeTraceRunName(WORKERS, false), digest)),
  ];
}
