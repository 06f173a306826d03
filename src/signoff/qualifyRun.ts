// The run of a qualification (qualify): the phases planned from the options, the independent ones
// started at once (run 1, the generated workloads, the compiled build and its runs or run 2, the
// planted faults and isolation after run 1), then the sign-off or a shard's manifest published.
// The console (phaseConsole.ts) prints each phase's line in number order as they end.
import path from 'node:path';
import type { RunModel } from './messages';
import { RERUN_MESSAGES, SignoffModel } from './model';
import type { CampaignResult } from '../fuzz/campaign';
import { campaignBundle, runFuzzCampaignOnThread } from '../fuzz/campaignThread';
import { KNOWN_DEFECT_AREAS } from '../fuzz/generate';
import { PLANTED_DEFECT_ENV } from '../fuzz/planted';
import { SIMULATOR_FAULT_ENV } from '../fuzz/simulatorFaults';
import { SCENARIO_FIGURES_ENV } from '../report/figure';
import { faultCheckNotMade, type FaultCheck } from './faults';
import { checkIsolation, type IsolationCheck } from './isolation';
import { newRunDir, removeStale, runFolderGuard } from './write';
import { SHARD_MANIFEST } from './shards';
import { ownerTag } from '../processes';
import { channelsGate } from './channels';
import { RUN_NONCE_ENV } from './shardTrust';
import { exitStatusOf } from './narrowed';
import { countOf, fromRoot, newNonce, seconds } from './context';
import type { DriverContext } from './context';
import { NO_JAVASCRIPT, compileBuild, compiledScenarioFailures, coverageEnv, coverageReport, emptyCoverageRun, measureCoverage, typeCheck } from './coverageRun';
import type { Measured } from './coverageRun';
import { aloneRun, runSuite, suiteRunnerFor } from './suiteRunner';
import { mergeShards } from './merge';
import { PERTURB_ENV, secondRunOrder } from './options';
import { failuresToPrint, PhaseConsole, reportVerdict, reportWritten } from './phaseConsole';
import type { Prepared } from './prepare';
import { publishShard, publishSignoff, renderFigures } from './publish';
import { readRunAndText, runChannelProblems, runOfText, textOrNull, withLastWords } from './runStreams';
import type { Spawned } from './spawn';

type Read = { run: RunModel | null; problem: string | null };

/** The phases of one run, by what they are (-1: not in this run), and their titles in number order. */
interface Plan {
  titles: string[];
  first: number;
  secondOnTsx: number;
  compile: number;
  types: number;
  fuzz: number;
  faults: number;
  isolation: number;
  secondCompiled: number;
  report: number;
  ownCoverage: number;
  last: number;
}

/** What the options ask of this run: a shard's share, the generated workloads, the coverage run and whether run 2 is the compiled one. */
interface Shape {
  /** cucumber's `--shard i/n` of this run's share, or null. */
  shard: string | null;
  fuzzRuns: number;
  coverage: boolean;
  compiledRerun: boolean;
}

function shapeOf(prepared: Prepared): Shape {
  const shard = prepared.options.shard;
  // The generated workloads and the coverage run are not cut into shards: shard 1 makes them whole.
  const wholeRuns = shard === null || shard.index === 1;
  const coverage = wholeRuns && prepared.options.coverage;
  return {
    shard: shard === null ? null : `${shard.index}/${shard.count}`,
    fuzzRuns: wholeRuns ? prepared.options.fuzzRuns : 0,
    coverage,
    // Without shards, the coverage run is the second run of the determinism proof: the suite on the
    // compiled JavaScript under c8 (the proof then compares the tsx run with the compiled one). A
    // shard keeps its second run on tsx, and shard 1 makes a coverage run of its own over the whole suite.
    compiledRerun: coverage && shard === null,
  };
}

