// The feature suite run in this process through cucumber's programmatic API: the step definitions
// loaded once (loadSupport), then one runCucumber per run, with cucumber's own formatters writing
// the run's reports (HTML, JUnit, message stream) and its progress marks and summary line captured
// as the run's output; the exit status is 0 when the run succeeded and 1 when not, as cucumber's
// command line gives it. Run 1 of `npm run qualify` and its planted-fault check run this way in one
// process (scripts/first-run.ts; the check alone: scripts/fault-check.ts), and the tests run all of
// qualify's suite runs on tsx this way (IN_PROCESS_SUITE_RUNNER, the driver's SuiteRunner:
// src/signoff/suiteRunner.ts), where a cucumber process per run would pay a Node start and a load
// of cucumber, tsx, steps/ and src/ for a fixture suite that runs in milliseconds.
//
// A process gets its run's environment and the steps read it there: the test doubles
// (KVQUAL_PERTURB, KVQUAL_FUZZ_PLANT), the seed, the figure cache. Here each run sets process.env to
// its own environment and restores it after; the two things the steps read when they are loaded
// are set per run here: the planted simulator fault (steps/support/faults.ts; KVQUAL_SIM_FAULT) and
// the run nonce's BeforeAll hook (steps/support/runNonce.ts; KVQUAL_RUN_NONCE), loaded under a
// placeholder and named for each run's own nonce. So the runs of this process are serialized (one
// queue): two at once would share process.env and the planted fault. What the steps write to
// standard error while a run lasts (a failed scenario's replay command) is that run's output, as it
// would be its process's. The compiled run under c8 and a scenario replayed alone stay processes
// (src/signoff/suiteRunner.ts).
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { loadConfiguration, loadSupport, runCucumber, type IConfiguration, type ISupportCodeLibrary } from '@cucumber/cucumber/api';
import type { Envelope } from '@cucumber/messages';
import type { SupportCodeLibrary } from '@cucumber/cucumber/lib/support_code_library_builder/types';
import { checkFaults, faultCheckNotMade, type FaultCheck, type FaultedRun } from '../src/signoff/faults';
import { parseEnvelopes, parseRun, type RunModel } from '../src/signoff/messages';
import { NONCE_HOOK_PREFIX, RUN_NONCE_ENV } from '../src/signoff/shardTrust';
import { firstThenFaults, reportFormats, type CheckFaults, type SuiteRun, type SuiteRunner } from '../src/signoff/suiteRunner';
import { plantSimulatorFault, SIMULATOR_FAULT_ENV, SIMULATOR_FAULT_NAMES, simulatorFaultAsked, type SimulatorFault } from '../src/fuzz/simulatorFaults';
import { SCENARIO_FIGURES_ENV } from '../src/report/figure';

/** A run made here: cucumber's exit status and output, and what stopped it when cucumber threw (its command line would have printed it and exited 1). */
export interface InProcessRun {
  status: number;
  output: string;
  thrown: string | null;
}

/** The nonce the steps are loaded under: each run's BeforeAll hook is then named for its own (or dropped when it has none). */
const LOAD_NONCE = 'loaded-in-process';

let queue: Promise<unknown> = Promise.resolve();
/** Runs `work` after every run queued before it has ended (the runs share process.env and the planted fault). */
function serialized<T>(work: () => Promise<T>): Promise<T> {
  const result = queue.then(work, work);
  queue = result.catch(() => undefined);
  return result;
}

/** process.env as it is outside the runs (during a run it holds the run's own). */
let outside: NodeJS.ProcessEnv | null = null;

/** This process's environment as it is between runs: what a caller builds a run's environment from. */
export function environmentOutsideRuns(): NodeJS.ProcessEnv {
  return outside ?? process.env;
}

/** Makes process.env exactly `env` until the returned function restores it. */
function enterEnvironment(env: NodeJS.ProcessEnv): () => void {
  const saved = { ...process.env };
  const become = (target: NodeJS.ProcessEnv) => {
    for (const name of Object.keys(process.env)) if (target[name] === undefined) delete process.env[name];
    for (const [name, value] of Object.entries(target)) if (value !== undefined) process.env[name] = value;
  };
  outside = saved;
  become(env);
  return () => {
    become(saved);
    outside = null;
  };
}

