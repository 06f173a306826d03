// The compiled coverage run: the sources compiled to build/ by esbuild, tsc's type check, the unit
// tests and the feature suite on the JavaScript under c8, and c8's report mapped back to src/; every
// failure or problem there is a problem of the coverage run (a gate of the sign-off).
import fs from 'node:fs';
import path from 'node:path';
import { CoverageRun, CoverageSummary, failedTapTests, skippedTapTests, summariseCoverage } from './coverage';
import { RunModel } from './messages';
import { statusWord } from './model';
import { typeCheckPlan } from './typeCheck';
import { countOf, fromRoot } from './context';
import type { DriverContext } from './context';
import { FUZZ_TEST_RUNS_ENV, PERTURB_ENV } from './options';
import { readRun } from './runStreams';
import { spawn, tool } from './spawn';

export interface Measured {
  summary: CoverageSummary | null;
  run: CoverageRun;
  note: string;
}

const BUILD = 'build';
const RAW_COVERAGE = path.join(BUILD, '.v8-coverage');


export function emptyCoverageRun(): CoverageRun {
  return { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], skipped: [], problems: [] };
}

/**
 * Generated workloads the compiled unit run's fuzz test checks. The sign-off's own phase checks the
 * full campaign (DEFAULT_FUZZ_RUNS cases, the same generator and seed as that test); here they count
 * toward coverage, which a tenth of them measures as well at a fraction of the time under c8.
 */
export const COVERAGE_FUZZ_TEST_RUNS = 100;

/** The environment of the compiled runs: coverage collected, the command line from build/, no test double. */
export function coverageEnv(ctx: DriverContext, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const covEnv: NodeJS.ProcessEnv = { ...env, NODE_V8_COVERAGE: path.join(ctx.root, RAW_COVERAGE), KVQUAL_BUILD: BUILD, [FUZZ_TEST_RUNS_ENV]: String(COVERAGE_FUZZ_TEST_RUNS) };
  if (ctx.coverageTemp !== undefined) covEnv.TMPDIR = ctx.coverageTemp;
  delete covEnv[PERTURB_ENV];
  // Started from inside a `node --test` run, the nested runner would report to that parent instead of printing TAP.
  delete covEnv.NODE_TEST_CONTEXT;
  return covEnv;
}

/** The folders of the repository compiled into build/ (tsconfig.json's include). */
const COMPILED_FOLDERS = ['src', 'steps', 'test', 'bench', 'scripts'];
/** The coverage run's problem when build/ holds no compiled src/. */
export const NO_JAVASCRIPT = 'the compiler produced no JavaScript';

/** The TypeScript sources of COMPILED_FOLDERS (relative to the repository), in name order. */
function compiledSources(root: string): string[] {
  const sources: string[] = [];
  for (const folder of COMPILED_FOLDERS) {
    const source = path.join(root, folder);
    if (!fs.existsSync(source)) continue;
    for (const entry of fs.readdirSync(source, { recursive: true, encoding: 'utf8' })) {
      if (entry.split(path.sep).includes('node_modules') || !entry.endsWith('.ts') || entry.endsWith('.d.ts')) continue;
      sources.push(path.join(folder, entry));
    }
  }
  return sources.sort();
}

/** The compiled files of build/ (and their maps) whose TypeScript source is gone: removed, since a deleted test must not run from an older build. */
export function buildOrphans(root: string): string[] {
  const orphans: string[] = [];
  for (const folder of COMPILED_FOLDERS) {
    const built = path.join(root, BUILD, folder);
    if (!fs.existsSync(built)) continue;
    for (const entry of fs.readdirSync(built, { recursive: true, encoding: 'utf8' })) {
      const match = /^(.*)\.js(\.map)?$/.exec(entry);
      if (match && !fs.existsSync(path.join(root, folder, `${match[1]}.ts`))) orphans.push(path.join(built, entry));
    }
  }
  return orphans.sort();
}

/**
 * The TypeScript of COMPILED_FOLDERS transpiled to build/ as CommonJS with source maps (for c8), by
 * esbuild, the compiler tsx runs the first run on: every file every time, in well under a second
 * where tsc takes several. What the last coverage run measured goes first, and every
 * compiled file whose source is gone. Types are checked by typeCheck, beside the compiled runs.
 * False when it wrote no JavaScript; its errors are problems of the coverage run.
 */