/** The phases in number order: roughly the order they end in, so that few lines wait for an earlier one. */
function planPhases(prepared: Prepared, shape: Shape, perturbation: string | null): Plan {
  const { shard, isolation } = prepared.options;
  const titles: string[] = [];
  const add = (title: string) => titles.push(title) - 1;
  const when = (yes: boolean, title: string) => (yes ? add(title) : -1);
  const share = shard === null ? '' : ` (shard ${shard.index} of ${shard.count})`;
  const perturbed = perturbation ? ` (${PERTURB_ENV}="${perturbation}": test double active)` : '';
  const shuffled = `shuffled (--order ${secondRunOrder(prepared.fuzzSeed)})`;
  const compile = when(shape.compiledRerun, 'compile to build/ (esbuild)');
  const types = when(shape.compiledRerun, 'type check (tsc)');
  const first = add(`run 1 of 2: the suite${share} through tsx`);
  const secondOnTsx = when(!shape.compiledRerun, `run 2 of 2: the same${shard === null ? ' suite' : ' share'} ${shuffled} through tsx${perturbed}`);
  const secondCompiled = when(shape.compiledRerun, `run 2 of 2: the same suite ${shuffled}, compiled, under c8${perturbed}`);
  const report = when(shape.compiledRerun, 'coverage report (c8)');
  const planted = prepared.plantedDefect ? ` (${PLANTED_DEFECT_ENV}=1: test double active)` : '';
  const fuzz = when(shape.fuzzRuns > 0, `generated workloads${planted}`);
  const faults = add(`planted faults${share}`);
  const isolated = when(shard === null && isolation, 'order independence (--isolation)');
  const ownCoverage = when(shape.coverage && !shape.compiledRerun, 'coverage run: the whole suite compiled, under c8, tsc beside (shard 1)');
  const last = add(shard === null ? 'sign-off: signoff.md, signoff.html, signoff.json' : `shard manifest: ${SHARD_MANIFEST} (no sign-off)`);
  return { titles, first, secondOnTsx, compile, types, fuzz, faults, isolation: isolated, secondCompiled, report, ownCoverage, last };
}

// A phase's line gives its counts only; what failed is said once, in the gates and the failures after the verdict.

/** A cucumber run's scenarios in words: "164 of 170 scenarios passed". */
function scenariosPassed(read: Read): string {
  if (read.run === null) return read.problem ?? 'no message stream';
  const passed = read.run.scenarios.filter((s) => s.status === 'PASSED').length;
  const total = read.run.scenarios.length;
  return `${passed} of ${countOf(total, 'scenario')} passed${read.run.runErrors.length > 0 ? `; the run reported ${countOf(read.run.runErrors.length, 'problem')}` : ''}`;
}

/** The generated workloads in counts: "1000 cases, seed 1893: every invariant kept". */
function workloadsSaid(campaign: CampaignResult): string {
  const heavy = campaign.too_heavy > 0 ? `; ${campaign.too_heavy} too heavy to check` : '';
  return `${campaign.runs} cases, seed ${campaign.seed}: ${campaign.counterexample === null ? 'every invariant kept' : `case ${campaign.counterexample.case_number} broke an invariant`}${heavy}`;
}

/** The planted-fault check in counts: "169 scenarios under 17 faults: none survived". */
function faultsSaid(check: FaultCheck): string {
  const problems = check.problems.length > 0 ? `; ${countOf(check.problems.length, 'problem')}` : '';
  return `${countOf(check.trials[0]?.ran ?? 0, 'scenario')} under ${countOf(check.trials.length, 'fault')}: ${check.survivors.length === 0 ? 'none survived' : `${check.survivors.length} survived every fault`}${problems}`;
}

/** The isolation proof in counts: "169 scenarios alone: all as in the suite". */
function isolationSaid(check: IsolationCheck): string {
  const problems = check.problems.length > 0 ? `; ${countOf(check.problems.length, 'problem')}` : '';
  return `${countOf(check.ran, 'scenario')} alone: ${check.dependent.length === 0 ? 'all as in the suite' : `${check.dependent.length} not as in the suite`}${problems}`;
}

/** The environments of the two runs: each with its nonce; the test doubles where they belong (the perturbation in run 2 only, the planted defect in the generated workloads only). */
export function runEnvironments(ctx: DriverContext, nonces: { first: string; second: string }): { first: NodeJS.ProcessEnv; second: NodeJS.ProcessEnv } {
  const first: NodeJS.ProcessEnv = { ...ctx.env, [RUN_NONCE_ENV]: nonces.first };
  // Run 2 on tsx attaches no figures (nobody reads them); the compiled run 2 draws them (coverage.ts: the scenarios' lines include the figures').
  const second: NodeJS.ProcessEnv = { ...ctx.env, [RUN_NONCE_ENV]: nonces.second, [SCENARIO_FIGURES_ENV]: 'off' };
  for (const name of [PERTURB_ENV, PLANTED_DEFECT_ENV, SIMULATOR_FAULT_ENV, SCENARIO_FIGURES_ENV]) delete first[name];
  for (const name of [PLANTED_DEFECT_ENV, SIMULATOR_FAULT_ENV]) delete second[name];
  return { first, second };
}

