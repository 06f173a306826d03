// The compiled coverage run: src/ and steps/ compiled to build/ by esbuild, tsc's type check of the
// whole project beside it, the feature suite on the JavaScript under c8, and c8's report mapped back
// to src/. Coverage is what the scenarios exercised, which is what an approver signs (the unit tests
// are npm test's). Every failure or problem there is a problem of the coverage run (a gate).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CoverageRun, CoverageSummary, summariseCoverage } from './coverage';
import { RunModel } from './messages';
import { statusWord } from './model';
import { typeCheckInTurn } from './typeCheck';
import { fromRoot } from './context';
import type { DriverContext } from './context';
import { PERTURB_ENV } from './options';
import { readRun } from './runStreams';
import { spawn } from './spawn';
import { runSuite } from './suiteRunner';

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

/** The environment of the compiled run: coverage collected, its scratch folders in the caller's temporary folder, no test double. */
export function coverageEnv(ctx: DriverContext, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const covEnv: NodeJS.ProcessEnv = { ...env, NODE_V8_COVERAGE: path.join(ctx.root, RAW_COVERAGE) };
  if (ctx.coverageTemp !== undefined) covEnv.TMPDIR = ctx.coverageTemp;
  delete covEnv[PERTURB_ENV];
  return covEnv;
}

/** What the compiled suite run loads: the simulator and the steps (cucumber's profile "compiled"). */
const SUITE_FOLDERS = ['src', 'steps'];
/** The folders of the repository an earlier version compiled into build/ (tsconfig.json's include): their orphans are removed. */
const COMPILED_FOLDERS = ['src', 'steps', 'test', 'bench', 'scripts'];
/** The coverage run's problem when build/ holds no compiled src/. */
export const NO_JAVASCRIPT = 'the compiler produced no JavaScript';

