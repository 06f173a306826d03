// How the driver has cucumber run the suite: one run asked for as a SuiteRun (profile, paths, shard,
// order, report files, environment), and the SuiteRunner that makes it, and makes run 1 followed by
// the planted-fault check of its stream. The default, for `npm run qualify`, is real processes:
// cucumber-js's command line for a run, and for run 1 and its faults one process
// (scripts/first-run.ts: the longest chain of phases pays one Node start and one load of the steps,
// not two). A caller may give another runner through DriverContext.suiteRunner (the tests run the
// suite in their own process through cucumber's API: scripts/suiteInProcess.ts). The
// runs that are processes by nature stay processes whatever the runner: the compiled run under c8
// (coverage is collected per process) and a scenario replayed alone (the isolation proof is that
// it passes in a fresh process: aloneRun).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DriverContext } from './context';
import type { FaultCheck } from './faults';
import type { AloneRun } from './isolation';
import { readRun } from './runStreams';
import { spawn, tool, type Spawned } from './spawn';

/** One cucumber run of the suite or of some of its scenarios. */
export interface SuiteRun {
  /** cucumber.js's profile: `replay` (TypeScript through tsx) or `compiled` (build/, processes only). */
  profile: 'replay' | 'compiled';
  /** Feature files, globs or `file:line`, relative to the repository root. */
  paths: string[];
  /** cucumber's `--shard i/n`, or null for every scenario. */
  shard: string | null;
  /** cucumber's `--order` (`random:SEED`), or null for file order. */
  order: string | null;
  /** The report files cucumber's own formatters write, relative to the repository root (`summary`: its summary formatter on the console instead of the progress marks). */
  reports: { html?: string; junit?: string; message?: string; summary?: boolean };
  /** The run's whole environment (the steps read their test doubles and the run nonce there). */
  env: NodeJS.ProcessEnv;
  /** Work beside the longest phase: at a lower priority where that means something (spawn.ts). */
  beside: boolean;
}

/** Run 1 and the planted-fault check after it, as they end. */
export interface FirstRun {
  /** Run 1 has ended (its reports are written): what it printed, its summary line last. */
  ended: Promise<string>;
  /** Its exit status as cucumber's command line gives it (0 when the run succeeded, 1 when not) and what its process printed, once that has ended (after the faults, when they share it). */
  exited: Promise<Spawned>;
  /** The planted-fault check (faults.ts) of what passed in its message stream, in its environment; null when it wrote none. What kept the check from completing is one of its problems. */
  faults: Promise<FaultCheck | null>;
}

export interface SuiteRunner {
  /** One run: its exit status as cucumber's command line gives it (0 when the run succeeded, 1 when not) and what it printed (its progress and summary line). */
  run(ctx: DriverContext, request: SuiteRun): Promise<Spawned>;
  /** Run 1 (`request`, which writes a message stream), then the planted-fault check of its stream. */
  runFirst(ctx: DriverContext, request: SuiteRun): FirstRun;
}

/** The planted-fault check of the stream `firstMessages` (an absolute path), in `env`. */
export type CheckFaults = (ctx: DriverContext, env: NodeJS.ProcessEnv, firstMessages: string, beside: boolean) => Promise<FaultCheck>;

/** Run 1 by `run`, then, when it wrote its stream, the planted-fault check by `checkFaults`: a runner's runFirst from its two parts. */
export function firstThenFaults(ctx: DriverContext, request: SuiteRun, run: SuiteRunner['run'], checkFaults: CheckFaults): FirstRun {
  const exited = run(ctx, request);
  const stream = request.reports.message === undefined ? null : path.resolve(ctx.root, request.reports.message);
  const faults = exited.then(() => (stream !== null && fs.existsSync(stream) ? checkFaults(ctx, request.env, stream, request.beside) : null));
  return { ended: exited.then((done) => done.output), exited, faults };
}

