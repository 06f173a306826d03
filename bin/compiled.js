// The compiled command line: src/ compiled to JavaScript bundles in build/cli/ (by esbuild; `npm ci` runs it
// through the `prepare` script, `npm run build` by hand), and whether that build is current, so that
// bin/kvqual.js runs it instead of loading the TypeScript through tsx (the same code, a faster start).
// A build is current when the digest of its inputs it recorded (build/cli/manifest.json) is the
// digest of the inputs now: every file under src/ (names and contents), tsconfig.json (esbuild reads
// it) and this file (how it compiles). A changed, added or removed source makes it stale, and a stale
// build never runs: kvqual falls back to tsx. To spare hashing every source at every start, the
// manifest also keeps each input's size, inode and modification and change times (to the
// nanosecond) as they were before it compiled: when every input still has them, none was written
// since (writing a file, or setting its times, sets its change time to now, which nothing but the
// system clock can set back), and the build is current without reading a source; otherwise the
// contents decide (a file touched but unchanged keeps the build current).
//
//   node bin/compiled.js [--if-possible]
// compiles, exit 1 when it cannot; --if-possible (npm's `prepare`, so that `npm ci` never fails on
// it): without esbuild, or when it cannot compile, says so and exits 0 (kvqual then runs through tsx).
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
/** Where the build goes, under the repository (build/ is ignored by git). */
const BUILD_FOLDER = path.join('build', 'cli');
const MANIFEST = 'manifest.json';
/** The manifest's format: a build with another one is stale (1: a file per source; 2: bundles). */
const FORMAT = 2;
/**
 * The bundles the build holds, each a source of src/cli/ with everything it imports from src/ and
 * from the packages in BUNDLED_PACKAGES, in one file: a start reads and compiles one file where it
 * read about 270 (zod and yaml alone are about 170). The command line is main.js; sweepWorker.js is
 * the process a sweep forks for its points (src/cli/sweepPool.ts finds it beside the module that forks it).
 */
const BUNDLES = ['main', 'sweepWorker'];
/**
 * The packages compiled into the bundles: what every command loads. Every other package stays a
 * require of node_modules: those loaded only for some work (vega for a figure, cli-progress on a
 * terminal, tsx for `kvqual qualify`) and the development tools.
 */
const BUNDLED_PACKAGES = ['commander', 'fastest-levenshtein', 'lossless-json', 'saxes', 'seedrandom', 'yaml', 'zod'];
/** What the compiled JavaScript depends on besides src/ (relative to the repository). */
const OTHER_INPUTS = ['tsconfig.json', path.join('bin', 'compiled.js')];

/** Every file under `folder` (relative to `root`), in name order; none when it does not exist. */
function filesUnder(root, folder) {
  let entries;
  try {
    entries = fs.readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true });
  } catch (error) {
    if (error && error.code === 'ENOENT') return [];
    throw error;
  }
  const files = entries.filter((entry) => !entry.isDirectory()).map((entry) => path.relative(root, path.join(entry.parentPath ?? entry.path, entry.name)));
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The digest of what the build is made from: each input's name and contents, in name order (an
 * input that does not exist counts as absent, which differs from empty).
 */
function inputsDigest(root) {
  const hash = crypto.createHash('sha256');
  for (const file of [...filesUnder(root, 'src'), ...OTHER_INPUTS]) {
    let contents;
    try {
      contents = fs.readFileSync(path.join(root, file));
    } catch (error) {
      if (error && error.code === 'ENOENT') {
        hash.update(`${file}\0absent\0`);
        continue;
      }
      throw error;
    }
    hash.update(`${file}\0${contents.length}\0`);
    hash.update(contents);
  }
  return `sha256:${hash.digest('hex')}`;
}

/** Each input's size, inode, modification and change times (ns), as one text per file, in name order. */
function inputStats(root) {
  const stats = {};
  for (const file of [...filesUnder(root, 'src'), ...OTHER_INPUTS]) {
    let stat;
    try {
      stat = fs.statSync(path.join(root, file), { bigint: true });
    } catch (error) {
      if (error && error.code === 'ENOENT') {
        stats[file] = 'absent';
        continue;
      }
      throw error;
    }
    stats[file] = `${stat.size} ${stat.ino} ${stat.mtimeNs} ${stat.ctimeNs}`;
  }
  return stats;
}