/** The TypeScript sources of SUITE_FOLDERS (relative to the repository), in name order. */
function compiledSources(root: string): string[] {
  const sources: string[] = [];
  for (const folder of SUITE_FOLDERS) {
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

/** How esbuild compiles each source (one file in, one out: no bundling, so a file's JavaScript depends on it alone). */
const COMPILE_OPTIONS = { format: 'cjs', platform: 'node', target: 'node20', sourcemap: true } as const;

/** The record of what build/ was compiled from (compileBuild): each source's digest and the digests of what esbuild wrote for it. */
const COMPILE_RECORD = 'compiled.json';
interface CompileRecord {
  /** The compiler's version, its options and tsconfig.json (esbuild reads it): another key, and every file is compiled again. */
  key: string;
  files: Record<string, { source: string; js: string; map: string }>;
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A file's digest, or null when it cannot be read. */
function fileDigest(file: string): string | null {
  try {
    return sha256(fs.readFileSync(file));
  } catch {
    return null;
  }
}

/** The compile's key: esbuild's version (read without loading it), the options and tsconfig.json's contents. */
function compileKey(root: string): string {
  const version = (require('esbuild/package.json') as { version: string }).version;
  return sha256(JSON.stringify({ version, options: COMPILE_OPTIONS, tsconfig: fileDigest(path.join(root, 'tsconfig.json')) }));
}

/** The record of the last compile when it was made under `key`, else an empty one. */
function compileRecord(build: string, key: string): CompileRecord {
  try {
    const record = JSON.parse(fs.readFileSync(path.join(build, COMPILE_RECORD), 'utf8')) as CompileRecord;
    if (record.key === key && typeof record.files === 'object' && record.files !== null) return record;
  } catch {
    // none, or unreadable: everything is compiled
  }
  return { key, files: {} };
}

/** The JavaScript and source map esbuild writes for a source (relative to the repository). */
function outputsOf(build: string, source: string): { js: string; map: string } {
  const js = path.join(build, source.replace(/\.ts$/, '.js'));
  return { js, map: `${js}.map` };
}

/** Whether a source's JavaScript and map in build/ are what esbuild wrote for its contents now (the record says so, and they are still those bytes). */
function compiledAlready(build: string, source: string, digest: string | null, record: CompileRecord): boolean {
  const known = record.files[source];
  if (digest === null || known === undefined || known.source !== digest) return false;
  const { js, map } = outputsOf(build, source);
  return fileDigest(js) === known.js && fileDigest(map) === known.map;
}

/**
 * The TypeScript of SUITE_FOLDERS transpiled to build/ as CommonJS with source maps (for c8), by
 * esbuild, the compiler tsx runs the first run on, in well under a second where tsc takes several:
 * each source whose JavaScript in build/ is not what esbuild wrote for its contents now (its
 * record, build/compiled.json, keeps each source's digest and those of its two outputs, under
 * esbuild's version, the options and tsconfig.json), so that nothing changed, nothing is compiled.
 * What the last coverage run measured goes first, and every compiled file whose source is gone.
 * Types are checked by typeCheck, beside the compiled runs. False when it wrote no JavaScript; its
 * errors are problems of the coverage run.
 */
export async function compileBuild(ctx: DriverContext, run: CoverageRun): Promise<boolean> {
  const build = path.join(ctx.root, BUILD);
  // (.tsbuildinfo: the type check's record before it moved to build/typecheck.)
  for (const name of ['.v8-coverage', 'coverage', 'coverage-messages.ndjson', '.tsbuildinfo']) fs.rmSync(path.join(build, name), { recursive: true, force: true });
  for (const orphan of buildOrphans(ctx.root)) fs.rmSync(orphan, { force: true });
  const record = compileRecord(build, compileKey(ctx.root));
  // Each source's digest before esbuild reads it: one changed meanwhile is compiled again next time.
  const sources = compiledSources(ctx.root).map((source) => ({ source, digest: fileDigest(path.join(ctx.root, source)) }));
  const stale = sources.filter(({ source, digest }) => !compiledAlready(build, source, digest, record));
  if (stale.length > 0) {
    // Until it has compiled, no record names what build/ holds.
    fs.rmSync(path.join(build, COMPILE_RECORD), { force: true });
    // Loaded here: no other command of the package needs the compiler.
    const esbuild = require('esbuild') as typeof import('esbuild');
    try {
      await esbuild.build({ entryPoints: stale.map(({ source }) => path.join(ctx.root, source)), outdir: build, outbase: ctx.root, ...COMPILE_OPTIONS, logLevel: 'silent' });
      const files: CompileRecord['files'] = {};
      for (const { source, digest } of sources) {
        const { js, map } = outputsOf(build, source);
        const [jsDigest, mapDigest] = [fileDigest(js), fileDigest(map)];
        if (digest !== null && jsDigest !== null && mapDigest !== null) files[source] = { source: digest, js: jsDigest, map: mapDigest };
      }
      fs.writeFileSync(path.join(build, COMPILE_RECORD), `${JSON.stringify({ key: record.key, files } satisfies CompileRecord)}\n`);
    } catch (error) {
      const errors = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors ?? [];
      const named = errors.slice(0, 3).map((e) => (e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text));
      run.problems.push(`esbuild could not compile: ${named.length > 0 ? named.join(' / ') : (error as Error).message.split('\n')[0]}`);
    }
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
  // npm test checks with this record too: while it does, this check waits, then finds its work done.
  const checked = await typeCheckInTurn(ctx.root, path.join(ctx.root, BUILD, 'typecheck'), (plan) => spawn(ctx, plan.command, plan.args, env, true, true));
  if (checked.status !== 0) run.problems.push(`tsc reported errors: ${checked.output.split('\n').filter(Boolean).slice(0, 3).join(' / ')}`);
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

/** c8's report, as its programmatic API makes it (the `Report` its command line builds from `c8 report`'s options). */
interface C8Report {
  run(): Promise<void>;
}
type C8ReportOptions = {
  include: string[];
  exclude: string[];
  excludeNodeModules: boolean;
  allowExternal: boolean;
  reporter: string[];
  reportsDirectory: string;
  tempDirectory: string;
  all: boolean;
  src: string[];
  omitRelative: boolean;
  resolve: string;
  excludeAfterRemap: boolean;
  skipFull: boolean;
  mergeAsync: boolean;
};

/**
 * c8's summary of what the compiled runs covered in build/src, mapped back to src/: c8's own report
 * (its `Report`, what `c8 report` runs) made in this process, which spares a Node start and c8's
 * command-line parser. Every file of build/src counts, loaded or not (`all`), and nothing under it
 * is left out (no exclude list: c8's default one would drop a file named like a test). Paths are
 * absolute, so the report does not depend on this process's working folder.
 */
export async function coverageReport(ctx: DriverContext, run: CoverageRun, features: string): Promise<Measured> {
  const build = path.join(ctx.root, BUILD);
  const compiled = path.join(build, 'src');
  const reportDir = path.join(build, 'coverage');
  const file = path.join(reportDir, 'coverage-summary.json');
  let failure: string | null = null;
  try {
    // Loaded here: only the coverage run needs it.
    const { Report } = require('c8') as { Report: (options: C8ReportOptions) => C8Report };
    const options: C8ReportOptions = {
      include: [`${compiled}/**`],
      exclude: [],
      excludeNodeModules: true,
      allowExternal: true,
      reporter: ['json-summary'],
      reportsDirectory: reportDir,
      tempDirectory: path.join(ctx.root, RAW_COVERAGE),
      all: true,
      src: [compiled],
      omitRelative: true,
      resolve: '',
      excludeAfterRemap: false,
      skipFull: false,
      mergeAsync: false,
    };
    await Report(options).run();
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  if (failure !== null || !fs.existsSync(file)) {
    const note = `c8 could not report: ${(failure ?? 'it wrote no summary').slice(0, 300)}`;
    run.problems.push(note);
    return { summary: null, run, note };
  }
  const scope =
    `Measured by c8 ${c8Version()} on the JavaScript that esbuild compiled from src/ (mapped back to the TypeScript sources by its source maps), while running ` +
    `the ${features}/ feature suite once more (cucumber profile "compiled"): what the scenarios exercised. Every file of src/ counts, loaded or not. ` +
    'The unit and integration tests (npm test) are not part of this run.';
  const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { summary: summariseCoverage(summary, ctx.root, scope), run, note: '' };
}

/**
 * Coverage of src/ in a run of its own (a shard's): the sources compiled to build/, then the whole
 * feature suite from the JavaScript under c8, while tsc checks the types.
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
  const suite = { profile: 'compiled' as const, paths: [`${features}/**/*.feature`], shard: null, order: null, reports: { message: fromRoot(ctx.root, messages), summary: true }, env: covEnv, beside: false };
  await Promise.all([runSuite(ctx, suite), checking]);
  compiledScenarioFailures(readRun(messages), run, null);
  return coverageReport(ctx, run, features);
}


function c8Version(): string {
  return (require('c8/package.json') as { version: string }).version;
}