/** Collects what is written to it, in order, into one text (a process's standard output and error together). */
class Collected extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** While `work` runs, what is written to this process's standard error goes to `into` instead (the steps' notes on a failed scenario). */
async function stderrInto<T>(into: Collected, work: () => Promise<T>): Promise<T> {
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    into.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    return await work();
  } finally {
    process.stderr.write = write;
  }
}

/** The step definitions of each repository root, loaded once (a second load would find them in require's cache and register nothing). */
const supportOf = new Map<string, Promise<ISupportCodeLibrary>>();

/** Loads the steps for `root` (with the placeholder nonce and no planted fault), once. */
function loadedSupport(root: string, configuration: Parameters<typeof loadSupport>[0]): Promise<ISupportCodeLibrary> {
  let support = supportOf.get(root);
  if (support === undefined) {
    process.env[RUN_NONCE_ENV] = LOAD_NONCE;
    delete process.env[SIMULATOR_FAULT_ENV];
    support = loadSupport(configuration, { cwd: root }).then((library) => {
      if ((library as SupportCodeLibrary).stepDefinitions.length === 0) throw new Error(`no step definitions were registered from ${root}: steps/ was loaded in this process before cucumber's API could load it`);
      return library;
    });
    supportOf.set(root, support);
  }
  return support;
}

/** The loaded steps with the run nonce's BeforeAll hook named for this run's nonce, or without it when the run has none (as steps/support/runNonce.ts does when loaded). */
function withRunNonce(support: ISupportCodeLibrary, nonce: string | undefined): ISupportCodeLibrary {
  const library = support as SupportCodeLibrary;
  const hooks = library.beforeTestRunHookDefinitions.flatMap((hook) => {
    if (!hook.name?.startsWith(NONCE_HOOK_PREFIX)) return [hook];
    if (nonce === undefined || nonce === '') return [];
    return [Object.assign(Object.create(Object.getPrototypeOf(hook) as object) as typeof hook, hook, { name: `${NONCE_HOOK_PREFIX}${nonce}` })];
  });
  // The steps' files as loadSupport found them are only where the loaded library came from: runCucumber would look
  // each one up again (a glob per file, every run: about a second of CPU over the planted-fault runs); it looks up
  // none when the library says it came from none (its support code is this library either way).
  const originalCoordinates = { ...library.originalCoordinates, requirePaths: [], importPaths: [] };
  return { ...library, beforeTestRunHookDefinitions: hooks, originalCoordinates } as SupportCodeLibrary;
}

/** What cucumber is told for a run: its profiles and the options given beside them (what its command line parses into). */
export interface CucumberOptions {
  profiles: string[];
  provided: Partial<IConfiguration>;
}

/** What cucumber's command line would be given for the run, as its options. */
function optionsOf(request: Omit<SuiteRun, 'beside'>): CucumberOptions {
  const { reports } = request;
  if (request.profile !== 'replay' || reports.summary) throw new Error(`the ${request.profile} run is a process of its own, never run in this one`);
  const format = reportFormats(reports);
  const provided = { paths: request.paths, format, ...(request.order === null ? {} : { order: request.order as IConfiguration['order'] }), ...(request.shard === null ? {} : { shard: request.shard }) };
  return { profiles: [request.profile], provided };
}

/** One run, made once the runs queued before it have ended; `onMessage` sees every envelope. */
export function runInProcess(root: string, request: Omit<SuiteRun, 'beside'>, onMessage?: (envelope: Envelope) => void): Promise<InProcessRun> {
  return runWithOptions(root, optionsOf(request), request.env, onMessage);
}

