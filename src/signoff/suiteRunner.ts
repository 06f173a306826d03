// How the driver has cucumber run the suite. A run is asked for as a SuiteRun (profile, paths,
// shard, order, report files, environment) of a SuiteRunner, which makes it, and makes run 1
// followed by the planted-fault check of its stream (both types in context.ts). The default, for
// `npm run qualify`, is real processes: cucumber-js's command line for a run, and one process for
// run 1 and its faults (scripts/first-run.ts: the longest chain of phases pays one Node start and
// one load of the steps, not two). A caller may give another runner through
// DriverContext.suiteRunner (the tests run the suite in their own process through cucumber's API:
// scripts/suiteInProcess.ts). The runs that are processes by nature stay processes whatever the
// runner: the compiled run under c8 (coverage is collected per process) and a scenario replayed
// alone (the isolation proof is that it passes in a fresh process: aloneRun).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DriverContext, FirstRun, Spawned, SuiteRun, SuiteRunner } from './context';
import { faultCheckNotMade, type FaultCheck } from './faults';
import type { AloneRun } from './isolation';
import { readRun } from './runStreams';
import { spawn } from './spawn';

export type { FirstRun, SuiteRun, SuiteRunner } from './context';

/** The planted-fault check of the stream `firstMessages` (an absolute path), in `env`. */
export type CheckFaults = (ctx: DriverContext, env: NodeJS.ProcessEnv, firstMessages: string, beside: boolean) => Promise<FaultCheck>;

/** Run 1 by `run`, then, when it wrote its stream, the planted-fault check by `checkFaults`: a runner's runFirst from its two parts. */
export function firstThenFaults(ctx: DriverContext, request: SuiteRun, run: SuiteRunner['run'], checkFaults: CheckFaults): FirstRun {
  const exited = run(ctx, request);
  const stream = request.reports.message === undefined ? null : path.resolve(ctx.root, request.reports.message);
  const faults = exited.then(() => (stream !== null && fs.existsSync(stream) ? checkFaults(ctx, request.env, stream, request.beside) : null));
  return { ended: exited.then((done) => done.output), exited, faults };
}

/** cucumber's `format` values for a run's report files (`html:FILE`, `junit:FILE`, `message:FILE`), in that order. */
export function reportFormats(reports: SuiteRun['reports']): string[] {
  return (['html', 'junit', 'message'] as const).flatMap((kind) => (reports[kind] === undefined ? [] : [`${kind}:${reports[kind]}`]));
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
    ...reportFormats(reports).flatMap((format) => ['--format', format]),
    ...(reports.summary ? ['--format', 'summary'] : []),
  ];
}

/**
 * Where a suite run's scratch folder goes: inside the run's own temporary folder when it has one
 * (`npm run qualify`'s, removed at its exit, and by the next run after a kill), else the system's.
 */
function runTempBase(ctx: DriverContext): string {
  return ctx.coverageTemp ?? os.tmpdir();
}

/**
 * V8's options for the suite's processes (cucumber's runs, run 1 and its planted faults): no
 * inlining by its optimising compiler. A suite run is a few seconds of a great deal of different
 * code, and the compiles that inlined into the simulator's large functions (a rank's admission and
 * pass planning, the host cache's write-through) were about a third of such a process's CPU, on
 * V8's background threads; without inlining a suite run takes about a sixth less CPU in all. A
 * compiler's setting: what runs, and every result and coverage count, are the same.
 */
export const SUITE_NODE_OPTIONS: readonly string[] = ['--no-turbo-inlining'];

/** cucumber's command line (what node_modules/.bin/cucumber-js runs), started by Node itself so that it gets SUITE_NODE_OPTIONS. */
function cucumberCommand(ctx: DriverContext): string {
  return path.join(ctx.root, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');
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
  const dir = fs.mkdtempSync(path.join(runTempBase(ctx), 'kvqual-faults-'));
  const out = path.join(dir, 'faults.json');
  let end: (output: string) => void = () => undefined;
  let seen = false;
  const ended = new Promise<string>((resolve) => (end = resolve));
  const watch = (output: string) => {
    const at = seen ? -1 : output.indexOf(FIRST_RUN_ENDED);
    if (at < 0) return;
    seen = true;
    end(output.slice(0, at));
  };
  const args = [...SUITE_NODE_OPTIONS, '--require', 'tsx/cjs', path.join('scripts', 'first-run.ts'), out, ...cucumberArgs(request)];
  const exited = spawn(ctx, process.execPath, args, request.env, true, request.beside, watch);
  // A process that ends without the line (it stopped in run 1) has ended run 1 too; the first resolution counts.
  exited.then((done) => end(done.output), () => end(''));
  const faults = exited
    .then((done): FaultCheck | null => {
      if (fs.existsSync(out)) return JSON.parse(fs.readFileSync(out, 'utf8')) as FaultCheck;
      if (request.reports.message === undefined || !fs.existsSync(path.resolve(ctx.root, request.reports.message))) return null;
      const why = `scripts/first-run.ts exited with status ${done.status} before the planted-fault check completed: ${done.output.split('\n').filter(Boolean).slice(-3).join(' / ')}`;
      return faultCheckNotMade(why);
    })
    .finally(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { ended, exited, faults };
}

/** Real processes (`npm run qualify`): cucumber-js for a run, scripts/first-run.ts for run 1 and its planted faults. */
export const PROCESS_SUITE_RUNNER: SuiteRunner = {
  run: (ctx, request) => spawn(ctx, process.execPath, [...SUITE_NODE_OPTIONS, cucumberCommand(ctx), ...cucumberArgs(request)], request.env, true, request.beside),
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
    const dir = fs.mkdtempSync(path.join(runTempBase(ctx), 'kvqual-alone-'));
    try {
      const messages = path.join(dir, 'messages.ndjson');
      await PROCESS_SUITE_RUNNER.run(ctx, { profile: 'replay', paths: [`${uri}:${line}`], shard: null, order: null, reports: { message: messages }, env, beside });
      return readRun(messages);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}