/** Everything one unsharded or shard run shares while its phases run. */
interface Running {
  prepared: Prepared;
  ctx: DriverContext;
  plan: Plan;
  shape: Shape;
  phases: PhaseConsole;
  runDir: string;
  perturbation: string | null;
  nonces: { first: string; second: string };
  env: { first: NodeJS.ProcessEnv; second: NodeJS.ProcessEnv };
  /** The second run's process, once it has ended. */
  second?: Spawned;
  /** The second run's message stream as read once its process had ended: its text and the run read from it. */
  secondStream?: { read: Read; text: string | null };
}

/** The suite's feature files, as cucumber is given them. */
function suiteGlob(r: Running): string {
  return `${r.prepared.features}/**/*.feature`;
}

function inRun(r: Running, name: string): string {
  return fromRoot(r.ctx.root, path.join(r.runDir, name));
}

/** Run 1 as it goes: read as soon as it has ended, its process's end and the planted-fault check after it. */
interface RunOne {
  /** Its stream read once the run has ended, and that stream's text then. */
  ended: Promise<{ read: Read; text: string | null }>;
  exited: Promise<Spawned>;
  faults: Promise<FaultCheck | null>;
}

/**
 * Run 1: the suite through tsx with cucumber's reports, quiet (its failures are printed once, at the
 * end), read back as soon as it has ended; the planted-fault check of its stream follows it (in the
 * same process by default, suiteRunner.ts). Its exit status is known once that has ended too.
 */
function startRunOne(r: Running): RunOne {
  const reports = { html: inRun(r, 'cucumber.html'), junit: inRun(r, 'junit.xml'), message: inRun(r, 'messages.ndjson') };
  // Run 1 and the planted faults after it are the longest chain: they keep their priority, the work beside them yields.
  const first = suiteRunnerFor(r.ctx, 'replay').runFirst(r.ctx, { profile: 'replay', paths: [suiteGlob(r)], shard: r.shape.shard, order: null, reports, env: r.env.first, beside: false });
  // Awaited only once run 1 has ended with a stream (startFaults): never an unhandled rejection before.
  first.faults.catch(() => undefined);
  const read = r.phases.run(
    r.plan.first,
    async () => {
      const output = await first.ended;
      const { read, text } = readRunAndText(path.join(r.runDir, 'messages.ndjson'));
      return { read: withLastWords(read, output), text };
    },
    ({ read }) => scenariosPassed(read),
  );
  return { ended: read, exited: first.exited, faults: first.faults };
}

/**
 * Run 1 as the sign-off takes it, once its process has ended (after the planted faults, when they
 * share it): its stream as it is then, and, when that is not the stream it had written when the run
 * ended, the disagreement in words (a Channels problem: something changed it afterwards).
 */
async function runOneAtExit(r: Running, runOne: RunOne): Promise<{ spawned: Spawned; read: Read; text: string | null; changed: string[] }> {
  const [ended, spawned] = await Promise.all([runOne.ended, runOne.exited]);
  const file = path.join(r.runDir, 'messages.ndjson');
  const text = textOrNull(file);
  if (text === ended.text) return { spawned, read: ended.read, text, changed: [] };
  return { spawned, read: withLastWords(runOfText(text, file), spawned.output), text, changed: ['run 1 of 2: its message stream changed after the run had ended, before its process did'] };
}

