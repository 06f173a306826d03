// The checks before a qualification runs: the features folder, the registry, the baseline, the
// --out folder and the shard folders of a merge are read and checked, and every problem is a
// UsageError naming it, before anything is deleted or run (prepare).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ASSETS_DIR } from './markdown';
import { DEFAULT_FUZZ_SEED, RERUN_MESSAGES } from './model';
import { plantedDefectAsked } from '../fuzz/planted';
import { parseRegistry, Registry } from './requirements';
import { parseSignoffJson, SignoffJson } from './jsonSchema';
import { CURRENT_LINK, RUNS_DIR } from './write';
import { parseShardManifest, SHARD_MANIFEST, ShardInput, ShardManifest } from './shards';
import { LOADED_PATHS, linksLeaving } from './provenance';
import { SET_NAMES, SHARD_SET_NAMES } from './outputSet';
import { fromRoot } from './context';
import { UsageError } from './options';
import type { QualifyOptions } from './options';

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
