// The run driver of `npm run qualify`: checks its arguments and inputs before touching anything,
// runs the feature suite twice with cucumber's reports, runs generated workloads against the
// simulator's invariants (src/fuzz, as `npm run fuzz`, on a worker thread), measures coverage over
// the compiled JavaScript (any failure there fails a gate), builds the sign-off and publishes the
// whole output set at once (see write.ts). Independent phases run at once on the two cores: run 1
// (tsx), the generated workloads, tsc's type check, and as soon as esbuild has compiled build/ the
// second run, which is the suite on the compiled JavaScript under c8 (so the determinism proof
// compares tsx with compiled and no third suite run is needed), beside the compiled unit tests
// under c8, the longest phase: the processes beside it run at a lower priority, so that it keeps a
// core to the end. Each phase is printed as it starts and with its time when it ends. With `--shard i/n`
// it runs only its share of the scenarios (both runs through tsx; shard 1 also the generated
// workloads and a coverage run of its own over the whole suite) and publishes its streams with a
// shard manifest instead of a sign-off; with `--merge DIR…` it runs nothing and builds the one
// sign-off from the shards' streams (shards.ts). The clock, git facts, the console and cucumber's
// report formatters come from the caller (scripts/qualify.ts), so this module reads no clock itself.
import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderFigure, type FigureCache } from '../report/figure';
import { shellWord } from '../report/replayCommand';
import { CoverageRun, CoverageSummary, failedTapTests, skippedTapTests, summariseCoverage } from './coverage';
import { compareRuns } from './determinism';
import { renderHtml, summaryChart } from './html';
import { ASSETS_DIR, renderMarkdown, SUMMARY_CHART } from './markdown';
import { parseRun, RunModel, runLastWords } from './messages';
import { anchorsOf, buildSignoff, Gate, DEFAULT_FUZZ_RUNS, DEFAULT_FUZZ_SEED, generatedSummary, parseGlossary, RERUN_MESSAGES, SignoffModel, statusWord, Subject, SuiteScope } from './model';
import type { CampaignResult } from '../fuzz/campaign';
import { runFuzzCampaignOnThread } from '../fuzz/campaignThread';
import { KNOWN_DEFECT_AREAS } from '../fuzz/generate';
import { PLANTED_DEFECT_ENV, plantedCommandPrefix, plantedDefectAsked } from '../fuzz/planted';
import { SIMULATOR_FAULT_ENV } from '../fuzz/simulatorFaults';
import { faultSummary, mergeFaultChecks, type FaultCheck } from './faults';
import { checkIsolation, isolationSummary, type AloneRun, type IsolationCheck } from './isolation';
import { parseRegistry, Registry } from './requirements';
import { toSignoffJson } from './json';
import { parseSignoffJson, SignoffJson } from './jsonSchema';
import { CURRENT_LINK, newRunDir, publishRun, removeStale, runFolderGuard, RUNS_DIR } from './write';
import { typeCheckPlan } from './typeCheck';
import { checkShards, mergeStreams, parseShardManifest, parseShardSpec, SHARD_FORMAT, SHARD_MANIFEST, ShardInput, ShardManifest, ShardSpec, suiteIdentity } from './shards';
import { ownerTag } from '../processes';
import { blobId, LOADED_PATHS, linksLeaving } from './provenance';
import { channelDisagreements, channelsGate } from './channels';
import { checkoutProblems, mergeNarrowed, ownStreamProblems, RUN_NONCE_ENV, sha256Of, sharedOptions, signatureOf, SIGNING_KEY_ENV, verifyShards } from './shardTrust';
import type { Git } from './worktree';
import { exitStatusOf, NARROWED_EXIT_STATUS, NARROWED_VERDICT, narrowedReasons, RUN_CHANGING_VARIABLES, RunVariable, variablesThatChangeRun } from './narrowed';

export const PERTURB_ENV = 'KVQUAL_PERTURB';
/** How many generated workloads test/unit/fuzz.test.ts checks (default: DEFAULT_FUZZ_RUNS). */
export const FUZZ_TEST_RUNS_ENV = 'KVQUAL_FUZZ_TEST_RUNS';

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
  /** `--shard i/n`: run only this share of the scenarios and write its streams, no sign-off. */
  shard: ShardSpec | null;
  /** `--merge DIR…`: the shard folders to build one sign-off from (nothing runs). */
  merge: string[] | null;
  /** `--isolation`: replay every scenario that passed alone, in a process of its own (isolation.ts). */
  isolation: boolean;
  argv: string[];
}

export { DEFAULT_FUZZ_RUNS, DEFAULT_FUZZ_SEED };

const OPTIONS_HELP = '--features DIR, --requirements FILE, --out DIR, --campaign NAME, --baseline FILE, --no-coverage, --fuzz-runs N, --isolation, --shard i/n, --merge DIR…';

/** What `npm run qualify -- --help` prints (the README's qualification section says more). */
export const QUALIFY_USAGE = [
  'usage: npm run qualify -- [options]',
  '  --features DIR       the feature files to run (default features)',
  '  --requirements FILE  the requirement registry (default requirements.yaml)',
  '  --out DIR            where the sign-off set is published (default reports)',
  '  --campaign NAME      the campaign named in the sign-off',
  '  --baseline FILE      an earlier signoff.json to compare with',
  '  --no-coverage        skip the compiled coverage run',
  `  --fuzz-runs N        generated workloads to check (default ${DEFAULT_FUZZ_RUNS}; 0: none)`,
  '  --isolation          also replay every scenario alone, each in a process of its own (order independence)',
  '  --shard i/n          run shard i of n (writes shard.json, no sign-off)',
  '  --merge DIR…         build one sign-off from the shard folders',
  `exit status: 0 QUALIFIED, 1 NOT QUALIFIED, 2 usage or input error, ${NARROWED_EXIT_STATUS} ${NARROWED_VERDICT}`,
  `  (${NARROWED_VERDICT}: every gate passed, but the run was narrowed: another features`,
  '  folder or registry, --no-coverage, fewer --fuzz-runs than the default, a working tree that is not',
  `  its commit, or a variable that changes what runs: ${['GIT_* (but git\'s network ones)', ...Object.keys(RUN_CHANGING_VARIABLES)].join(', ')})`,
].join('\n');

