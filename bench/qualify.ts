// `npm run bench -- qualify`: the wall time of `npm run qualify` (the whole command, as a user
// types it: both suite runs, the generated workloads, the coverage run, the sign-off) into a
// temporary --out folder, once; target ≤ 10 s. Prints its verdict and the CPU time it used (user +
// system of every process it started) beside the wall time. May read the clock.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TargetFigure } from './harness';
import { childCpuSeconds, wallSeconds } from './harness';
import { EXIT_NOT_QUALIFIED, EXIT_QUALIFIED, NARROWED_EXIT_STATUS } from '../src/signoff/narrowed';

const ROOT = path.resolve(__dirname, '..');
const WALL_TARGET_S = 10;

/** `npm` as this bench was started (npm_execpath under `npm run`), else the one on PATH. */
export function npmCommand(): { command: string; args: string[] } {
  const npmCli = process.env.npm_execpath;
  return npmCli && fs.existsSync(npmCli) ? { command: process.execPath, args: [npmCli] } : { command: 'npm', args: [] };
}

/**
 * Whether qualify's exit status says it ran the whole qualification: 0 QUALIFIED, 1 NOT QUALIFIED,
 * and 3 a narrowed run (PASSED — NOT A RELEASE SIGN-OFF: a working tree that differs from its
 * commit, as a change being measured, or the bench's own results file, makes one); 2 (usage) and
 * anything else did not.
 */
export function ranWholeQualification(status: number | null): boolean {
  return status === EXIT_QUALIFIED || status === EXIT_NOT_QUALIFIED || status === NARROWED_EXIT_STATUS;
}

export function runQualifyBenchmark(): TargetFigure[] {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-bench-qualify-'));
  try {
    const npm = npmCommand();
    const cpuBefore = childCpuSeconds();
    const started = wallSeconds();
    const run = spawnSync(npm.command, [...npm.args, 'run', 'qualify', '--', '--out', out], { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    const wall_s = wallSeconds() - started;
    const cpuAfter = childCpuSeconds();
    const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    const verdict = /^verdict: (.*)$/m.exec(output)?.[1];
    if (!ranWholeQualification(run.status) || verdict === undefined) {
      process.stdout.write(`qualify: npm run qualify did not run to a verdict (exit ${run.status}):\n${output.slice(-1500)}\n`);
      return [{ benchmark: 'qualify', label: 'wall of npm run qualify', value: Number.NaN, unit: 's', target: WALL_TARGET_S, better: 'lower', decimals: 1 }];
    }
    const phases = [...output.matchAll(/^\[(\d+)\/(\d+)\] .*\(([\d.]+ s)\)$/gm)].map((m) => `${m[1]}: ${m[3]}`).join(', ');
    const cpu = cpuBefore === null || cpuAfter === null ? '' : `, ${(cpuAfter - cpuBefore).toFixed(1)} s CPU`;
    process.stdout.write(`qualify: ${verdict} in ${wall_s.toFixed(1)} s wall${cpu} (load ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} cores); phases ${phases}\n`);
    return [{ benchmark: 'qualify', label: 'wall of npm run qualify', value: wall_s, unit: 's', target: WALL_TARGET_S, better: 'lower', decimals: 1 }];
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}
