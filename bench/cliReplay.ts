// The whole trace through the command line, as a user runs it, for the `trace` benchmark: `node
// bin/kvqual.js replay` of the example config on N workers over the whole trace (no max_requests),
// in a fresh process timed from outside (Node's start, loading kvqual, reading the trace, the
// replay, the summary and its digest), its peak RSS told by a hook loaded before kvqual
// (bench/peakRss.js), and the digest its summary prints. May read the clock.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childCpuSeconds, wallSeconds } from './harness';
import { TRACE } from './traceRun';

const ROOT = path.resolve(__dirname, '..');
const EXAMPLE = path.join(ROOT, 'examples', 'configs', 'mooncake-conversation.yaml');

/** One `kvqual replay` of the whole trace. */
export interface CliReplayPass {
  wall_s: number;
  /** CPU seconds of the whole process (null where /proc does not tell). */
  cpu_s: number | null;
  peak_rss_mb: number;
  digest: string;
}

/** A config file for the whole trace on `workers` workers, in a fresh temporary folder; the caller removes the folder. */
export function writeWholeTraceConfig(workers: number): { folder: string; config: string } {
  const text = fs
    .readFileSync(EXAMPLE, 'utf8')
    .replace(/replicas: \d+/, `replicas: ${workers}`)
    .replace(/^\s*max_requests: \d+\s*$/m, '')
    .replace(/^(\s*trace: ).*$/m, `$1${JSON.stringify(TRACE)}`);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-bench-cli-'));
  const config = path.join(folder, `whole-trace-${workers}.yaml`);
  fs.writeFileSync(config, text);
  return { folder, config };
}

/** Runs `kvqual replay CONFIG` in a fresh process (summary on standard output, as a user sees it) and reads its figures. */
export function cliReplayPass(config: string): CliReplayPass {
  const cpuBefore = childCpuSeconds();
  const started = wallSeconds();
  const run = spawnSync(process.execPath, ['--require', path.join(__dirname, 'peakRss.js'), path.join(ROOT, 'bin', 'kvqual.js'), 'replay', config, '--trace-root', path.dirname(TRACE)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const wall_s = wallSeconds() - started;
  const cpuAfter = childCpuSeconds();
  if (run.status !== 0) throw new Error(`kvqual replay ${config} failed (${run.status}): ${run.stderr.slice(0, 500)}`);
  const digest = /^ {2}digest (sha256:[0-9a-f]{64})$/m.exec(run.stdout)?.[1];
  const rss = /^peak_rss_kb (\d+)$/m.exec(run.stderr)?.[1];
  if (digest === undefined || rss === undefined) throw new Error(`kvqual replay ${config}: no digest in its summary or no peak RSS from bench/peakRss.js:\n${run.stdout.slice(-300)}${run.stderr.slice(-300)}`);
  return { wall_s, cpu_s: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore, peak_rss_mb: Number(rss) / 1024, digest };
}

/** How bin/kvqual.js runs here: compiled, when build/cli is current (bin/compiled.js), or through tsx. */
export function howKvqualRuns(): string {
  const { currentBuild } = require(path.join(ROOT, 'bin', 'compiled.js')) as { currentBuild: () => string | null };
  return currentBuild() === null ? 'through tsx: build/cli is missing or stale, npm run build makes it' : 'compiled in build/cli';
}
