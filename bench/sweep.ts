// `npm run bench -- sweep`: a 32-point sweep (4 event lags × 4 G2 sizes × 2 seeds) over the first
// 2,000 requests of the Mooncake conversation trace (examples/configs/mooncake-conversation.yaml),
// run by `kvqual sweep` in a fresh process with --jobs 1 and then --jobs 2: wall time, points per
// second, the speed-up, and whether both runs gave the same results apart from wall times.
// Figures only; nothing is asserted. May read the clock.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRACE } from './traceRun';
import type { TargetFigure } from './harness';
import { childCpuSeconds, wallSeconds } from './harness';

const ROOT = path.resolve(__dirname, '..');
const BASE = path.join(ROOT, 'examples', 'configs', 'mooncake-conversation.yaml');
const JOB_COUNTS = [1, 2];

function sweepText(): string {
  return `base: ${JSON.stringify(BASE)}
grid:
  router.kv_event_lag_ms: [0, 1, 10, 100]
  cluster.workers[0].host_offload.num_host_blocks: [4096, 16384, 32768, 65536]
seeds: [1893, 7]
`;
}

export function runSweepBenchmark(): TargetFigure[] {
  if (!fs.existsSync(TRACE)) {
    process.stdout.write(`sweep: skipped, the trace ${TRACE} is not there\n`);
    return [];
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-bench-sweep-'));
  const sweepFile = path.join(dir, 'sweep.yaml');
  fs.writeFileSync(sweepFile, sweepText());
  const results: { jobs: number; seconds: number; json: string }[] = [];
  try {
    for (const jobs of JOB_COUNTS) {
      const out = path.join(dir, `jobs-${jobs}`);
      const started = wallSeconds();
      const cpuBefore = childCpuSeconds();
      const run = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'kvqual.js'), 'sweep', sweepFile, '--jobs', String(jobs), '--out', out, '--trace-root', path.dirname(TRACE)], { encoding: 'utf8', maxBuffer: 1 << 24 });
      const seconds = wallSeconds() - started;
      const cpuAfter = childCpuSeconds();
      const cpu = cpuBefore === null || cpuAfter === null ? '' : `; CPU ${(cpuAfter - cpuBefore).toFixed(1)} s, ${((cpuAfter - cpuBefore) / seconds).toFixed(2)} cores busy on average`;
      if (run.status !== 0) throw new Error(`the sweep with --jobs ${jobs} failed (${run.status}): ${run.stderr.slice(-500)}`);
      const json = fs.readFileSync(path.join(out, 'sweep.json'), 'utf8');
      const points = (JSON.parse(json) as { points: { wall_ms: number }[] }).points;
      const replaySeconds = points.reduce((sum, point) => sum + point.wall_ms, 0) / 1000;
      results.push({ jobs, seconds, json });
      process.stdout.write(
        `sweep: --jobs ${jobs}: ${points.length} points in ${seconds.toFixed(1)} s wall (whole command: start, trace checks, charts, writing) = ` +
          `${(points.length / seconds).toFixed(2)} points/s; the replays alone took ${replaySeconds.toFixed(1)} s of thread time (${(replaySeconds / points.length).toFixed(2)} s a point)${cpu}\n`,
      );
    }
    const [one, two] = results;
    const same = one.json.replace(/"wall_ms": \d+/g, '') === two.json.replace(/"wall_ms": \d+/g, '');
    process.stdout.write(`sweep: speed-up with --jobs 2 = ${(one.seconds / two.seconds).toFixed(2)}× on ${os.availableParallelism()} cores (${os.loadavg()[0].toFixed(1)} load); results identical apart from wall times: ${same ? 'yes' : 'NO'}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // Figures only: the sweep has no targets.
  return [];
}