export async function compileBuild(ctx: DriverContext, run: CoverageRun): Promise<boolean> {
  const build = path.join(ctx.root, BUILD);
  // (.tsbuildinfo: the type check's record before it moved to build/typecheck.)
  for (const name of ['.v8-coverage', 'coverage', 'coverage-messages.ndjson', '.tsbuildinfo']) fs.rmSync(path.join(build, name), { recursive: true, force: true });
  for (const orphan of buildOrphans(ctx.root)) fs.rmSync(orphan, { force: true });
  // Loaded here: no other command of the package needs the compiler.
  const esbuild = require('esbuild') as typeof import('esbuild');
  try {
    await esbuild.build({
      entryPoints: compiledSources(ctx.root).map((source) => path.join(ctx.root, source)),
      outdir: build,
      outbase: ctx.root,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      sourcemap: true,
      logLevel: 'silent',
    });
  } catch (error) {
    const errors = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors ?? [];
    const named = errors.slice(0, 3).map((e) => (e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text));
    run.problems.push(`esbuild could not compile: ${named.length > 0 ? named.join(' / ') : (error as Error).message.split('\n')[0]}`);
  }
  if (!fs.existsSync(path.join(build, 'src'))) {
    run.problems.push(NO_JAVASCRIPT);
    return false;
  }
  return true;
}

/**
 * tsc checks the types of everything build/ is compiled from (tsconfig.json), in its build mode
 * (typeCheck.ts: its record in build/typecheck, nothing to do when no file changed since a check
 * that passed): an error is a problem of the coverage run, as a failing test is.
 */
export async function typeCheck(ctx: DriverContext, env: NodeJS.ProcessEnv, run: CoverageRun): Promise<void> {
  const plan = typeCheckPlan(ctx.root, path.join(ctx.root, BUILD, 'typecheck'));
  const checked = await spawn(ctx, plan.command, plan.args, env, true, true);
  plan.done();
  if (checked.status !== 0) run.problems.push(`tsc reported errors: ${checked.output.split('\n').filter(Boolean).slice(0, 3).join(' / ')}`);
}

/**
 * The unit test files of the compiled build under c8, in one process (build/test/units.js: one
 * Node start and one load of src/ for all of them, beside the compiled feature run); their failures
 * and counts go into `run`.
 */
export async function runCompiledUnits(ctx: DriverContext, covEnv: NodeJS.ProcessEnv, run: CoverageRun): Promise<string> {
  // KVQUAL_COVERAGE_UNITS=<folder under build/> runs that folder's tests instead of test/unit's
  // (the integration test of this gate uses a fixture test that fails only when compiled).
  const unitFolder = ctx.env.KVQUAL_COVERAGE_UNITS ?? path.join(BUILD, 'test', 'unit');
  const unitDir = path.join(ctx.root, unitFolder);
  const units = fs.existsSync(unitDir) ? fs.readdirSync(unitDir).filter((f) => f.endsWith('.test.js')) : [];
  run.unitFiles = units.length;
  if (units.length === 0) run.problems.push(`no unit test file (*.test.js) in ${unitFolder}: the coverage run checked no unit test`);
  if (units.length > 0) {
    const unit = await spawn(ctx, process.execPath, ['--test-reporter=tap', path.join(BUILD, 'test', 'units.js'), unitFolder], covEnv, true);
    const count = (label: string) => Number((unit.output.match(new RegExp(`^# ${label} (\\d+)$`, 'm')) ?? [0, 0])[1]);
    run.unitTests = count('tests');
    run.unitPassed = count('pass');
    run.failures.push(...failedTapTests(unit.output, ctx.root));
    run.skipped = skippedTapTests(unit.output);
    if (unit.status !== 0 && run.failures.length === 0) run.problems.push(`node --test exited with status ${unit.status} and named no failed test`);
    if (run.unitTests === 0) run.problems.push(`node --test ran no test from ${countOf(units.length, 'file')} of ${unitFolder}`);
  }
  return unitFolder;
}