/** Parses `npm run qualify -- …`; throws UsageError naming the problem. */
export function parseQualifyArgs(argv: string[]): QualifyOptions {
  const options: QualifyOptions = {
    features: 'features',
    requirements: 'requirements.yaml',
    out: 'reports',
    campaign: null,
    coverage: true,
    baseline: null,
    fuzzRuns: DEFAULT_FUZZ_RUNS,
    shard: null,
    merge: null,
    isolation: false,
    argv,
  };
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    given.add(arg);
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
    else if (arg === '--isolation') options.isolation = true;
    else if (arg === '--fuzz-runs') {
      const text = value();
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--fuzz-runs ${text}: expected a whole number`);
      options.fuzzRuns = Number(text);
    } else if (arg === '--shard') {
      const spec = parseShardSpec(value());
      if (typeof spec === 'string') throw new UsageError(spec);
      options.shard = spec;
    } else if (arg === '--merge') {
      const dirs: string[] = [];
      while (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) dirs.push(argv[++i]);
      if (dirs.length === 0) throw new UsageError('--merge needs the shard folders to merge (--merge DIR…)');
      options.merge = [...(options.merge ?? []), ...dirs];
    } else throw new UsageError(`unknown option "${arg}" (options: ${OPTIONS_HELP})`);
  }
  if (options.shard !== null && options.merge !== null) throw new UsageError('--shard and --merge cannot be combined: a shard runs its share, the merge runs nothing');
  if (options.merge !== null) {
    const shardOnly = ['--features', '--no-coverage', '--fuzz-runs'].filter((o) => given.has(o));
    if (shardOnly.length > 0) throw new UsageError(`${shardOnly[0]} belongs to the shard runs, not to --merge (it merges what the shards ran)`);
  }
  if (options.isolation && (options.shard !== null || options.merge !== null)) throw new UsageError('--isolation is not made by a shard or a merge: run it on the whole suite, unsharded');
  if (options.shard !== null) {
    const mergeOnly = ['--campaign', '--baseline'].filter((o) => given.has(o));
    if (mergeOnly.length > 0) throw new UsageError(`${mergeOnly[0]} belongs to --merge, not to a --shard run (a shard writes no sign-off)`);
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
  /**
   * Cucumber's HTML and JUnit reports rendered from a message stream (the merge's merged stream);
   * without it the merge leaves cucumber.html and junit.xml saying where the shards' own are.
   */
  cucumberReports?(ndjson: string): Promise<{ html: string; junit: string }>;
  /**
   * Where drawn figures are kept by their spec (the cucumber runs' own cache, which run 1 has just
   * filled with every scenario's figure): the sign-off then draws only what is not there.
   */
  figureCache?: FigureCache;
  /** The temporary folder (TMPDIR) of the compiled coverage run, whose unit tests make scratch folders: the caller removes it, even when stopped. */
  coverageTemp?: string;
  /** git in the checkout (provenance.ts's safe git): the tree a shard records, and the merge's check of its own checkout. */
  git?: Git;
  /** A fresh unguessable nonce for one cucumber run (random; shardTrust.ts). */
  nonce?(): string;
}

let nonceCount = 0;
/** The caller's nonce, or (a caller without one, in tests) a distinct one made from the clock. */
function newNonce(ctx: DriverContext): string {
  return ctx.nonce?.() ?? `run-${ctx.now()}-${++nonceCount}`;
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
  /** With --merge: every shard folder given, read (manifest and streams). */
  shards: ShardInput[];
  /** KVQUAL_FUZZ_PLANT=1: the generated workloads run with the test double's planted defect (src/fuzz/planted.ts). */
  plantedDefect: boolean;
  /** The requirement registry as given, relative to the root, and the SHA-256 of its text. */
  requirements: { file: string; digest: string };
}

/**
 * The .feature files under `dir` as cucumber's glob finds them (following symbolic links), counted;
 * a folder reached twice (a link back to a folder above it, or two links to one folder) is a usage
 * error naming both ways to it, because cucumber would run its scenarios twice and the sign-off
 * would count each of them twice.
 */
function countFeatures(dir: string, given: string): number {
  const seen = new Map<string, string>();
  let count = 0;
  const visit = (folder: string, shown: string): void => {
    const real = fs.realpathSync(folder);
    const before = seen.get(real);
    if (before !== undefined) throw new UsageError(`--features ${given}: the folder ${shown} is ${before} again (through a symbolic link): its scenarios would run twice; remove the link`);
    seen.set(real, shown);
    for (const entry of fs.readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const at = path.join(folder, entry.name);
      const stat = entry.isSymbolicLink() ? statOrNull(at) : null;
      if (entry.isDirectory() || stat?.isDirectory()) visit(at, path.join(shown, entry.name));
      else if (entry.name.endsWith('.feature') && (entry.isFile() || stat?.isFile())) {
        // Cucumber's glob passes over dot-named files and folders: their scenarios would be left out without a word.
        const hidden = path.relative(dir, at).split(path.sep).find((part) => part.startsWith('.'));
        if (hidden !== undefined) throw new UsageError(`--features ${given}: ${path.join(shown, entry.name)} is under ${hidden}, a name starting with "." that cucumber's file patterns pass over: its scenarios would not run; rename it`);
        count++;
      }
    }
  };
  visit(dir, given);
  return count;
}

