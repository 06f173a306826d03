// The run driver of `npm run qualify`: checks its arguments and inputs before touching anything,
// runs the feature suite twice with cucumber's reports, runs generated workloads against the
// simulator's invariants (src/fuzz, as `npm run fuzz`), measures coverage over the compiled
// JavaScript (the same unit tests and features once more; any failure there fails a gate), builds
// the sign-off and publishes the whole output set at once (see write.ts). Each phase is printed as
// it starts and with its time when it ends. The clock, git facts and the console come from the
// caller (scripts/qualify.ts), so this module reads no clock itself.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { renderFigure } from '../report/figure';
import { CoverageRun, CoverageSummary, failedTapTests, summariseCoverage } from './coverage';
import { compareRuns } from './determinism';
import { renderHtml, summaryChart } from './html';
import { ASSETS_DIR, renderMarkdown, SUMMARY_CHART } from './markdown';
import { parseRun, RunModel } from './messages';
import { anchorOf, buildSignoff, generatedSummary, parseGlossary, RERUN_MESSAGES, SignoffModel, statusWord, Subject } from './model';
import { runFuzzCampaign, type CampaignResult } from '../fuzz/campaign';
import { KNOWN_DEFECT_AREAS } from '../fuzz/generate';
import { parseRegistry, Registry } from './requirements';
import { toSignoffJson } from './json';
import { parseSignoffJson, SignoffJson } from './jsonSchema';
import { CURRENT_LINK, newRunDir, publishRun, removeStale, RUNS_DIR } from './write';

export const PERTURB_ENV = 'KVQUAL_PERTURB';

/** Wrong arguments or unreadable inputs: reported in one line, exit status 2, nothing deleted. */
export class UsageError extends Error {}

export interface QualifyOptions {
  features: string;
  requirements: string;
  out: string;
  campaign: string | null;
  coverage: boolean;
  baseline: string | null;
  /** Generated workloads to run (npm run fuzz); 0 leaves the campaign and its gate out. */
  fuzzRuns: number;
  argv: string[];
}

/** Generated workloads the sign-off runs by default, as `npm test` does, and their seed when KVQUAL_SEED is not set. */
export const DEFAULT_FUZZ_RUNS = 1000;
export const DEFAULT_FUZZ_SEED = 1893;

const OPTIONS_HELP = '--features DIR, --requirements FILE, --out DIR, --campaign NAME, --baseline FILE, --no-coverage, --fuzz-runs N';

/** Parses `npm run qualify -- …`; throws UsageError naming the problem. */
export function parseQualifyArgs(argv: string[]): QualifyOptions {
  const options: QualifyOptions = { features: 'features', requirements: 'requirements.yaml', out: 'reports', campaign: null, coverage: true, baseline: null, fuzzRuns: DEFAULT_FUZZ_RUNS, argv };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${arg} needs a value (options: ${OPTIONS_HELP})`);
      return next;
    };
    if (arg === '--features') options.features = value();
    else if (arg === '--requirements') options.requirements = value();
    else if (arg === '--out') options.out = value();
    else if (arg === '--campaign') options.campaign = value();
    else if (arg === '--baseline') options.baseline = value();
    else if (arg === '--no-coverage') options.coverage = false;
    else if (arg === '--fuzz-runs') {
      const text = value();
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--fuzz-runs ${text}: expected a whole number`);
      options.fuzzRuns = Number(text);
    } else throw new UsageError(`unknown option "${arg}" (options: ${OPTIONS_HELP})`);
  }
  return options;
}

export interface DriverContext {
  /** The repository root (package.json, node_modules, cucumber.js). */
  root: string;
  env: NodeJS.ProcessEnv;
  /** Milliseconds, for phase times only. */
  now(): number;
  /** The date line of the report. */
  date(): string;
  subject(): Subject;
  write(text: string): void;
}

/** What the checks before the run found: everything the run needs, read and valid. */
export interface Prepared {
  options: QualifyOptions;
  out: string;
  /** The features folder relative to the root, as cucumber is given it. */
  features: string;
  registry: Registry;
  baseline: SignoffJson | null;
  /** Seed of the generated workloads (KVQUAL_SEED, or DEFAULT_FUZZ_SEED). */
  fuzzSeed: number;
}

function countFeatures(dir: string): number {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.feature')).length;
}