/** Every scenario of a compiled feature run that did not pass is a failure of the coverage run. */
export function compiledScenarioFailures(suite: { run: RunModel | null; problem: string | null }, run: CoverageRun, share: Set<string> | null): void {
  if (suite.run === null) {
    run.problems.push(`the compiled feature run: ${suite.problem}`);
    return;
  }
  const scenarios = share === null ? suite.run.scenarios : suite.run.scenarios.filter((s) => share.has(s.key));
  run.scenarios = scenarios.length;
  for (const scenario of scenarios) {
    if (scenario.status === 'PASSED' || scenario.emptyExamples !== undefined) continue;
    const step = scenario.steps.find((s) => s.status !== 'PASSED' && s.status !== 'SKIPPED');
    const why = step ? `${statusWord(step.status)}${step.message ? `: ${step.message.split('\n')[0]}` : ''}` : statusWord(scenario.status);
    run.failures.push({ kind: 'scenario', name: scenario.name, where: scenario.key, why });
  }
  run.problems.push(...suite.run.runErrors.map((e) => `the compiled feature run: ${e}`));
}

/** c8's summary of what the compiled runs covered in build/src, mapped back to src/. */
export async function coverageReport(ctx: DriverContext, env: NodeJS.ProcessEnv, run: CoverageRun, features: string, unitFolder: string): Promise<Measured> {
  const build = path.join(ctx.root, BUILD);
  const report = await spawn(
    ctx,
    tool(ctx, 'c8'),
    ['report', '--temp-directory', path.join(ctx.root, RAW_COVERAGE), '--reporter', 'json-summary', '--report-dir', path.join(build, 'coverage'), '--include', 'build/src/**', '--all', '--src', 'build/src'],
    env,
    true,
  );
  const file = path.join(build, 'coverage', 'coverage-summary.json');
  if (report.status !== 0 || !fs.existsSync(file)) {
    const note = `c8 could not report: ${report.output.slice(0, 300)}`;
    run.problems.push(note);
    return { summary: null, run, note };
  }
  const scope =
    `Measured by c8 ${c8Version(ctx.root)} on the JavaScript that esbuild compiled from src/ (mapped back to the TypeScript sources by its source maps), while running ` +
    `the ${countOf(run.unitFiles, 'unit test file')} of ${unitFolder.replace(/^build\//, '')} (the kvqual command line included, through bin/kvqual.js with KVQUAL_BUILD=build; its fuzz test on ${COVERAGE_FUZZ_TEST_RUNS} generated workloads, as the generated-workloads gate checks the whole campaign) and the ${features}/ feature suite once more ` +
    '(cucumber profile "compiled"). Every file of src/ counts, loaded or not. The integration tests (test/integration) drive the TypeScript sources through tsx and are not part of this run.';
  const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { summary: summariseCoverage(summary, ctx.root, scope), run, note: '' };
}

/**
 * Coverage of src/ in a run of its own (a shard's): the sources compiled to build/, then the unit
 * tests and the whole feature suite from the JavaScript under c8, while tsc checks the types.
 */
export async function measureCoverage(ctx: DriverContext, features: string, env: NodeJS.ProcessEnv): Promise<Measured> {
  const run = emptyCoverageRun();
  const checking = typeCheck(ctx, env, run);
  if (!(await compileBuild(ctx, run))) {
    await checking;
    return { summary: null, run, note: NO_JAVASCRIPT };
  }
  const covEnv = coverageEnv(ctx, env);
  const messages = path.join(ctx.root, BUILD, 'coverage-messages.ndjson');
  const [unitFolder] = await Promise.all([
    runCompiledUnits(ctx, covEnv, run),
    spawn(ctx, tool(ctx, 'cucumber-js'), ['--profile', 'compiled', `${features}/**/*.feature`, '--format', `message:${fromRoot(ctx.root, messages)}`, '--format', 'summary'], covEnv, true, true),
    checking,
  ]);
  compiledScenarioFailures(readRun(messages), run, null);
  return coverageReport(ctx, env, run, features, unitFolder);
}


function c8Version(root: string): string {
  return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'c8', 'package.json'), 'utf8')) as { version: string }).version;
}
