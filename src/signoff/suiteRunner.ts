// How the driver has cucumber run the suite: one run asked for as a SuiteRun (profile, paths, shard,
// order, report files, environment), and the SuiteRunner that makes it and the planted-fault check
// of run 1's stream. The default, for `npm run qualify`, is real processes (cucumber-js's command
// line, scripts/fault-check.ts); a caller may give another through DriverContext.suiteRunner (the
// tests run the suite in their own process through cucumber's API: scripts/suiteInProcess.ts). The
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

export interface SuiteRunner {
  /** One run: its exit status as cucumber's command line gives it (0 when the run succeeded, 1 when not) and what it printed (its progress and summary line). */
  run(ctx: DriverContext, request: SuiteRun): Promise<Spawned>;
  /** The planted-fault check (faults.ts) of what passed in run 1's message stream, run in `env`; what kept it from completing is one of its problems. */
  checkFaults(ctx: DriverContext, env: NodeJS.ProcessEnv, firstMessages: string, beside: boolean): Promise<FaultCheck>;
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

/**
 * The planted-fault check in one process of its own (scripts/fault-check.ts: the steps loaded once,
 * one cucumber run per fault); what kept it from completing is a problem of the check.
 */
async function processFaultCheck(ctx: DriverContext, env: NodeJS.ProcessEnv, firstMessages: string, beside: boolean): Promise<FaultCheck> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-faults-'));
  try {
    const out = path.join(dir, 'faults.json');
    const done = await spawn(ctx, process.execPath, ['--require', 'tsx/cjs', path.join('scripts', 'fault-check.ts'), firstMessages, out], env, true, beside);
    if (done.status === 0 && fs.existsSync(out)) return JSON.parse(fs.readFileSync(out, 'utf8')) as FaultCheck;
    const why = `scripts/fault-check.ts exited with status ${done.status}: ${done.output.split('\n').filter(Boolean).slice(-3).join(' / ')}`;
    return { trials: [], survivors: [], exempt: [], problems: [why] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Real processes: cucumber-js for each run, scripts/fault-check.ts for the planted faults (`npm run qualify`). */
export const PROCESS_SUITE_RUNNER: SuiteRunner = {
  run: (ctx, request) => spawn(ctx, tool(ctx, 'cucumber-js'), cucumberArgs(request), request.env, true, request.beside),
  checkFaults: processFaultCheck,
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