/** Run 2, in a shuffled order, on `profile` (replay: tsx; compiled: build/), quiet; its stream is read back by the sign-off. */
async function secondRun(r: Running, index: number, profile: 'replay' | 'compiled', env: NodeJS.ProcessEnv): Promise<Read> {
  const order = secondRunOrder(r.prepared.fuzzSeed);
  return r.phases.run(
    index,
    async () => {
      r.second = await runSuite(r.ctx, { profile, paths: [suiteGlob(r)], shard: r.shape.shard, order, reports: { message: inRun(r, RERUN_MESSAGES) }, env, beside: r.shape.compiledRerun });
      // Read once: the sign-off and the channels take this read and this text.
      const { read, text } = readRunAndText(path.join(r.runDir, RERUN_MESSAGES));
      r.secondStream = { read: withLastWords(read, r.second.output), text };
      return r.secondStream.read;
    },
    scenariosPassed,
  );
}

/**
 * The compiled build and its run: tsc's type check beside esbuild's compile, then run 2 of the
 * suite on the JavaScript under c8, then c8's report. Without JavaScript the proof still gets its
 * second run, through tsx.
 */
async function compiledRuns(r: Running): Promise<Measured> {
  const { plan, phases, ctx } = r;
  const run = emptyCoverageRun();
  const checking = phases.run(plan.types, () => typeCheck(ctx, r.env.first, run), () => (run.problems.some((p) => p.startsWith('tsc')) ? 'tsc reported errors' : 'no type error'));
  const built = await phases.run(plan.compile, () => compileBuild(ctx, run), (ok) => (ok ? 'done' : NO_JAVASCRIPT));
  if (!built) {
    await Promise.all([secondRun(r, plan.secondCompiled, 'replay', r.env.second), checking]);
    phases.skip(plan.report, NO_JAVASCRIPT);
    return { summary: null, run, note: NO_JAVASCRIPT };
  }
  const covEnv = coverageEnv(ctx, r.env.first);
  const perturbedEnv = { ...covEnv, ...(r.perturbation ? { [PERTURB_ENV]: r.perturbation } : {}), [RUN_NONCE_ENV]: r.nonces.second };
  compiledScenarioFailures(await secondRun(r, plan.secondCompiled, 'compiled', perturbedEnv), run, null);
  // c8 reports as soon as run 2 has ended; tsc's errors join the run's problems whenever it ends.
  const [measured] = await Promise.all([phases.run(plan.report, () => coverageReport(ctx, run, r.prepared.features), coverageSaid), checking]);
  return measured;
}

/** The coverage run's result in words. */
function coverageSaid(measured: Measured): string {
  return measured.summary ? `lines ${measured.summary.lines.pct}%, branches ${measured.summary.branches.pct}%` : `not measured: ${measured.note}`;
}

/** The generated workloads on a worker thread, or null when none were asked for. */
function startFuzz(r: Running): Promise<CampaignResult | null> {
  if (r.plan.fuzz < 0) return Promise.resolve(null);
  const campaign = { runs: r.shape.fuzzRuns, seed: r.prepared.fuzzSeed, exclude: KNOWN_DEFECT_AREAS, planted_defect: r.prepared.plantedDefect };
  return r.phases.run(
    r.plan.fuzz,
    async () => {
      const bundle = await campaignBundle();
      try {
        return await runFuzzCampaignOnThread(campaign, bundle?.file);
      } finally {
        bundle?.remove();
      }
    },
    workloadsSaid,
  );
}

/** The planted-fault check of what passed run 1 (faults.ts), from once run 1 has ended until the check has. */
async function startFaults(r: Running, firstRead: Promise<Read>, checked: Promise<FaultCheck | null>): Promise<FaultCheck | undefined> {
  const read = await firstRead;
  if (read.run === null) {
    r.phases.skip(r.plan.faults, 'run 1 wrote no message stream');
    return undefined;
  }
  const noCheck = faultCheckNotMade('the planted-fault check found no message stream of run 1');
  return r.phases.run(r.plan.faults, async () => (await checked) ?? noCheck, faultsSaid);
}

/** The order-independence proof (--isolation) of what passed run 1; null when not asked for (undefined for a shard). */
async function startIsolation(r: Running, firstRead: Promise<Read>): Promise<IsolationCheck | null | undefined> {
  if (r.plan.isolation < 0) return r.prepared.options.shard === null ? null : undefined;
  const read = await firstRead;
  if (read.run === null) {
    r.phases.skip(r.plan.isolation, 'run 1 wrote no message stream');
    return undefined;
  }
  return r.phases.run(r.plan.isolation, () => checkIsolation(read.run!, aloneRun(r.ctx, r.env.first, r.shape.compiledRerun)), isolationSaid);
}