/** One run with cucumber's options as given (the profile's steps must be `replay`'s), in `env`, once the runs queued before it have ended. */
export function runWithOptions(root: string, options: CucumberOptions, given: NodeJS.ProcessEnv, onMessage?: (envelope: Envelope) => void): Promise<InProcessRun> {
  // A copy: `given` may be process.env itself, which the run changes (loading the steps sets the placeholder nonce).
  const env = { ...given };
  return serialized(async () => {
    const output = new Collected();
    const leave = enterEnvironment(env);
    try {
      return await stderrInto(output, async () => {
        const { runConfiguration } = await loadConfiguration(options, { cwd: root, env: process.env });
        const support = withRunNonce(await loadedSupport(root, runConfiguration), env[RUN_NONCE_ENV]);
        plantSimulatorFault(simulatorFaultAsked(env));
        const { success } = await runCucumber({ ...runConfiguration, support }, { cwd: root, stdout: output, stderr: output, env: process.env }, onMessage);
        return { status: success ? 0 : 1, output: output.text, thrown: null };
      });
    } catch (error) {
      const said = error instanceof Error ? (error.stack ?? error.message) : String(error);
      return { status: 1, output: `${output.text}${said}\n`, thrown: said.split('\n')[0] };
    } finally {
      plantSimulatorFault(null);
      leave();
    }
  });
}

/** The console formatter of a faulted run (cucumber's last format without a file is the console's). */
const QUIET_FORMAT = 'rerun';

/** The environment of the run under a planted fault: the fault named, and no figure attached (nobody reads a faulted run's figures). */
export function faultRunEnvironment(env: NodeJS.ProcessEnv, fault: SimulatorFault): NodeJS.ProcessEnv {
  return { ...env, [SIMULATOR_FAULT_ENV]: fault, [SCENARIO_FIGURES_ENV]: 'off' };
}

/**
 * The planted-fault check (src/signoff/faults.ts) of what passed in `first`, in this process: the
 * scenarios run once per fault, in `env` with KVQUAL_SIM_FAULT naming it, each given only the
 * survivors of the one before.
 */
export function faultCheckInProcess(root: string, env: NodeJS.ProcessEnv, first: RunModel, faults: readonly SimulatorFault[] = SIMULATOR_FAULT_NAMES): Promise<FaultCheck> {
  const runUnder: FaultedRun = async (fault, scenarioArgs) => {
    const envelopes: Envelope[] = [];
    const request = { profile: 'replay' as const, paths: scenarioArgs, shard: null, order: null, reports: {}, env: faultRunEnvironment(env, fault) };
    const options = optionsOf(request);
    // Nobody reads a faulted run's console: cucumber's cheapest formatter (rerun: the failed scenarios' lines) stands in for
    // the profile's progress marks, whose summary would format every failure's stack. The run is read from its envelopes.
    const run = await runWithOptions(root, { ...options, provided: { ...options.provided, format: [...(options.provided.format ?? []), QUIET_FORMAT] } }, request.env, (envelope) => envelopes.push(envelope));
    if (run.thrown !== null) return { run: null, problem: `cucumber could not run: ${run.thrown}` };
    return { run: parseEnvelopes(envelopes), problem: null };
  };
  return checkFaults(first, runUnder, faults);
}

/** faultCheckInProcess of the run `first` gives, never rejected: what kept the check from completing (reading run 1 too) is its problem. */
export async function faultCheckSettled(root: string, env: NodeJS.ProcessEnv, first: () => RunModel): Promise<FaultCheck> {
  try {
    return await faultCheckInProcess(root, env, first());
  } catch (error) {
    return faultCheckNotMade(`the planted-fault check could not complete: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The planted-fault check of the stream `firstMessages` in this process, as the driver asks for it; what kept it from completing is one of its problems. */
export const checkFaultsInProcess: CheckFaults = (ctx, env, firstMessages) => faultCheckSettled(ctx.root, env, () => parseRun(fs.readFileSync(firstMessages, 'utf8')));

const runHere: SuiteRunner['run'] = (ctx, request) => runInProcess(ctx.root, request);

/** The driver's suite runs and planted-fault check in this process (the tests' qualify: test/support/qualify.ts). */
export const IN_PROCESS_SUITE_RUNNER: SuiteRunner = {
  run: runHere,
  runFirst: (ctx, request) => firstThenFaults(ctx, request, runHere, checkFaultsInProcess),
};