/** A path's status with its links followed, or null for a dangling link. */
function statOrNull(at: string): fs.Stats | null {
  try {
    return fs.statSync(at);
  } catch {
    return null;
  }
}

/** Checks every argument and input before anything is deleted or run. */
export function prepare(options: QualifyOptions, root: string, env: NodeJS.ProcessEnv = {}): Prepared {
  const featuresDir = path.resolve(options.features);
  // Cucumber is given `<features>/**/*.feature`, a pattern: a folder named with a wildcard would run another folder's scenarios, or none.
  const wildcard = /[*?[\]{}()!]/.exec(options.features);
  if (options.merge === null && wildcard) throw new UsageError(`--features ${options.features}: "${wildcard[0]}" is a wildcard in cucumber's file patterns, which would run the scenarios of other folders or none: rename the folder`);
  if (options.merge === null) {
    if (!fs.existsSync(featuresDir) || !fs.statSync(featuresDir).isDirectory()) throw new UsageError(`--features ${options.features}: no such folder`);
    if (countFeatures(featuresDir, options.features) === 0) throw new UsageError(`--features ${options.features}: no .feature file in it`);
  }
  const requirementsFile = path.resolve(options.requirements);
  if (!fs.existsSync(requirementsFile) || !fs.statSync(requirementsFile).isFile()) throw new UsageError(`--requirements ${options.requirements}: no such file`);
  let registry: Registry;
  const registryText = fs.readFileSync(requirementsFile, 'utf8');
  try {
    registry = parseRegistry(registryText, options.requirements);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\n\s*/g, ' '));
  }
  const leaving = linksOutOfCheckout(root, options.merge === null ? options.features : null, requirementsFile);
  if (leaving.length > 0) throw new UsageError(`what ran would not be what the commit holds: ${leaving.join('; ')}; refused`);
  let baseline: SignoffJson | null = null;
  if (options.baseline !== null) {
    const file = path.resolve(options.baseline);
    if (!fs.existsSync(file)) throw new UsageError(`--baseline ${options.baseline}: no such file`);
    if (!fs.statSync(file).isFile()) throw new UsageError(`--baseline ${options.baseline}: not a file (give an earlier signoff.json)`);
    try {
      baseline = parseSignoffJson(fs.readFileSync(file, 'utf8'), `--baseline ${options.baseline}`);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const out = path.resolve(options.out);
  if (fs.existsSync(out) && !fs.statSync(out).isDirectory()) throw new UsageError(`--out ${options.out}: exists and is not a folder`);
  const shards = (options.merge ?? []).map((dir) => readShardFolder(dir));
  // Compared as real paths: an --out reached through a symbolic link is still the shard's folder.
  const realOut = realPathOrSelf(out);
  for (const shard of shards) {
    if (realPathOrSelf(path.resolve(shard.dir)) === realOut) throw new UsageError(`--out ${options.out}: is one of the shard folders given to --merge; give the merged sign-off a folder of its own`);
  }
  checkOutFolder(out, options.out, root);
  const seedText = env.KVQUAL_SEED;
  const fuzzSeed = seedText === undefined || seedText === '' ? DEFAULT_FUZZ_SEED : Number(seedText);
  if (!/^-?\d+$/.test(seedText ?? '0') || !Number.isSafeInteger(fuzzSeed)) throw new UsageError(`KVQUAL_SEED="${seedText}" is not a whole-number seed`);
  let plantedDefect: boolean;
  try {
    plantedDefect = plantedDefectAsked(env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  makeFolder(out, options.out);
  const requirements = { file: fromRoot(root, requirementsFile), digest: `sha256:${createHash('sha256').update(registryText).digest('hex')}` };
  return { options, out, features: fromRoot(root, featuresDir), registry, baseline, fuzzSeed, shards, plantedDefect, requirements };
}

/**
 * The symbolic links that lead out of the checkout (or out of a features folder given outside it)
 * among what a run loads: the features folder, the registry and the repository's loaded paths.
 */
function linksOutOfCheckout(root: string, features: string | null, requirementsFile: string): string[] {
  const paths = [...(features === null ? [] : [path.resolve(features)]), ...LOADED_PATHS.filter((p) => p !== 'requirements.yaml').map((p) => path.join(root, p)), requirementsFile];
  return [...new Set(paths.flatMap((p) => linksLeaving(root, p)))];
}

/** Which suite a sign-off qualifies: the features folder and registry, and whether both are the repository's own. */
function suiteScope(prepared: Prepared, features: string): SuiteScope {
  const { file, digest } = prepared.requirements;
  return { features, requirements: file, requirements_digest: digest, repository_suite: features === 'features' && file === 'requirements.yaml' };
}

/**
 * Environment variables that change what a qualification runs, as set (narrowed.ts lists them); a
 * merge names the variables its shards recorded, and its own that change what it reads or renders.
 */
export function environmentOf(env: NodeJS.ProcessEnv, merge: boolean): RunVariable[] {
  const all = variablesThatChangeRun(env);
  return merge ? all.filter((v) => MERGE_VARIABLES.test(v.name)) : all;
}
/** The variables that change what a merge itself does (it runs no scenario): git's, Node's options, the figure cache. */
const MERGE_VARIABLES = /^(GIT_|NODE_OPTIONS$|KVQUAL_FIGURE_CACHE$)/;

/** A path with its symbolic links followed, or the path itself when it does not exist (yet). */
function realPathOrSelf(absolute: string): string {
  try {
    return fs.realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/** Reads a shard folder for --merge: its manifest must be readable and valid (else a usage error); a missing stream is a gap the merge names. */
function readShardFolder(dir: string): ShardInput {
  const where = path.resolve(dir);
  if (!fs.existsSync(where) || !fs.statSync(where).isDirectory()) throw new UsageError(`--merge ${dir}: no such folder`);
  const file = path.join(where, SHARD_MANIFEST);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`--merge ${dir}: no readable ${SHARD_MANIFEST} (not the --out folder of a \`npm run qualify -- --shard i/n\` run)`);
  }
  let manifest: ShardManifest;
  try {
    manifest = parseShardManifest(text, `--merge ${dir}: ${SHARD_MANIFEST}`);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const stream = (name: string) => {
    try {
      return fs.readFileSync(path.join(where, name), 'utf8');
    } catch {
      return null;
    }
  };
  return { dir, manifest, first: stream('messages.ndjson'), second: stream(RERUN_MESSAGES) };
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
      // Another process (a shard beside this one) may have made it meanwhile.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && fs.statSync(dir).isDirectory()) continue;
      throw new UsageError(`--out ${given}: cannot make the folder ${dir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
}

/**
 * Refuses an --out folder that qualify did not make: one that holds files qualify does not write
 * (publishing replaces what it writes there). The repository's reports/ is its own.
 */
function checkOutFolder(out: string, given: string, root: string): void {
  if (!fs.existsSync(out)) return;
  try {
    fs.accessSync(out, fs.constants.W_OK);
  } catch (error) {
    throw new UsageError(`--out ${given}: cannot write in it (${(error as NodeJS.ErrnoException).code ?? 'not writable'}); give a folder qualify may write`);
  }
  if (out === path.join(root, 'reports')) return;
  const own = new Set<string>([...SET_NAMES, ...SHARD_SET_NAMES, RUNS_DIR, CURRENT_LINK]);
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

/**
 * The niceness given to work beside the longest phase (the unit tests under c8): with more work
 * than cores, the longest phase keeps a core and the rest share what is left, so that both cores
 * stay busy to the end instead of the longest phase running alone at the end.
 */
const BESIDE_NICENESS = 10;

/**
 * Runs a tool; quiet ones have their output collected, the others print to the console as they run.
 * `beside`: work that runs beside the longest phase, at a lower priority (BESIDE_NICENESS).
 */
/** The tools a qualify run has started and not yet seen end (cucumber, c8, tsc). */
const runningChildren = new Set<ChildProcess>();

/**
 * Stops every tool the run started (the process entry point calls it when qualify is stopped by a
 * signal): without it, the suite runs went on, orphaned, writing into an abandoned run folder.
 */
export function stopChildren(signal: NodeJS.Signals): number {
  for (const child of runningChildren) child.kill(signal);
  return runningChildren.size;
}

function spawn(ctx: DriverContext, command: string, args: string[], env: NodeJS.ProcessEnv, quiet: boolean, beside = false): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    // Output is always collected (cucumber's summary line is one of the channels compared, channels.ts; a run that stops early is explained by its last words); a tool that is not quiet is printed as it runs.
    const child = spawnChild(command, args, { cwd: ctx.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    runningChildren.add(child);
    child.on('exit', () => runningChildren.delete(child));
    if (beside && child.pid !== undefined) lowerPriority(child.pid);
    let output = '';
    const collect = (chunk: string) => {
      output += chunk;
      if (!quiet) ctx.write(chunk);
    };
    child.stdout?.setEncoding('utf8').on('data', collect);
    child.stderr?.setEncoding('utf8').on('data', collect);
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

/** Scheduling only (never what a run computes); where the system refuses, the process keeps its priority. */
function lowerPriority(pid: number): void {
  try {
    os.setPriority(pid, BESIDE_NICENESS);
  } catch {
    // e.g. a process that has already ended
  }
}

function tool(ctx: DriverContext, name: string): string {
  return path.join(ctx.root, 'node_modules', '.bin', name);
}

/** A run whose stream did not finish, with cucumber's own account of what stopped it added to its problems. */
function withLastWords(read: { run: RunModel | null; problem: string | null }, output: string): { run: RunModel | null; problem: string | null } {
  const words = read.run !== null && !read.run.finished ? runLastWords(output) : null;
  if (words !== null) read.run!.runErrors.push(words);
  return read;
}

/** A file's text, or null when it cannot be read. */
function textOrNull(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Where each cucumber run's exit status, printed summary and (run 1) junit.xml disagree with its
 * message stream (channels.ts), in words.
 */
function runChannelProblems(
  runDir: string,
  nonces: { first: string; second: string },
  first: Spawned,
  second: Spawned | undefined,
  firstRun: RunModel | null,
  secondRun: RunModel | null,
): string[] {
  const firstText = textOrNull(path.join(runDir, 'messages.ndjson'));
  const secondText = textOrNull(path.join(runDir, RERUN_MESSAGES));
  return [
    ...channelDisagreements({ label: 'run 1 of 2', exitStatus: first.status, output: first.output, junit: textOrNull(path.join(runDir, 'junit.xml')), stream: firstText }, firstRun),
    ...(second === undefined ? [] : channelDisagreements({ label: 'run 2 of 2', exitStatus: second.status, output: second.output, stream: secondText }, secondRun)),
    ...ownStreamProblems({ first: firstText, second: secondText }, nonces),
  ];
}

function readRun(file: string): { run: RunModel | null; problem: string | null } {
  if (!fs.existsSync(file)) return { run: null, problem: `cucumber wrote no message stream (${path.basename(file)})` };
  return { run: parseRun(fs.readFileSync(file, 'utf8')), problem: null };
}

/** The names a reader opens in the output folder; each is one file (or folder) of the run's set. */
export const SET_NAMES = ['signoff.md', 'signoff.html', 'signoff.json', ASSETS_DIR, 'cucumber.html', 'junit.xml', 'messages.ndjson', RERUN_MESSAGES];
/** What a shard run publishes: its manifest and cucumber's reports of its share (no sign-off). */
export const SHARD_SET_NAMES = [SHARD_MANIFEST, 'cucumber.html', 'junit.xml', 'messages.ndjson', RERUN_MESSAGES];

interface Measured {
  summary: CoverageSummary | null;
  run: CoverageRun;
  note: string;
}

const BUILD = 'build';
const RAW_COVERAGE = path.join(BUILD, '.v8-coverage');

function emptyCoverageRun(): CoverageRun {
  return { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], skipped: [], problems: [] };
}

/**
 * Generated workloads the compiled unit run's fuzz test checks. The sign-off's own phase checks the
 * full campaign (DEFAULT_FUZZ_RUNS cases, the same generator and seed as that test); here they count
 * toward coverage, which a tenth of them measures as well at a fraction of the time under c8.
 */
export const COVERAGE_FUZZ_TEST_RUNS = 100;

/** The environment of the compiled runs: coverage collected, the command line from build/, no test double. */
function coverageEnv(ctx: DriverContext, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
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
const NO_JAVASCRIPT = 'the compiler produced no JavaScript';

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
async function compileBuild(ctx: DriverContext, run: CoverageRun): Promise<boolean> {
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
async function typeCheck(ctx: DriverContext, env: NodeJS.ProcessEnv, run: CoverageRun): Promise<void> {
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
function compiledScenarioFailures(suite: { run: RunModel | null; problem: string | null }, run: CoverageRun, share: Set<string> | null): void {
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
async function coverageReport(ctx: DriverContext, env: NodeJS.ProcessEnv, run: CoverageRun, features: string, unitFolder: string): Promise<Measured> {
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
async function measureCoverage(ctx: DriverContext, features: string, env: NodeJS.ProcessEnv): Promise<Measured> {
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

function countOf(n: number, one: string): string {
  return `${n} ${n === 1 ? one : `${one}s`}`;
}

function c8Version(root: string): string {
  return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'c8', 'package.json'), 'utf8')) as { version: string }).version;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Prints each phase as it starts and its time when it ends ("[2/5] done in 3.1 s"). */
function phaseRunner(ctx: DriverContext, phases: string[]): <T>(fn: () => T | Promise<T>) => Promise<T> {
  let index = 0;
  return async <T>(fn: () => T | Promise<T>): Promise<T> => {
    const title = phases[index++];
    ctx.write(`\n── [${index}/${phases.length}] ${title} ──\n`);
    const t0 = ctx.now();
    const value = await fn();
    ctx.write(`   [${index}/${phases.length}] done in ${seconds(ctx.now() - t0)}\n`);
    return value;
  };
}

/**
 * Phases that may overlap: each is printed with its own number when it starts and with its time
 * when it ends, whatever else runs meanwhile.
 */
function numberedPhases(ctx: DriverContext, phases: string[]): <T>(index: number, fn: () => T | Promise<T>) => Promise<T> {
  return async <T>(index: number, fn: () => T | Promise<T>): Promise<T> => {
    ctx.write(`\n── [${index + 1}/${phases.length}] ${phases[index]} ──\n`);
    const t0 = ctx.now();
    const value = await fn();
    ctx.write(`   [${index + 1}/${phases.length}] done in ${seconds(ctx.now() - t0)}\n`);
    return value;
  };
}

/**
 * The command line that made the run, the test doubles set in its environment included (a merge's
 * own command sets none: its shards ran them).
 */
export function commandOf(options: QualifyOptions, doubles: { perturbation: string | null; planted: boolean }, variables: { name: string; value: string }[] = []): string {
  const set = variables.map((v) => `${v.name}=${shellWord(v.value)} `).join('');
  const environment = `${set}${doubles.perturbation === null ? '' : `${PERTURB_ENV}=${shellWord(doubles.perturbation)} `}${plantedCommandPrefix(doubles.planted)}`;
  // Each argument as a shell reads it back: a folder with a space, a quote or a $ in its name stays one word, unexpanded.
  return environment + ['npm run qualify', ...(options.argv.length ? ['--', ...options.argv.map(shellWord)] : [])].join(' ');
}

/**
 * The order of the second run: shuffled, seeded by the generated workloads' seed (KVQUAL_SEED), so
 * a scenario that passes or gives its digest only after the scenarios before it in file order (a
 * module's state left over, a cache filled by another) differs between the runs, as its one-line
 * replay command, which runs it alone, would. Cucumber shuffles after it has cut a shard's share.
 */
export function secondRunOrder(seed: number): string {
  return `random:${seed}`;
}

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

function reportVerdict(ctx: DriverContext, model: SignoffModel, measured: Measured | null): void {
  ctx.write(`\n── verdict: ${model.verdict} ──\n`);
  for (const gate of model.gates) ctx.write(`${gate.passed ? 'pass' : 'FAIL'}  ${gate.title}: ${gate.summary}\n`);
  if (model.verdict === NARROWED_VERDICT) for (const reason of model.narrowed) ctx.write(`not a release sign-off: ${reason}\n`);
  if (measured !== null && measured.run.failures.length > 0) {
    ctx.write('\nFailed in the compiled coverage run:\n');
    for (const failure of measured.run.failures) ctx.write(`  ✗ ${failure.kind} "${failure.name}" (${failure.where})${failure.why ? `: ${failure.why}` : ''}\n`);
  }
}

/**
 * Writes a shard's manifest into its run folder and publishes the shard's set. It prints what its
 * share did, as a preview only: the verdict belongs to the merge of all n shards.
 */
function publishShard(
  prepared: Prepared,
  ctx: DriverContext,
  runDir: string,
  made: {
    shard: ShardSpec;
    perturbation: string | null;
    generated: CampaignResult | null;
    measured: Measured | null;
    faults: FaultCheck | null;
    channels: (first: RunModel | null, second: RunModel | null) => string[];
    nonces: { first: string; second: string };
  },
): void {
  const { shard } = made;
  const firstFile = path.join(runDir, 'messages.ndjson');
  const firstText = fs.existsSync(firstFile) ? fs.readFileSync(firstFile, 'utf8') : '';
  const secondText = textOrNull(path.join(runDir, RERUN_MESSAGES));
  const identity = suiteIdentity(firstText);
  const first = readRun(firstFile);
  const second = readRun(path.join(runDir, RERUN_MESSAGES));
  const manifest: ShardManifest = {
    format: SHARD_FORMAT,
    shard,
    suite: { digest: identity.digest, scenarios: identity.pickles.length, features: prepared.features },
    subject: ctx.subject(),
    settings: { fuzzRuns: prepared.options.fuzzRuns, fuzzSeed: prepared.fuzzSeed, coverage: prepared.options.coverage },
    perturbation: made.perturbation,
    command: commandOf(prepared.options, { perturbation: made.perturbation, planted: prepared.plantedDefect }),
    generated: made.generated,
    coverage: made.measured === null ? null : { summary: made.measured.summary, run: made.measured.run, note: made.measured.note },
    faults: made.faults,
    trust: {
      tree: ctx.git?.(['rev-parse', 'HEAD^{tree}']) ?? null,
      requirements: prepared.requirements,
      options: sharedOptions(prepared.options.argv),
      environment: environmentOf(ctx.env, false),
      channels: made.channels(first.run, second.run),
      streams: {
        first: fs.existsSync(firstFile) ? { sha256: sha256Of(firstText), nonce: made.nonces.first } : null,
        second: secondText === null ? null : { sha256: sha256Of(secondText), nonce: made.nonces.second },
      },
    },
  };
  const key = ctx.env[SIGNING_KEY_ENV];
  if (key !== undefined && key !== '') manifest.signature = signatureOf(manifest, key);
  fs.writeFileSync(path.join(runDir, SHARD_MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
  publishRun(prepared.out, runDir, SHARD_SET_NAMES, SET_NAMES);
  const ran = new Set(identity.ran);
  const mine = (first.run?.scenarios ?? []).filter((s) => ran.has(s.key));
  const passed = mine.filter((s) => s.status === 'PASSED').length;
  const determinism = first.run === null ? null : compareRuns({ ...first.run, scenarios: mine }, second.run === null ? null : { ...second.run, scenarios: second.run.scenarios.filter((s) => ran.has(s.key)) }, second.problem);
  ctx.write(
    `   its share: ${passed} of ${countOf(mine.length, 'scenario')} passed (of ${identity.pickles.length} in the suite); ` +
      `${determinism === null ? 'no first run to compare' : determinism.identical ? 'both runs identical' : `determinism: ${determinism.problem ?? `${countOf(determinism.differences.length, 'scenario')} differed`}`}\n` +
      `   not a verdict: merge all ${shard.count} shards with npm run qualify -- --merge <their --out folders>\n`,
  );
}

interface SignoffParts {
  first: { run: RunModel | null; problem: string | null };
  second: { run: RunModel | null; problem: string | null };
  perturbation: string | null;
  generated: CampaignResult | null;
  measured: Measured | null;
  /** Gaps of a merge (missing, repeated or foreign shards); empty otherwise. */
  shardProblems: string[];
  /** The coverage note when the coverage run was not made here (a merge). */
  coverageNote?: string;
  /** The figures of the first run's scenarios, when already rendered (while other phases ran). */
  figures?: Map<string, string>;
  /** What was qualified, when not this checkout (a merge: the commit, tree and versions the shards ran). */
  subject?: Subject;
  /** The features folder the shards ran (a merge), when not this run's --features. */
  features?: string;
  /** The planted-fault check (faults.ts; a merge's: its shards' merged). */
  faults?: FaultCheck | null;
  /** The order-independence proof (isolation.ts); null when it was not asked for (--isolation). */
  isolation?: IsolationCheck | null;
  /** The options the shards ran with (a merge), when not this run's. */
  settings?: { coverage: boolean; fuzzRuns: number };
  /** The variables the shards recorded (a merge). */
  environment?: RunVariable[];
  /** Gates decided outside the model (channels.ts). */
  checks?: Gate[];
  /** Reasons the run is narrowed besides those of its options, tree and variables (a merge's own checkout). */
  narrowed?: string[];
}

/** One scenario replayed alone: a quiet cucumber process of its own (its replay command), its stream written to a folder of its own and read back. */
function aloneRun(ctx: DriverContext, env: NodeJS.ProcessEnv, beside: boolean): AloneRun {
  return async ({ uri, line }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-alone-'));
    try {
      const messages = path.join(dir, 'messages.ndjson');
      await spawn(ctx, tool(ctx, 'cucumber-js'), ['--profile', 'replay', `${uri}:${line}`, '--format', `message:${messages}`], env, true, beside);
      return readRun(messages);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

/**
 * The planted-fault check (faults.ts) of what passed in run 1's stream, in one process of its own
 * (scripts/fault-check.ts: the steps loaded once, one cucumber run per fault); what kept it from
 * completing is a problem of the check.
 */
async function runFaultCheck(ctx: DriverContext, env: NodeJS.ProcessEnv, firstMessages: string, beside: boolean): Promise<FaultCheck> {
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

/** Two lists of variables as one, each name=value once, in name order. */
function mergeVariables(a: readonly RunVariable[], b: readonly RunVariable[]): RunVariable[] {
  const byKey = new Map([...a, ...b].map((v) => [`${v.name}=${v.value}`, v]));
  return [...byKey.values()].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** Each scenario's figure (SVG) by its key, from its evidence. */
async function renderFigures(run: RunModel, cache: FigureCache | undefined): Promise<Map<string, string>> {
  const figures = new Map<string, string>();
  const anchors = anchorsOf(run.scenarios);
  for (const scenario of run.scenarios) {
    if (!scenario.evidence) continue;
    const svg = await renderFigure(scenario.evidence, anchors.get(scenario.key)!, cache);
    if (svg !== null) figures.set(scenario.key, svg);
  }
  return figures;
}

/** Builds the sign-off from the run folder's streams, writes it there and publishes the set. */
async function publishSignoff(prepared: Prepared, ctx: DriverContext, runDir: string, parts: SignoffParts): Promise<SignoffModel> {
  const { options, registry } = prepared;
  const { first, second, measured } = parts;
  const runModel: RunModel = first.run ?? { scenarios: [], sources: [], cucumberVersion: null, phrases: [], runErrors: [first.problem!], finished: false };
  const determinism = compareRuns(runModel, second.run, second.problem);
  const figures = parts.figures ?? (await renderFigures(runModel, ctx.figureCache));
  const subject = parts.subject ?? ctx.subject();
  const environment = mergeVariables(parts.environment ?? [], environmentOf(ctx.env, options.merge !== null));
  const scope = suiteScope(prepared, parts.features ?? prepared.features);
  const settings = parts.settings ?? { coverage: options.coverage, fuzzRuns: options.fuzzRuns };
  const narrowed = [...narrowedReasons({ features: scope.features, requirements: scope.requirements, ...settings, worktree: subject.worktree, variables: environment }), ...(parts.narrowed ?? [])];
  const built = buildSignoff({
    campaign: options.campaign ?? `${subject.packageName} ${subject.packageVersion} release qualification`,
    date: ctx.date(),
    subject,
    command: commandOf(options, options.merge === null ? { perturbation: parts.perturbation, planted: prepared.plantedDefect } : { perturbation: null, planted: false }, environment),
    scope,
    environment,
    narrowed,
    run: runModel,
    determinism,
    registry,
    coverage: measured?.summary ?? null,
    coverageNote: parts.coverageNote ?? (measured === null ? 'not requested (--no-coverage)' : measured.note),
    coverageRun: measured?.run ?? null,
    perturbation: parts.perturbation,
    figures,
    companions: [
      { label: "cucumber's HTML report", file: 'cucumber.html' },
      { label: 'JUnit XML', file: 'junit.xml' },
      { label: 'message stream', file: 'messages.ndjson' },
      { label: 'message stream of the second run', file: RERUN_MESSAGES },
    ],
    baseline: prepared.baseline,
    generated: parts.generated,
    glossary: fs.existsSync(path.join(ctx.root, 'docs', 'glossary.md')) ? parseGlossary(fs.readFileSync(path.join(ctx.root, 'docs', 'glossary.md'), 'utf8')) : [],
    shardProblems: parts.shardProblems,
    faults: parts.faults,
    isolation: parts.isolation,
    checks: parts.checks,
  });
  // Everything is written into the unpublished run folder, then published in one rename.
  fs.mkdirSync(path.join(runDir, ASSETS_DIR), { recursive: true });
  for (const view of built.views) if (view.figure !== null) fs.writeFileSync(path.join(runDir, ASSETS_DIR, view.figureFile!), view.figure);
  fs.writeFileSync(path.join(runDir, ASSETS_DIR, SUMMARY_CHART), summaryChart(built.matrix));
  fs.writeFileSync(path.join(runDir, 'signoff.md'), renderMarkdown(built));
  fs.writeFileSync(path.join(runDir, 'signoff.html'), renderHtml(built));
  fs.writeFileSync(path.join(runDir, 'signoff.json'), `${JSON.stringify(toSignoffJson(built), null, 1)}\n`);
  publishRun(prepared.out, runDir, SET_NAMES, SHARD_SET_NAMES);
  return built;
}

/**
 * `--merge DIR…`: checks the shards (each of 1..n once, one suite, one commit, one set of
 * options, each having run exactly its share), merges each run's streams into the stream an
 * unsharded run writes, renders cucumber's reports from the merged stream and builds the one
 * sign-off with the same gates. Every gap of the set fails a *Shards* gate that names it.
 */
/**
 * What shard 1's manifest says its coverage run did, checked against the suite: a run with no
 * coverage summary measured nothing, and a run over fewer or more scenarios than the suite has
 * was not the whole suite's (a manifest is not signed: these are its claims, read back).
 */
export function coverageClaimProblems(coverage: NonNullable<ShardManifest['coverage']>, suiteScenarios: number, shardCount: number): string[] {
  const problems: string[] = [];
  if (coverage.summary === null && coverage.run.problems.length === 0) problems.push(`shard 1 of ${shardCount} records a coverage run without a coverage summary: nothing was measured`);
  if (coverage.run.scenarios !== suiteScenarios) problems.push(`shard 1 of ${shardCount} records a coverage run of ${countOf(coverage.run.scenarios, 'scenario')}, where the suite has ${suiteScenarios}`);
  return problems;
}

/**
 * The subject of a merge: the shards' commit and versions, with the working tree they all had (as
 * an unsharded run says it), or, when the shards' trees were not alike, every shard whose tree
 * differed from that commit, named.
 */
export function mergedSubject(manifests: readonly ShardManifest[]): Subject {
  const subject = manifests[0].subject;
  if (manifests.every((m) => m.subject.worktree === subject.worktree)) return subject;
  const differing = manifests.filter((m) => m.subject.worktree !== 'clean working tree');
  const which = differing.map((m) => `shard ${m.shard.index} (${m.subject.worktree})`).join(', ');
  return { ...subject, worktree: `working tree differed from the commit in ${which}` };
}

/** The merge's own checkout: its commit and tree, whether it is clean, and whether the registry it reads is the commit's blob. */
function mergeCheckout(ctx: DriverContext, prepared: Prepared): Parameters<typeof checkoutProblems>[0] {
  const here = ctx.subject();
  const file = prepared.requirements.file;
  const committed = file.startsWith('..') ? null : ctx.git?.(['rev-parse', `HEAD:${file}`]) ?? null;
  const onDisk = blobId(fs.readFileSync(path.join(ctx.root, file)));
  return { commit: here.commit, worktree: here.worktree, tree: ctx.git?.(['rev-parse', 'HEAD^{tree}']) ?? null, registry: file, registryCommitted: committed === null ? null : committed === onDisk };
}

async function mergeShards(prepared: Prepared, ctx: DriverContext): Promise<{ status: number; model: SignoffModel }> {
  const { options, out } = prepared;
  const started = ctx.now();
  const check = checkShards(prepared.shards);
  const n = check.reference.shard.count;
  // Every shard verified (signature, stream digests and nonces, no copied run, one registry and set of options); one that cannot be trusted is left out.
  const key = ctx.env[SIGNING_KEY_ENV];
  const verified = verifyShards(check.used, { key: key === undefined || key === '' ? undefined : key, requirementsDigest: prepared.requirements.digest });
  check.problems.push(...verified.problems);
  check.used = check.used.filter((s) => !verified.refused.has(s));
  // The sign-off names what the shards ran; the merge reads this checkout's requirements and glossary, so it must be the same clean commit.
  const checkout = mergeCheckout(ctx, prepared);
  check.problems.push(...checkoutProblems(checkout, { commit: check.reference.subject.commit, tree: check.reference.trust?.tree ?? null }));
  const phase = phaseRunner(ctx, [
    `merge: ${countOf(prepared.shards.length, 'shard folder')} given for ${countOf(n, 'shard')}; the message streams of both runs merged, cucumber's reports rendered from them`,
    'sign-off: signoff.md, signoff.html and signoff.json, published with the merged reports as one set',
  ]);
  const removed = removeStale(out);
  if (removed.length > 0) ctx.write(`removed what earlier runs left unfinished: ${removed.join(', ')}\n`);
  const runDir = newRunDir(out, `run-${ctx.now()}-${ownerTag()}`);
  await phase(async () => {
    for (const problem of check.problems) ctx.write(`   ✗ ${problem}\n`);
    const merged = (which: 'first' | 'second') =>
      mergeStreams(check.used.filter((s) => s[which] !== null).map((s) => ({ shard: s.manifest.shard.index, text: s[which]! })));
    const firstText = merged('first');
    fs.writeFileSync(path.join(runDir, 'messages.ndjson'), firstText);
    fs.writeFileSync(path.join(runDir, RERUN_MESSAGES), merged('second'));
    if (ctx.cucumberReports) {
      const reports = await ctx.cucumberReports(firstText);
      fs.writeFileSync(path.join(runDir, 'cucumber.html'), reports.html);
      fs.writeFileSync(path.join(runDir, 'junit.xml'), reports.junit);
    } else {
      const note = `the reports of each shard are in its own folder: ${check.used.map((s) => s.dir).join(', ')}\n`;
      fs.writeFileSync(path.join(runDir, 'cucumber.html'), `<!doctype html><title>merged shards</title><p>${note.replace(/[<&]/g, '')}</p>\n`);
      fs.writeFileSync(path.join(runDir, 'junit.xml'), `<?xml version="1.0" encoding="UTF-8"?>\n<!-- ${note.replace(/--/g, '- -').trim()} -->\n<testsuites/>\n`);
    }
  });
  const shardOne = check.used.find((s) => s.manifest.shard.index === 1)?.manifest ?? null;
  const settings = check.reference.settings;
  const coverage = shardOne?.coverage ?? null;
  const noCoverage = shardOne === null ? `shard 1 of ${n}, which makes the coverage run, is missing` : `shard 1 of ${n} records no coverage run although the shards ran with it`;
  const measured: Measured | null = settings.coverage
    ? coverage !== null
      ? { summary: coverage.summary, run: { ...coverage.run, problems: [...coverage.run.problems, ...coverageClaimProblems(coverage, check.reference.suite.scenarios, n)] }, note: coverage.note }
      : { summary: null, run: { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], problems: [noCoverage] }, note: noCoverage }
    : null;
  const perturbations = [...new Set(check.used.map((s) => s.manifest.perturbation).filter((p): p is string => p !== null))];
  // Every shard refused: the sign-off still names what the set claimed to run.
  const subject = mergedSubject(check.used.length > 0 ? check.used.map((s) => s.manifest) : [check.reference]);
  const model = await phase(() =>
    publishSignoff(prepared, ctx, runDir, {
      first: readRun(path.join(runDir, 'messages.ndjson')),
      second: readRun(path.join(runDir, RERUN_MESSAGES)),
      perturbation: perturbations.length > 0 ? perturbations.join('|') : null,
      generated: settings.fuzzRuns > 0 ? shardOne?.generated ?? null : null,
      measured,
      shardProblems: check.problems,
      subject,
      features: check.reference.suite.features,
      faults: mergeFaultChecks(check.used.map((s) => ({ index: s.manifest.shard.index, count: s.manifest.shard.count, faults: s.manifest.faults }))),
      isolation: null,
      settings: { coverage: settings.coverage, fuzzRuns: settings.fuzzRuns },
      environment: check.used.flatMap((s) => s.manifest.trust?.environment ?? []),
      checks: [channelsGate(check.used.flatMap((s) => (s.manifest.trust?.channels ?? []).map((p) => `shard ${s.manifest.shard.index} of ${n}, ${p}`)))],
      // The merge's own tree when the shards' were clean (a tree the shards share is named once, by the subject).
      narrowed: subject.worktree === 'clean working tree' ? mergeNarrowed(checkout) : [],
    }),
  );
  reportVerdict(ctx, model, measured);
  ctx.write(`\nsign-off: ${path.join(options.out, 'signoff.md')} and ${path.join(options.out, 'signoff.html')} (${seconds(ctx.now() - started)} in all)\n`);
  return { status: exitStatusOf(model), model };
}
