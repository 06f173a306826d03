// `npm run bench -- loops`: what a person waits for, each beside a plain `npx cucumber-js` run of
// the whole suite made just before it on the same machine (so that the ratio, not the seconds,
// carries from a loaded machine to a quiet one): `npm run qualify` (the whole command, into a
// temporary --out folder; target ≤ 3× the plain run) and `npm test` (target ≤ 18×). Each is run
// once, as a user types it; the wall times, the CPU time of every process each started and the
// load are printed beside the ratios. Takes minutes: run only when named. May read the clock.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TargetFigure } from './harness';
import { childCpuSeconds, wallSeconds } from './harness';
import { npmCommand, ranWholeQualification } from './qualify';

const ROOT = path.resolve(__dirname, '..');

/** The loops and their targets, as multiples of a plain suite run. */
export const LOOP_TARGETS = { qualify: 3, test: 18 } as const;

/** One command's wall and CPU time (user + system of what it started), and whether it ran to the end it should. */
export interface Timed {
  wall_s: number;
  cpu_s: number | null;
  ok: boolean;
  output: string;
}

function timed(command: string, args: string[], ok: (status: number | null, output: string) => boolean): Timed {
  const cpuBefore = childCpuSeconds();
  const started = wallSeconds();
  const run = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, KVQUAL_TEST_VERBOSE: '' } });
  const wall_s = wallSeconds() - started;
  const cpuAfter = childCpuSeconds();
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  return { wall_s, cpu_s: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore, ok: ok(run.status, output), output };
}

/** `npx cucumber-js` as a user runs it: the whole suite, to its count of scenarios (a failed one still ran). */
function plainSuiteRun(): Timed {
  return timed(path.join(ROOT, 'node_modules', '.bin', 'cucumber-js'), [], (_status, output) => /^\d+ scenarios? \(/m.test(output));
}

/** A loop's figure: its wall time over the plain run's, against its target (NaN when either did not run to its end). */
export function loopRatio(label: string, loop: Timed, plain: Timed, target: number): TargetFigure {
  const value = loop.ok && plain.ok && plain.wall_s > 0 ? loop.wall_s / plain.wall_s : Number.NaN;
  return { benchmark: 'loops', label: `${label} beside a plain suite run`, value, unit: '×', target, better: 'lower', decimals: 1 };
}

/** "npm test 143.7 s wall, 251.0 s CPU; plain suite run 3.4 s wall (load 1.2 on 2 cores)" */
export function loopLine(label: string, loop: Timed, plain: Timed, load: number): string {
  const cpu = (t: Timed) => (t.cpu_s === null ? '' : `, ${t.cpu_s.toFixed(1)} s CPU`);
  const failed = (t: Timed) => (t.ok ? '' : ' (did not run to its end)');
  return `loops: ${label} ${loop.wall_s.toFixed(1)} s wall${cpu(loop)}${failed(loop)}; plain suite run ${plain.wall_s.toFixed(1)} s wall${cpu(plain)}${failed(plain)} (load ${load.toFixed(1)} on ${os.availableParallelism()} cores)`;
}

export function runLoopsBenchmark(): TargetFigure[] {
  const npm = npmCommand();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-bench-loops-'));
  try {
    const beforeQualify = plainSuiteRun();
    const qualify = timed(npm.command, [...npm.args, 'run', 'qualify', '--', '--out', out], (status, output) => ranWholeQualification(status) && /^verdict: /m.test(output));
    process.stdout.write(`${loopLine('npm run qualify', qualify, beforeQualify, os.loadavg()[0])}\n`);
    const beforeTest = plainSuiteRun();
    // npm test's last line says what passed and failed (scripts/test.js); a run that failed still took its time, and says so.
    const test = timed(npm.command, [...npm.args, 'test'], (status, output) => /^\d+ passed, \d+ failed$/m.test(output));
    process.stdout.write(`${loopLine('npm test', test, beforeTest, os.loadavg()[0])}\n`);
    const summary = /^(\d+ passed, \d+ failed)$/m.exec(test.output)?.[1];
    if (summary !== undefined) process.stdout.write(`loops: npm test: ${summary}\n`);
    for (const [name, run] of [['plain suite run', beforeQualify], ['npm run qualify', qualify], ['plain suite run', beforeTest], ['npm test', test]] as const) {
      if (!run.ok) process.stdout.write(`loops: ${name} did not run to its end:\n${run.output.slice(-1500)}\n`);
    }
    return [loopRatio('npm run qualify', qualify, beforeQualify, LOOP_TARGETS.qualify), loopRatio('npm test', test, beforeTest, LOOP_TARGETS.test)];
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}