/** Whether two inputs' stats name the same files with the same stats. */
function sameStats(a, b) {
  if (a === null || typeof a !== 'object' || b === null || typeof b !== 'object') return false;
  const files = Object.keys(a);
  if (files.length !== Object.keys(b).length) return false;
  return files.every((file) => Object.prototype.hasOwnProperty.call(b, file) && a[file] === b[file]);
}

function readManifest(folder) {
  try {
    return JSON.parse(fs.readFileSync(path.join(folder, MANIFEST), 'utf8'));
  } catch {
    return null;
  }
}

/**
 * The folder of the compiled command line (its bundles) when build/cli holds a build of exactly the sources there are
 * now; null otherwise (no build, a stale or unreadable one: then kvqual loads the TypeScript).
 */
function currentBuild(root = ROOT) {
  const folder = path.join(root, BUILD_FOLDER);
  const manifest = readManifest(folder);
  if (manifest === null || manifest.format !== FORMAT || typeof manifest.inputs !== 'string') return null;
  if (!BUNDLES.every((bundle) => fs.existsSync(path.join(folder, `${bundle}.js`)))) return null;
  try {
    if (sameStats(inputStats(root), manifest.stats)) return folder;
    return inputsDigest(root) === manifest.inputs ? folder : null;
  } catch {
    return null;
  }
}

/** The packages left out of the bundles (see BUNDLED_PACKAGES), and their subpaths. */
function externalPackages(root) {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => !BUNDLED_PACKAGES.includes(name));
  return names.flatMap((name) => [name, `${name}/*`]);
}

/**
 * Compiles the command line's bundles (BUNDLES) from src/ into build/cli/ (CommonJS for Node 20, as
 * tsx compiles the sources, with source maps, so that a stack names the TypeScript lines) and records the digest of the inputs it compiled. Written into a fresh folder and
 * put in place whole, the manifest last; when a source changed while it compiled, nothing is put in
 * place (the digest would name sources it did not compile). Returns the build's folder.
 */
function buildCli(root = ROOT, esbuild = require('esbuild')) {
  // The stats first: a write after them changes them, whether or not it changes the digest below.
  const stats = inputStats(root);
  const before = inputsDigest(root);
  const folder = path.join(root, BUILD_FOLDER);
  const fresh = `${folder}.${process.pid}.tmp`;
  fs.rmSync(fresh, { recursive: true, force: true });
  try {
    const entryPoints = Object.fromEntries(BUNDLES.map((bundle) => [bundle, path.join(root, 'src', 'cli', `${bundle}.ts`)]));
    esbuild.buildSync({ entryPoints, outdir: fresh, bundle: true, external: externalPackages(root), format: 'cjs', platform: 'node', target: 'node20', sourcemap: true, logLevel: 'silent' });
    if (inputsDigest(root) !== before) throw new Error('a source changed while it compiled; run it again');
    fs.writeFileSync(path.join(fresh, MANIFEST), `${JSON.stringify({ format: FORMAT, inputs: before, esbuild: esbuild.version, stats }, null, 2)}\n`);
    fs.rmSync(folder, { recursive: true, force: true });
    fs.renameSync(fresh, folder);
  } finally {
    fs.rmSync(fresh, { recursive: true, force: true });
  }
  return folder;
}

/** Compiles; returns the exit status (0, or 1 when it could not compile and `ifPossible` is false). */
function main(args) {
  const ifPossible = args.includes('--if-possible');
  try {
    let esbuild;
    try {
      esbuild = require('esbuild');
    } catch {
      throw new Error('esbuild (a dev dependency) is not installed');
    }
    const folder = buildCli(ROOT, esbuild);
    process.stdout.write(`kvqual: compiled src/ into ${path.relative(ROOT, folder)} (bin/kvqual.js runs it while src/ is unchanged)\n`);
    return 0;
  } catch (error) {
    const reason = error && Array.isArray(error.errors) && error.errors.length > 0 ? error.errors.slice(0, 3).map(esbuildProblem).join(' / ') : error && error.message ? error.message.split('\n')[0] : String(error);
    process.stderr.write(`kvqual: could not compile the command line (it runs the TypeScript through tsx): ${reason}\n`);
    return ifPossible ? 0 : 1;
  }
}

/** One of esbuild's errors as "file:line: text". */
function esbuildProblem(problem) {
  return problem.location ? `${problem.location.file}:${problem.location.line}: ${problem.text}` : problem.text;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));

module.exports = { BUILD_FOLDER, BUNDLES, currentBuild, buildCli, inputsDigest, inputStats, main };