/** Runs the qualification; returns the exit status (0 QUALIFIED, 1 NOT QUALIFIED, 3 passed but narrowed; a shard: 0 when it ran). */
export async function qualify(prepared: Prepared, ctx: DriverContext): Promise<{ status: number; model: SignoffModel | null }> {
  if (prepared.options.merge !== null) return mergeShards(prepared, ctx);
  const started = ctx.now();
  const perturbation = ctx.env[PERTURB_ENV] ? ctx.env[PERTURB_ENV]! : null;
  const shape = shapeOf(prepared);
  const plan = planPhases(prepared, shape, perturbation);
  const phases = new PhaseConsole(ctx, plan.titles);
  phases.announce(true);
  const removed = removeStale(prepared.out);
  if (removed.length > 0) phases.note(`removed what earlier runs left unfinished: ${removed.join(', ')}`);
  const runDir = newRunDir(prepared.out, `run-${ctx.now()}-${ownerTag()}`);
  const runDirKept = runFolderGuard(runDir, prepared.options.out);
  // Each run gets a nonce its own stream must carry (shardTrust.ts): a stream copied from another run does not.
  const nonces = { first: newNonce(ctx), second: newNonce(ctx) };
  const r: Running = { prepared, ctx, plan, shape, phases, runDir, perturbation, nonces, env: runEnvironments(ctx, nonces) };
  const live = ctx.liveStatus?.(() => phases.status());
  try {
    // Independent work runs at once (two cores): run 1, the fuzz thread, and either run 2 or the compiled build and its runs.
    const runOne = startRunOne(r);
    const firstRead = runOne.ended.then((ended) => ended.read);
    const compiled: Promise<Measured | null> = shape.compiledRerun ? compiledRuns(r) : secondRun(r, plan.secondOnTsx, 'replay', r.env.second).then(() => null);
    // The first run's figures are drawn as soon as it ends, while the other work goes on.
    const figures = prepared.options.shard === null ? firstRead.then((read) => (read.run === null ? new Map<string, string>() : renderFigures(read.run, ctx.figureCache))) : Promise.resolve(undefined);
    const [one, generated, compiledMeasured, , faults, isolation] = await Promise.all([runOneAtExit(r, runOne), startFuzz(r), compiled, figures, startFaults(r, firstRead, runOne.faults), startIsolation(r, firstRead)]);
    const measured = plan.ownCoverage >= 0 ? await phases.run(plan.ownCoverage, () => measureCoverage(ctx, prepared.features, r.env.first), coverageSaid) : compiledMeasured;
    const streams = { first: one.text, second: r.secondStream?.text ?? textOrNull(path.join(runDir, RERUN_MESSAGES)) };
    const channels = (first: RunModel | null, second: RunModel | null) => [...one.changed, ...runChannelProblems(runDir, nonces, one.spawned, r.second, first, second, streams)];
    const shard = prepared.options.shard;
    if (shard !== null) {
      const preview = await phases.run(plan.last, () => {
        runDirKept();
        return publishShard(prepared, ctx, runDir, { shard, perturbation, generated, measured, faults: faults ?? null, channels, nonces });
      });
      phases.close();
      live?.stop();
      phases.note(`\n${preview}\nshard ${shard.index} of ${shard.count}: ${path.join(prepared.options.out, SHARD_MANIFEST)} and its message streams (${seconds(ctx.now() - started)} in all)`);
      return { status: 0, model: null };
    }
    const model = await phases.run(plan.last, async () => {
      runDirKept();
      const second = r.secondStream?.read ?? runOfText(streams.second, path.join(runDir, RERUN_MESSAGES));
      const checks = [channelsGate(channels(one.read.run, second.run))];
      return publishSignoff(prepared, ctx, runDir, { first: one.read, second, perturbation, generated, measured, shardProblems: [], figures: await figures, checks, faults, isolation });
    });
    phases.close();
    live?.stop();
    reportVerdict(ctx, model, failuresToPrint(model, measured));
    reportWritten(ctx, prepared.options.out, ctx.now() - started);
    return { status: exitStatusOf(model), model };
  } finally {
    live?.stop();
  }
}
