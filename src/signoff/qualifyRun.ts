// The run of a qualification (qualify): the phases planned from the options, the independent ones
// started at once (run 1, the generated workloads, the compiled build and its runs or run 2, the
// planted faults and isolation after run 1), then the sign-off or a shard's manifest published.
import path from 'node:path';
import { RunModel } from './messages';
import { generatedSummary, RERUN_MESSAGES, SignoffModel } from './model';
import type { CampaignResult } from '../fuzz/campaign';
import { runFuzzCampaignOnThread } from '../fuzz/campaignThread';
import { KNOWN_DEFECT_AREAS } from '../fuzz/generate';
import { PLANTED_DEFECT_ENV } from '../fuzz/planted';
import { SIMULATOR_FAULT_ENV } from '../fuzz/simulatorFaults';
import { faultSummary, type FaultCheck } from './faults';
import { checkIsolation, isolationSummary, type IsolationCheck } from './isolation';
import { newRunDir, removeStale, runFolderGuard } from './write';
import { SHARD_MANIFEST } from './shards';
import { ownerTag } from '../processes';
import { channelsGate } from './channels';
import { RUN_NONCE_ENV } from './shardTrust';
import { exitStatusOf } from './narrowed';
import { fromRoot, newNonce, seconds } from './context';
import type { DriverContext } from './context';
import { NO_JAVASCRIPT, compileBuild, compiledScenarioFailures, coverageEnv, coverageReport, emptyCoverageRun, measureCoverage, runCompiledUnits, typeCheck } from './coverageRun';
import type { Measured } from './coverageRun';
import { aloneRun, runFaultCheck } from './faultRuns';
import { mergeShards } from './merge';
import { PERTURB_ENV, secondRunOrder } from './options';
import { numberedPhases, reportVerdict } from './phaseConsole';
import type { Prepared } from './prepare';
import { publishShard, publishSignoff, renderFigures } from './publish';
import { readRun, runChannelProblems, withLastWords } from './runStreams';
import { spawn, tool } from './spawn';
import type { Spawned } from './spawn';