/** The command-line arguments of cucumber-js for a run. */
export function cucumberArgs(request: SuiteRun): string[] {
  const { reports } = request;
  return [
    '--profile',
    request.profile,
    ...request.paths,
    ...(request.shard === null ? [] : ['--shard', request.shard]),
    ...(request.order === null ? [] : ['--order', request.order]),
    ...(reports.html === undefined ? [] : ['--format', `html:${reports.html}`]),
    ...(reports.junit === undefined ? [] : ['--format', `junit:${reports.junit}`]),
    ...(reports.message === undefined ? [] : ['--format', `message:${reports.message}`]),
    ...(reports.summary ? ['--format', 'summary'] : []),
  ];
}

/** The line scripts/first-run.ts prints once run 1 has ended, before its planted faults. */
export const FIRST_RUN_ENDED = 'kvqual first-run: run 1 has ended';

/**
 * Run 1 and its planted-fault check in one process (scripts/first-run.ts: run 1 through cucumber's
 * API with its reports, its progress and summary printed, the line FIRST_RUN_ENDED, then the
 * faults, the steps loaded once; its exit status is run 1's as cucumber's command line gives it).
 * What kept the check from completing is a problem of the check.
 */
function processFirstRun(ctx: DriverContext, request: SuiteRun): FirstRun {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-faults-'));
  const out = path.join(dir, 'faults.json');
  let end: (output: string) => void = () => undefined;
  const ended = new Promise<string>((resolve) => (end = resolve));
  const watch = (output: string) => {
    const at = output.indexOf(FIRST_RUN_ENDED);
    if (at >= 0) end(output.slice(0, at));
  };
  const args = ['--require', 'tsx/cjs', path.join('scripts', 'first-run.ts'), out, ...cucumberArgs(request)];
  const exited = spawn(ctx, process.execPath, args, request.env, true, request.beside, watch);
  // A process that ends without the line (it stopped in run 1) has ended run 1 too; the first resolution counts.
  exited.then((done) => end(done.output), () => end(''));
  const faults = exited
    .then((done): FaultCheck | null => {
      if (fs.existsSync(out)) return JSON.parse(fs.readFileSync(out, 'utf8')) as FaultCheck;
      const why = `scripts/first-run.ts exited with status ${done.status} before the planted-fault check completed: ${done.output.split('\n').filter(Boolean).slice(-3).join(' / ')}`;
      return { trials: [], survivors: [], exempt: [], problems: [why] };
    })
    .finally(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { ended, exited, faults };
}

/** Real processes (`npm run qualify`): cucumber-js for a run, scripts/first-run.ts for run 1 and its planted faults. */
export const PROCESS_SUITE_RUNNER: SuiteRunner = {
  run: (ctx, request) => spawn(ctx, tool(ctx, 'cucumber-js'), cucumberArgs(request), request.env, true, request.beside),
  runFirst: processFirstRun,
};

/** The runner of a run on tsx: the caller's, else processes. A compiled run is always a process (coverage is collected per process). */
export function suiteRunnerFor(ctx: DriverContext, profile: SuiteRun['profile']): SuiteRunner {
  return profile === 'compiled' ? PROCESS_SUITE_RUNNER : (ctx.suiteRunner ?? PROCESS_SUITE_RUNNER);
}

/** Runs `request` with the runner it belongs to. */
export function runSuite(ctx: DriverContext, request: SuiteRun): Promise<Spawned> {
  return suiteRunnerFor(ctx, request.profile).run(ctx, request);
}

/**
 * One scenario replayed alone for the order-independence proof (isolation.ts): always a quiet
 * cucumber process of its own, whatever the runner (a run in a warm process would not prove it),
 * its stream written to a folder of its own and read back.
 */
export function aloneRun(ctx: DriverContext, env: NodeJS.ProcessEnv, beside: boolean): AloneRun {
  return async ({ uri, line }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-alone-'));
    try {
      const messages = path.join(dir, 'messages.ndjson');
      await PROCESS_SUITE_RUNNER.run(ctx, { profile: 'replay', paths: [`${uri}:${line}`], shard: null, order: null, reports: { message: messages }, env, beside });
      return readRun(messages);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}