/** Checks every argument and input before anything is deleted or run. */
export function prepare(options: QualifyOptions, root: string, env: NodeJS.ProcessEnv = {}): Prepared {
  const featuresDir = path.resolve(options.features);
  if (!fs.existsSync(featuresDir) || !fs.statSync(featuresDir).isDirectory()) throw new UsageError(`--features ${options.features}: no such folder`);
  if (countFeatures(featuresDir) === 0) throw new UsageError(`--features ${options.features}: no .feature file in it`);
  const requirementsFile = path.resolve(options.requirements);
  if (!fs.existsSync(requirementsFile) || !fs.statSync(requirementsFile).isFile()) throw new UsageError(`--requirements ${options.requirements}: no such file`);
  let registry: Registry;
  try {
    registry = parseRegistry(fs.readFileSync(requirementsFile, 'utf8'), options.requirements);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\n\s*/g, ' '));
  }
  let baseline: SignoffJson | null = null;
  if (options.baseline !== null) {
    const file = path.resolve(options.baseline);
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new UsageError(`--baseline ${options.baseline}: no such file`);
    try {
      baseline = parseSignoffJson(fs.readFileSync(file, 'utf8'), `--baseline ${options.baseline}`);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const out = path.resolve(options.out);
  if (fs.existsSync(out) && !fs.statSync(out).isDirectory()) throw new UsageError(`--out ${options.out}: exists and is not a folder`);
  checkOutFolder(out, options.out, root);
  makeFolder(out, options.out);
  const seedText = env.KVQUAL_SEED;
  const fuzzSeed = seedText === undefined || seedText === '' ? DEFAULT_FUZZ_SEED : Number(seedText);
  if (!/^-?\d+$/.test(seedText ?? '0') || !Number.isSafeInteger(fuzzSeed)) throw new UsageError(`KVQUAL_SEED="${seedText}" is not a whole-number seed`);
  return { options, out, features: fromRoot(root, featuresDir), registry, baseline, fuzzSeed };
}

/**
 * Makes the --out folder one level at a time (a recursive mkdir can spin forever under /proc);
 * a level that cannot be made is a usage error naming it. Making a folder deletes nothing.
 */
function makeFolder(out: string, given: string): void {
  const missing: string[] = [];
  for (let dir = out; !fs.existsSync(dir); dir = path.dirname(dir)) missing.unshift(dir);
  for (const dir of missing) {
    try {
      fs.mkdirSync(dir);
    } catch (error) {
      throw new UsageError(`--out ${given}: cannot make the folder ${dir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
}

/**
 * Refuses an --out folder that qualify did not make: one that holds files qualify does not write
 * (publishing replaces what it writes there). The repository's reports/ is its own.
 */
function checkOutFolder(out: string, given: string, root: string): void {
  if (!fs.existsSync(out) || out === path.join(root, 'reports')) return;
  const own = new Set<string>([...SET_NAMES, RUNS_DIR, CURRENT_LINK]);
  // signoff-assets is qualify's when it is a link of a published set, or (an older version's) a folder of figures only.
  const assets = path.join(out, ASSETS_DIR);
  const foreignAssets =
    fs.existsSync(assets) && !fs.lstatSync(assets).isSymbolicLink() && (!fs.statSync(assets).isDirectory() || fs.readdirSync(assets).some((name) => !name.endsWith('.svg')));
  const foreign = fs
    .readdirSync(out)
    .filter(
      (name) =>
        (!own.has(name) && !/^\.signoff-assets\.(new|old)-\d+$/.test(name) && !/^\..+\.tmp-\d+$/.test(name) && !/^\.signoff-current\.new-\d+$/.test(name)) ||
        (name === ASSETS_DIR && foreignAssets),
    )
    .sort();
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? ', …' : '');
    throw new UsageError(`--out ${given}: the folder holds files qualify did not write (${shown}); give a new or empty folder`);
  }
}

/** A path relative to the repository root, for the tools run there. */
function fromRoot(root: string, p: string): string {
  return path.relative(root, path.resolve(p)).split(path.sep).join('/') || '.';
}

interface Spawned {
  status: number | null;
  output: string;
}

function spawn(ctx: DriverContext, command: string, args: string[], env: NodeJS.ProcessEnv, quiet: boolean): Spawned {
  const result = spawnSync(command, args, { cwd: ctx.root, env, encoding: 'utf8', stdio: quiet ? 'pipe' : 'inherit', maxBuffer: 256 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

function tool(ctx: DriverContext, name: string): string {
  return path.join(ctx.root, 'node_modules', '.bin', name);
}

function readRun(file: string): { run: RunModel | null; problem: string | null } {
  if (!fs.existsSync(file)) return { run: null, problem: `cucumber wrote no message stream (${path.basename(file)})` };
  return { run: parseRun(fs.readFileSync(file, 'utf8')), problem: null };
}

/** The names a reader opens in the output folder; each is one file (or folder) of the run's set. */
export const SET_NAMES = ['signoff.md', 'signoff.html', 'signoff.json', ASSETS_DIR, 'cucumber.html', 'junit.xml', 'messages.ndjson', RERUN_MESSAGES];

interface Measured {
  summary: CoverageSummary | null;
  run: CoverageRun;
  note: string;
}

/** Coverage of src/: tsc to build/, then the unit tests and the feature suite from the JavaScript, under c8. */
function measureCoverage(ctx: DriverContext, features: string, env: NodeJS.ProcessEnv): Measured {
  const build = path.join(ctx.root, 'build');
  const raw = path.join(build, '.v8-coverage');
  const run: CoverageRun = { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], problems: [] };
  fs.rmSync(build, { recursive: true, force: true });
  const compiled = spawn(ctx, tool(ctx, 'tsc'), ['-p', 'tsconfig.json', '--outDir', 'build'], env, true);
  if (compiled.status !== 0) run.problems.push(`tsc reported errors: ${compiled.output.split('\n').filter(Boolean).slice(0, 3).join(' / ')}`);
  if (!fs.existsSync(path.join(build, 'src'))) {
    run.problems.push('tsc produced no JavaScript');
    return { summary: null, run, note: 'tsc produced no JavaScript' };
  }
  const covEnv: NodeJS.ProcessEnv = { ...env, NODE_V8_COVERAGE: raw, KVQUAL_BUILD: 'build' };
  delete covEnv[PERTURB_ENV];
  // Started from inside a `node --test` run, the nested runner would report to that parent instead of printing TAP.
  delete covEnv.NODE_TEST_CONTEXT;
  // KVQUAL_COVERAGE_UNITS=<folder under build/> runs that folder's tests instead of test/unit's
  // (the integration test of this gate uses a fixture test that fails only when compiled).
  const unitFolder = env.KVQUAL_COVERAGE_UNITS ?? path.join('build', 'test', 'unit');
  const unitDir = path.join(ctx.root, unitFolder);
  const units = fs.existsSync(unitDir) ? fs.readdirSync(unitDir).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join(unitFolder, f)) : [];
  run.unitFiles = units.length;
  if (units.length > 0) {
    const unit = spawn(ctx, process.execPath, ['--test', '--test-reporter=tap', ...units], covEnv, true);
    const count = (label: string) => Number((unit.output.match(new RegExp(`^# ${label} (\\d+)$`, 'm')) ?? [0, 0])[1]);
    run.unitTests = count('tests');
    run.failures.push(...failedTapTests(unit.output, ctx.root));
    if (unit.status !== 0 && run.failures.length === 0) run.problems.push(`node --test exited with status ${unit.status} and named no failed test`);
    if (run.unitTests === 0) run.problems.push(`node --test ran no test from ${countOf(units.length, 'file')} of ${unitFolder}`);
  }
  const messages = path.join(build, 'coverage-messages.ndjson');
  spawn(ctx, tool(ctx, 'cucumber-js'), ['--profile', 'compiled', `${features}/**/*.feature`, '--format', `message:${fromRoot(ctx.root, messages)}`, '--format', 'summary'], covEnv, true);
  const suite = readRun(messages);
  if (suite.run === null) run.problems.push(`the compiled feature run: ${suite.problem}`);
  else {
    run.scenarios = suite.run.scenarios.length;
    for (const scenario of suite.run.scenarios) {
      if (scenario.status === 'PASSED') continue;
      const step = scenario.steps.find((s) => s.status !== 'PASSED' && s.status !== 'SKIPPED');
      const why = step ? `${statusWord(step.status)}${step.message ? `: ${step.message.split('\n')[0]}` : ''}` : statusWord(scenario.status);
      run.failures.push({ kind: 'scenario', name: scenario.name, where: scenario.key, why });
    }
    run.problems.push(...suite.run.runErrors.map((e) => `the compiled feature run: ${e}`));
  }
  const report = spawn(
    ctx,
    tool(ctx, 'c8'),
    ['report', '--temp-directory', raw, '--reporter', 'json-summary', '--report-dir', path.join(build, 'coverage'), '--include', 'build/src/**', '--all', '--src', 'build/src'],
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
    `Measured by c8 ${c8Version(ctx.root)} on the JavaScript that tsc compiled from src/ (mapped back to the TypeScript sources), while running ` +
    `the ${countOf(units.length, 'unit test file')} of ${unitFolder.replace(/^build\//, '')} (the kvqual command line included, through bin/kvqual.js with KVQUAL_BUILD=build) and the ${features}/ feature suite once more ` +
    '(cucumber profile "compiled"). Every file of src/ counts, loaded or not. The integration tests (test/integration) drive the TypeScript sources through tsx and are not part of this run.';
  const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { summary: summariseCoverage(summary, ctx.root, scope), run, note: '' };
}

function countOf(n: number, one: string): string {
  return `${n} ${n === 1 ? one : `${one}s`}`;
}

function c8Version(root: string): string {
  return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'c8', 'package.json'), 'utf8')) as { version: string }).version;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Runs the qualification; returns the exit status (0 QUALIFIED, 1 NOT QUALIFIED). */
export async function qualify(prepared: Prepared, ctx: DriverContext): Promise<{ status: number; model: SignoffModel }> {
  const { options, out, features, registry } = prepared;
  const started = ctx.now();
  const perturbation = ctx.env[PERTURB_ENV] ? ctx.env[PERTURB_ENV]! : null;
  const firstEnv = { ...ctx.env };
  delete firstEnv[PERTURB_ENV];
  const secondEnv = { ...ctx.env };
  const glob = `${features}/**/*.feature`;
  const phases = ['run 1 of 2: the suite, with cucumber.html, junit.xml and messages.ndjson', `run 2 of 2: the same suite again, to compare digests${perturbation ? ` (${PERTURB_ENV}="${perturbation}": test double active)` : ''}`];
  if (options.fuzzRuns > 0) {
    const left = KNOWN_DEFECT_AREAS.length > 0 ? `, areas left out for known defects: ${KNOWN_DEFECT_AREAS.join(', ')}` : '';
    phases.push(`generated workloads: ${options.fuzzRuns} cases (fast-check seed ${prepared.fuzzSeed}) checked against the simulator's invariants${left}`);
  }
  if (options.coverage) phases.push('coverage run: tsc to build/, then the unit tests and the features again on the JavaScript, under c8');
  phases.push('sign-off: signoff.md, signoff.html and signoff.json, published with the reports as one set');
  let index = 0;
  const phase = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    const title = phases[index++];
    ctx.write(`\n── [${index}/${phases.length}] ${title} ──\n`);
    const t0 = ctx.now();
    const value = await fn();
    ctx.write(`   [${index}/${phases.length}] done in ${seconds(ctx.now() - t0)}\n`);
    return value;
  };

  const removed = removeStale(out);
  if (removed.length > 0) ctx.write(`removed what earlier runs left unfinished: ${removed.join(', ')}\n`);
  const runDir = newRunDir(out, `run-${ctx.now()}-${process.pid}`);
  const inRun = (name: string) => fromRoot(ctx.root, path.join(runDir, name));

  await phase(() =>
    spawn(ctx, tool(ctx, 'cucumber-js'), ['--profile', 'replay', glob, '--format', `html:${inRun('cucumber.html')}`, '--format', `junit:${inRun('junit.xml')}`, '--format', `message:${inRun('messages.ndjson')}`], firstEnv, false),
  );
  await phase(() => spawn(ctx, tool(ctx, 'cucumber-js'), ['--profile', 'replay', glob, '--format', `message:${inRun(RERUN_MESSAGES)}`], secondEnv, false));

  let generated: CampaignResult | null = null;
  if (options.fuzzRuns > 0) {
    generated = await phase(() => runFuzzCampaign({ runs: options.fuzzRuns, seed: prepared.fuzzSeed, exclude: KNOWN_DEFECT_AREAS }));
    ctx.write(`   ${generatedSummary(generated)}\n`);
  }

  let measured: Measured | null = null;
  if (options.coverage) {
    measured = await phase(() => measureCoverage(ctx, features, firstEnv));
    const cov = measured.summary;
    ctx.write(cov ? `   lines ${cov.lines.pct}%, branches ${cov.branches.pct}%\n` : `   not measured: ${measured.note}\n`);
    for (const failure of measured.run.failures) ctx.write(`   ✗ ${failure.kind} "${failure.name}" (${failure.where})${failure.why ? `: ${failure.why}` : ''}\n`);
    for (const problem of measured.run.problems) ctx.write(`   ✗ ${problem}\n`);
  }

  const model = await phase(async () => {
    const first = readRun(path.join(runDir, 'messages.ndjson'));
    const second = readRun(path.join(runDir, RERUN_MESSAGES));
    const runModel: RunModel = first.run ?? { scenarios: [], sources: [], cucumberVersion: null, phrases: [], runErrors: [first.problem!], finished: false };
    const determinism = compareRuns(runModel, second.run, second.problem);
    const figures = new Map<string, string>();
    for (const scenario of runModel.scenarios) {
      if (!scenario.evidence) continue;
      const svg = await renderFigure(scenario.evidence, anchorOf(scenario));
      if (svg !== null) figures.set(scenario.key, svg);
    }
    const subject = ctx.subject();
    const built = buildSignoff({
      campaign: options.campaign ?? `${subject.packageName} ${subject.packageVersion} release qualification`,
      date: ctx.date(),
      subject,
      command: ['npm run qualify', ...(options.argv.length ? ['--', ...options.argv] : [])].join(' '),
      run: runModel,
      determinism,
      registry,
      coverage: measured?.summary ?? null,
      coverageNote: measured === null ? 'not requested (--no-coverage)' : measured.note,
      coverageRun: measured?.run ?? null,
      perturbation,
      figures,
      companions: [
        { label: "cucumber's HTML report", file: 'cucumber.html' },
        { label: 'JUnit XML', file: 'junit.xml' },
        { label: 'message stream', file: 'messages.ndjson' },
        { label: 'message stream of the second run', file: RERUN_MESSAGES },
      ],
      baseline: prepared.baseline,
      generated,
      glossary: fs.existsSync(path.join(ctx.root, 'docs', 'glossary.md')) ? parseGlossary(fs.readFileSync(path.join(ctx.root, 'docs', 'glossary.md'), 'utf8')) : [],
    });
    // Everything is written into the unpublished run folder, then published in one rename.
    fs.mkdirSync(path.join(runDir, ASSETS_DIR), { recursive: true });
    for (const view of built.views) if (view.figure !== null) fs.writeFileSync(path.join(runDir, ASSETS_DIR, view.figureFile!), view.figure);
    fs.writeFileSync(path.join(runDir, ASSETS_DIR, SUMMARY_CHART), summaryChart(built.matrix));
    fs.writeFileSync(path.join(runDir, 'signoff.md'), renderMarkdown(built));
    fs.writeFileSync(path.join(runDir, 'signoff.html'), renderHtml(built));
    fs.writeFileSync(path.join(runDir, 'signoff.json'), `${JSON.stringify(toSignoffJson(built), null, 1)}\n`);
    publishRun(out, runDir, SET_NAMES);
    return built;
  });

  ctx.write(`\n── verdict: ${model.verdict} ──\n`);
  for (const gate of model.gates) ctx.write(`${gate.passed ? 'pass' : 'FAIL'}  ${gate.title}: ${gate.summary}\n`);
  if (measured !== null && measured.run.failures.length > 0) {
    ctx.write('\nFailed in the compiled coverage run:\n');
    for (const failure of measured.run.failures) ctx.write(`  ✗ ${failure.kind} "${failure.name}" (${failure.where})${failure.why ? `: ${failure.why}` : ''}\n`);
  }
  ctx.write(`\nsign-off: ${path.join(options.out, 'signoff.md')} and ${path.join(options.out, 'signoff.html')} (${seconds(ctx.now() - started)} in all)\n`);
  return { status: model.qualified ? 0 : 1, model };
}