/** Runs the qualification; returns the exit status (0 QUALIFIED, 1 NOT QUALIFIED, 3 passed but narrowed; a shard: 0 when it ran). */
export async function qualify(prepared: Prepared, ctx: DriverContext): Promise<{ status: number; model: SignoffModel | null }> {
  if (prepared.options.merge !== null) return mergeShards(prepared, ctx);
  const { options, out, features } = prepared;
  const shard = options.shard;
  const started = ctx.now();
  const perturbation = ctx.env[PERTURB_ENV] ? ctx.env[PERTURB_ENV]! : null;
  // The planted defect is the generated workloads' test double only: the suite and the tests run without it.
  // Each run gets a nonce its own stream must carry (shardTrust.ts): a stream copied from another run does not.
  const nonces = { first: newNonce(ctx), second: newNonce(ctx) };
  const firstEnv: NodeJS.ProcessEnv = { ...ctx.env, [RUN_NONCE_ENV]: nonces.first };
  delete firstEnv[PERTURB_ENV];
  delete firstEnv[PLANTED_DEFECT_ENV];
  delete firstEnv[SIMULATOR_FAULT_ENV];
  const secondEnv: NodeJS.ProcessEnv = { ...ctx.env, [RUN_NONCE_ENV]: nonces.second };
  delete secondEnv[PLANTED_DEFECT_ENV];
  delete secondEnv[SIMULATOR_FAULT_ENV];
  const glob = `${features}/**/*.feature`;
  const shardArgs = shard === null ? [] : ['--shard', `${shard.index}/${shard.count}`];
  const share = shard === null ? '' : ` (shard ${shard.index} of ${shard.count}: its share of the scenarios)`;
  // The generated workloads and the coverage run are not cut into shards: shard 1 makes them whole.
  const wholeRuns = shard === null || shard.index === 1;
  const fuzzRuns = wholeRuns ? options.fuzzRuns : 0;
  const coverage = wholeRuns && options.coverage;
  // Without shards, the coverage run is the second run of the determinism proof: the suite on the
  // compiled JavaScript under c8 (the proof then compares the tsx run with the compiled one), while
  // the unit tests run compiled beside it. A shard keeps its second run on tsx, and shard 1 makes
  // a coverage run of its own over the whole suite, as the merged sign-off's coverage must be.
  const compiledRerun = coverage && shard === null;
  const phases: string[] = [];
  const add = (title: string) => phases.push(title) - 1;
  const first = add(`run 1 of 2: the suite${share} through tsx, with cucumber.html, junit.xml and messages.ndjson`);
  const perturbed = perturbation ? ` (${PERTURB_ENV}="${perturbation}": test double active)` : '';
  const sameAgain = `the same${shard === null ? ' suite' : ' share'} again in a shuffled order (--order ${secondRunOrder(prepared.fuzzSeed)})`;
  const secondOnTsx = compiledRerun ? -1 : add(`run 2 of 2: ${sameAgain} through tsx, to compare digests${perturbed}`);
  const compilePhase = compiledRerun ? add('compile: src/, steps/ and the tests to build/ (esbuild, with source maps)') : -1;
  const typesPhase = compiledRerun ? add('type check: tsc over src/, steps/ and the tests, beside the compiled runs') : -1;
  const fuzzPhase =
    fuzzRuns > 0
      ? add(
          `generated workloads: ${fuzzRuns} cases (fast-check seed ${prepared.fuzzSeed}) checked against the simulator's invariants, on a worker thread` +
            `${KNOWN_DEFECT_AREAS.length > 0 ? `, areas left out for known defects: ${KNOWN_DEFECT_AREAS.join(', ')}` : ''}${shard === null ? '' : ' (shard 1 runs them all)'}` +
            `${prepared.plantedDefect ? ` (${PLANTED_DEFECT_ENV}=1: test double active, a planted defect)` : ''}`,
        )
      : -1;
  const faultPhase = add(`planted faults: the scenarios${share} that passed run 1 again under each planted simulator fault in turn, only those that passed again under the next (src/fuzz/simulatorFaults.ts)`);
  const isolationPhase = shard === null && options.isolation ? add('order independence: every scenario that passed run 1 replayed alone, each in a cucumber process of its own, two at a time (--isolation)') : -1;
  const secondCompiled = compiledRerun ? add(`run 2 of 2: ${sameAgain} on the compiled JavaScript under c8 (coverage), to compare digests${perturbed}`) : -1;
  const unitsPhase = compiledRerun ? add('unit tests on the compiled JavaScript under c8 (coverage), in one process') : -1;
  const reportPhase = compiledRerun ? add('coverage report: c8 over build/src') : -1;
  const ownCoverage = coverage && !compiledRerun ? add('coverage run: compiled to build/, then the unit tests and the whole suite again on the JavaScript under c8, while tsc checks the types (shard 1 makes it)') : -1;
  const last = add(shard === null ? 'sign-off: signoff.md, signoff.html and signoff.json, published with the reports as one set' : `shard manifest: ${SHARD_MANIFEST}, published with the shard's reports as one set (no sign-off)`);
  const phase = numberedPhases(ctx, phases);

  const removed = removeStale(out);
  if (removed.length > 0) ctx.write(`removed what earlier runs left unfinished: ${removed.join(', ')}\n`);
  const runDir = newRunDir(out, `run-${ctx.now()}-${ownerTag()}`);
  const runDirKept = runFolderGuard(runDir, options.out);
  const inRun = (name: string) => fromRoot(ctx.root, path.join(runDir, name));
  const secondArgs = (profile: string) => ['--profile', profile, glob, ...shardArgs, '--order', secondRunOrder(prepared.fuzzSeed), '--format', `message:${inRun(RERUN_MESSAGES)}`];
  let secondResult: Spawned | undefined;
  /** A quiet second run prints its output only when it did not pass. */
  const secondRun = async (profile: string, env: NodeJS.ProcessEnv) => {
    const result = await spawn(ctx, tool(ctx, 'cucumber-js'), secondArgs(profile), env, true, compiledRerun);
    secondResult = result;
    if (result.status !== 0) ctx.write(`   run 2 of 2 exited with status ${result.status}:\n${result.output.split('\n').slice(-40).join('\n')}\n`);
    return result;
  };

  // Independent work runs at once (two cores): run 1, the fuzz thread, and either run 2 or the compiled build and its runs.
  const runOne = phase(first, () =>
    spawn(
      ctx,
      tool(ctx, 'cucumber-js'),
      ['--profile', 'replay', glob, ...shardArgs, '--format', `html:${inRun('cucumber.html')}`, '--format', `junit:${inRun('junit.xml')}`, '--format', `message:${inRun('messages.ndjson')}`],
      firstEnv,
      false,
      compiledRerun,
    ),
  );
  // The unit tests under c8 are the longest of these: they start as soon as the compiled build is there.
  const secondAndCoverage: Promise<Measured | null> = compiledRerun
    ? (async () => {
        const run = emptyCoverageRun();
        const checking = phase(typesPhase, () => typeCheck(ctx, firstEnv, run));
        const built = await phase(compilePhase, () => compileBuild(ctx, run));
        if (!built) {
          // No JavaScript to run: the proof still gets its second run, through tsx.
          await Promise.all([secondRun('replay', secondEnv), checking]);
          return { summary: null, run, note: NO_JAVASCRIPT };
        }
        const covEnv = coverageEnv(ctx, firstEnv);
        const perturbedEnv = { ...covEnv, ...(perturbation ? { [PERTURB_ENV]: perturbation } : {}), [RUN_NONCE_ENV]: nonces.second };
        const [unitFolder] = await Promise.all([phase(unitsPhase, () => runCompiledUnits(ctx, covEnv, run)), phase(secondCompiled, () => secondRun('compiled', perturbedEnv)), checking]);
        compiledScenarioFailures(readRun(path.join(runDir, RERUN_MESSAGES)), run, null);
        return phase(reportPhase, () => coverageReport(ctx, firstEnv, run, features, unitFolder));
      })()
    : phase(secondOnTsx, () => secondRun('replay', secondEnv)).then(() => null);
  const fuzzing: Promise<CampaignResult | null> =
    fuzzPhase < 0
      ? Promise.resolve(null)
      : phase(fuzzPhase, () => runFuzzCampaignOnThread({ runs: fuzzRuns, seed: prepared.fuzzSeed, exclude: KNOWN_DEFECT_AREAS, planted_defect: prepared.plantedDefect })).then((result) => {
          ctx.write(`   ${generatedSummary(result)}\n`);
          return result;
        });
  // The first run's figures are drawn as soon as it ends, while the other work goes on.
  const firstRead = runOne.then((spawned) => withLastWords(readRun(path.join(runDir, 'messages.ndjson')), spawned.output));
  const figures = shard === null ? firstRead.then((read) => (read.run === null ? new Map<string, string>() : renderFigures(read.run, ctx.figureCache))) : Promise.resolve(undefined);
  // The planted-fault check starts when run 1 has ended: it reruns what passed there (faults.ts).
  const faultChecked: Promise<FaultCheck | undefined> =
    faultPhase < 0
      ? Promise.resolve(undefined)
      : firstRead.then((read) =>
          read.run === null
            ? undefined
            : phase(faultPhase, async () => {
                const check = await runFaultCheck(ctx, firstEnv, path.join(runDir, 'messages.ndjson'), compiledRerun);
                ctx.write(`   ${faultSummary(check)}\n`);
                return check;
              }),
        );
  const isolated: Promise<IsolationCheck | null | undefined> =
    isolationPhase < 0
      ? Promise.resolve(shard === null ? null : undefined)
      : firstRead.then((read) =>
          read.run === null
            ? undefined
            : phase(isolationPhase, async () => {
                const check = await checkIsolation(read.run!, aloneRun(ctx, firstEnv, compiledRerun));
                ctx.write(`   ${isolationSummary(check)}\n`);
                return check;
              }),
        );
  const [firstResult, generated, compiledMeasured] = await Promise.all([runOne, fuzzing, secondAndCoverage, figures, faultChecked, isolated]);
  const channels = (first: RunModel | null, second: RunModel | null) => runChannelProblems(runDir, nonces, firstResult, secondResult, first, second);

  let measured: Measured | null = compiledMeasured;
  if (ownCoverage >= 0) measured = await phase(ownCoverage, () => measureCoverage(ctx, features, firstEnv));
  if (measured !== null) {
    const cov = measured.summary;
    ctx.write(cov ? `   coverage: lines ${cov.lines.pct}%, branches ${cov.branches.pct}%\n` : `   coverage not measured: ${measured.note}\n`);
    for (const failure of measured.run.failures) ctx.write(`   ✗ ${failure.kind} "${failure.name}" (${failure.where})${failure.why ? `: ${failure.why}` : ''}\n`);
    for (const test of measured.run.skipped ?? []) ctx.write(`   – unit test "${test.name}" skipped, not checked again${test.why ? `: ${test.why}` : ''}\n`);
    for (const problem of measured.run.problems) ctx.write(`   ✗ ${problem}\n`);
  }

  if (shard !== null) {
    const faults = (await faultChecked) ?? null;
    await phase(last, () => {
      runDirKept();
      return publishShard(prepared, ctx, runDir, { shard, perturbation, generated, measured, faults, channels, nonces });
    });
    ctx.write(`\nshard ${shard.index} of ${shard.count}: ${path.join(options.out, SHARD_MANIFEST)} and its message streams (${seconds(ctx.now() - started)} in all)\n`);
    return { status: 0, model: null };
  }

  const model = await phase(last, async () => {
    runDirKept();
    const secondRunRead = readRun(path.join(runDir, RERUN_MESSAGES));
    const firstRunRead = await firstRead;
    const checks = [channelsGate(channels(firstRunRead.run, secondRunRead.run))];
    return publishSignoff(prepared, ctx, runDir, { first: firstRunRead, second: secondRunRead, perturbation, generated, measured, shardProblems: [], figures: await figures, checks, faults: await faultChecked, isolation: await isolated });
  });
  reportVerdict(ctx, model, measured);
  ctx.write(`\nsign-off: ${path.join(options.out, 'signoff.md')} and ${path.join(options.out, 'signoff.html')} (${seconds(ctx.now() - started)} in all)\n`);
  return { status: exitStatusOf(model), model };
}

