// The compiled command line: src/ compiled to JavaScript bundles in build/cli/ (by esbuild; `npm ci` runs it
// through the `prepare` script, `npm run build` by hand), and whether that build is current, so that
// bin/kvqual.js runs it instead of loading the TypeScript through tsx (the same code, a faster start).
// The sign-off (scripts/qualify.ts, `npm run qualify` and `kvqual qualify`) is compiled beside it
// into build/qualify/ and chosen on the same terms (loadQualify; about half a second of CPU less
// at its start than through tsx).
// A build is current when the digest of its inputs it recorded (its manifest.json) is the
// digest of the inputs now: every file under src/ (names and contents), tsconfig.json (esbuild reads
// it), this file (how it compiles), every other file of the repository the bundles hold (the
// sign-off's script and what it imports from steps/ and bin/, as esbuild listed them) and the
// package.json of each package compiled into them (its version: a package upgraded by
// `npm install x@v`, which runs no `prepare`, would otherwise stay the old code in a current-looking
// bundle). A changed, added or removed source makes it stale, and a stale build never runs: kvqual falls back to tsx. To spare hashing every source at every start, the
// manifest also keeps each input's size, inode and modification and change times (to the
// nanosecond) as they were before it compiled: when every input still has them, none was written
// since (writing a file, or setting its times, sets its change time to now, which nothing but the
// system clock can set back), and the build is current without reading a source; otherwise the
// contents decide (a file touched but unchanged keeps the build current). The bundles themselves
// are checked the same way against what the build wrote (their stats, else their digests): one
// edited by hand never runs (the sign-off checks that the working tree is the commit, and an
// edited bundle under the ignored build/ would run other code than the commit's unseen).
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
/** Where the sign-off's build goes: a build of its own, since its inputs are more than src/ (a changed step file leaves the command line's current). */
const QUALIFY_FOLDER = path.join('build', 'qualify');
const MANIFEST = 'manifest.json';
/** The manifest's format: a build with another one is stale (1: a file per source; 2: bundles; 3: bundles checked against their digests). */
const FORMAT = 3;
/**
 * The bundles the build holds, each a source of src/cli/ with everything it imports from src/ and
 * from the packages in BUNDLED_PACKAGES, in one file: a start reads and compiles one file where it
 * read about 270 (zod and yaml alone are about 170). The command line is main.js; sweepWorker.js is
 * the process a sweep forks for its points (src/cli/sweepPool.ts finds it beside the module that forks it).
 */
const BUNDLES = ['main', 'sweepWorker'];
/** The builds: each a folder of bundles, named by their sources (relative to the repository); a build whose sources are not all there is not made. */
const BUILDS = [
  { folder: BUILD_FOLDER, bundles: Object.fromEntries(BUNDLES.map((bundle) => [bundle, path.join('src', 'cli', `${bundle}.ts`)])) },
  { folder: QUALIFY_FOLDER, bundles: { qualify: path.join('scripts', 'qualify.ts') } },
];
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
 * What a build is made from: every file under src/, OTHER_INPUTS, and `more` (the other files of the
 * repository its bundles hold, as its manifest lists them), each once, in name order.
 */
function inputFiles(root, more = []) {
  return [...new Set([...filesUnder(root, 'src'), ...OTHER_INPUTS, ...more])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Each file's contents, or null when it does not exist. */
function contentsOf(root, files) {
  return new Map(
    files.map((file) => {
      try {
        return [file, fs.readFileSync(path.join(root, file))];
      } catch (error) {
        if (error && error.code === 'ENOENT') return [file, null];
        throw error;
      }
    }),
  );
}

/** The digest of `files` with these contents: each one's name and contents, in the order given (absent differs from empty). */
function digestOf(files, contents) {
  const hash = crypto.createHash('sha256');
  for (const file of files) {
    const content = contents.get(file);
    if (content === null) {
      hash.update(`${file}\0absent\0`);
      continue;
    }
    hash.update(`${file}\0${content.length}\0`);
    hash.update(content);
  }
  return `sha256:${hash.digest('hex')}`;
}

/**
 * The digest of what the build is made from (inputFiles): each input's name and contents, in name
 * order (an input that does not exist counts as absent, which differs from empty).
 */
function inputsDigest(root, more = []) {
  const files = inputFiles(root, more);
  return digestOf(files, contentsOf(root, files));
}

/** Each input's size, inode, modification and change times (ns), as one text per file, in name order. */
function inputStats(root, more = []) {
  const stats = {};
  for (const file of inputFiles(root, more)) {
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

/** A file's size, inode, modification and change times (ns), as one text. */
function statText(file) {
  const stat = fs.statSync(file, { bigint: true });
  return `${stat.size} ${stat.ino} ${stat.mtimeNs} ${stat.ctimeNs}`;
}

/** A bundle's digest ("sha256:…"), as its manifest records it. */
function bundleDigest(file) {
  return `sha256:${crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')}`;
}

/** Each bundle's JavaScript in `folder`: its stats and digest, as the manifest records them (see bundlesIntact). */
function bundleRecords(folder, build) {
  return Object.fromEntries(
    Object.keys(build.bundles).map((bundle) => {
      const file = path.join(folder, `${bundle}.js`);
      return [`${bundle}.js`, { stats: statText(file), digest: bundleDigest(file) }];
    }),
  );
}

/** Whether each bundle of `build` in `folder` is what the build wrote (its manifest's `bundles`): the same stats, else the same digest. */
function bundlesIntact(folder, build, recorded) {
  if (recorded === null || typeof recorded !== 'object') return false;
  return Object.keys(build.bundles).every((bundle) => {
    const record = recorded[`${bundle}.js`];
    if (record === null || typeof record !== 'object') return false;
    const file = path.join(folder, `${bundle}.js`);
    return statText(file) === record.stats || bundleDigest(file) === record.digest;
  });
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
 * `folder` (relative to `root`): another build of BUILDS, on the same terms.
 */
function currentBuild(root = ROOT, folder = BUILD_FOLDER) {
  const build = BUILDS.find((b) => b.folder === folder);
  const at = path.join(root, folder);
  const manifest = readManifest(at);
  if (build === undefined || manifest === null || manifest.format !== FORMAT || typeof manifest.inputs !== 'string') return null;
  // The files outside src/ the bundles hold (none of the repository's for the command line's), and their packages' manifests.
  const more = manifestFiles(manifest);
  if (more === null) return null;
  if (!Object.keys(build.bundles).every((bundle) => fs.existsSync(path.join(at, `${bundle}.js`)))) return null;
  try {
    if (!bundlesIntact(at, build, manifest.bundles)) return null;
    if (sameStats(inputStats(root, more), manifest.stats)) return at;
    return inputsDigest(root, more) === manifest.inputs ? at : null;
  } catch {
    return null;
  }
}

/**
 * The sign-off's module (scripts/qualify.ts: runQualify, qualifyWith): its bundle in build/qualify/
 * when current, else the TypeScript through tsx (also when KVQUAL_TSX=1). `loadTsx` puts tsx's
 * loader in place (the caller's, which may first check that tsx can keep its cache).
 */
function loadQualify(loadTsx = () => require('tsx/cjs'), root = ROOT) {
  const build = process.env.KVQUAL_TSX === '1' ? null : currentBuild(root, QUALIFY_FOLDER);
  if (build !== null) {
    // A stack printed for an internal error names the TypeScript lines (esbuild's source maps), as under tsx.
    process.setSourceMapsEnabled(true);
    return require(path.join(build, 'qualify.js'));
  }
  loadTsx();
  return require(path.join(root, 'scripts', 'qualify.ts'));
}

/** The packages left out of the bundles (see BUNDLED_PACKAGES), and their subpaths. */
function externalPackages(root) {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => !BUNDLED_PACKAGES.includes(name));
  return names.flatMap((name) => [name, `${name}/*`]);
}

/**
 * The packages the repository's own sources import that esbuild compiled into a build although they
 * are not BUNDLED_PACKAGES: packages package.json does not declare (every declared one is external;
 * what a bundled package imports itself is bundled with it). Inside a bundle, a package that reads
 * its own files beside its code (cucumber's HTML formatter its template) would look for them in the
 * bundle's folder.
 */
function packagesBundledUnasked(metafile) {
  const packageOf = (file) => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
  const names = [];
  for (const [file, input] of Object.entries(metafile.inputs)) {
    if (packageOf(file) !== undefined) continue;
    for (const imported of input.imports) {
      const name = packageOf(imported.path);
      if (name !== undefined && !BUNDLED_PACKAGES.includes(name)) names.push(name);
    }
  }
  return [...new Set(names)].sort();
}

/**
 * The package.json of each package whose code esbuild compiled into a build (as esbuild names the
 * package's folder, relative to the repository, through node_modules), in name order: its version
 * tells which code the bundle holds.
 */
function packageManifests(metafile) {
  const folders = new Set();
  for (const file of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
    if (match) folders.add(`${match[1]}/package.json`.split('/').join(path.sep));
  }
  return [...folders].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The files a build's manifest names beside src/ and OTHER_INPUTS (its repository files, then its packages' manifests); null when malformed. */
function manifestFiles(manifest) {
  const listed = [manifest.files ?? [], manifest.packages ?? []];
  if (!listed.every((files) => Array.isArray(files) && files.every((file) => typeof file === 'string'))) return null;
  return listed.flat();
}

/** The files of the repository (not a package's) that esbuild read for a build, outside src/ and OTHER_INPUTS, in name order. */
function repositoryInputs(metafile) {
  const files = Object.keys(metafile.inputs).filter((file) => !file.split('/').includes('node_modules') && !file.startsWith('src/'));
  return files.map((file) => file.split('/').join(path.sep)).filter((file) => !OTHER_INPUTS.includes(file)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Compiles the bundles of `build` (one of BUILDS; the command line's by default) into its folder
 * (CommonJS for Node 20, as tsx compiles the sources, with source maps, so that a stack names the
 * TypeScript lines) and records the digest of the inputs it compiled: src/, OTHER_INPUTS, the
 * other files of the repository esbuild read and the package.json of each package it compiled in
 * (both listed in the manifest), and each bundle's stats and digest as written. Written into a
 * fresh folder and put in place whole, the manifest last; when an input changed while it compiled, nothing is
 * put in place (the digest would name sources it did not compile). Returns the build's folder.
 */
function buildCli(root = ROOT, esbuild = require('esbuild'), build = BUILDS[0]) {
  const folder = path.join(root, build.folder);
  // The inputs are known once esbuild has read them: those of the last build are read first, and
  // when it read others, it compiles again with those read first too.
  const last = readManifest(folder);
  let known = (last !== null && manifestFiles(last)) || [];
  for (;;) {
    const compiled = compileInto(root, esbuild, build, folder, known);
    if (compiled === null) return folder;
    known = compiled;
  }
}

/** One compile of `build` into `folder`; null when it was put in place, else the repository's files it read beyond `known` and those (compile again). */
function compileInto(root, esbuild, build, folder, known) {
  const files = inputFiles(root, known);
  // The stats first: a write after them changes them, whether or not it changes the contents below.
  const stats = inputStats(root, known);
  const before = contentsOf(root, files);
  const fresh = `${folder}.${process.pid}.tmp`;
  fs.rmSync(fresh, { recursive: true, force: true });
  try {
    const entryPoints = Object.fromEntries(Object.entries(build.bundles).map(([bundle, source]) => [bundle, path.join(root, source)]));
    const result = esbuild.buildSync({ entryPoints, outdir: fresh, absWorkingDir: root, bundle: true, external: externalPackages(root), format: 'cjs', platform: 'node', target: 'node20', sourcemap: true, metafile: true, logLevel: 'silent' });
    const undeclared = packagesBundledUnasked(result.metafile);
    if (undeclared.length > 0) throw new Error(`the sources import ${undeclared.join(', ')}, which package.json does not declare (a package's files would be read from the bundle's folder): declare it`);
    const read = repositoryInputs(result.metafile);
    const packages = packageManifests(result.metafile);
    if (![...read, ...packages].every((file) => files.includes(file))) return [...new Set([...known, ...read, ...packages])];
    const inputs = inputFiles(root, [...read, ...packages]);
    if (digestOf(inputs, contentsOf(root, inputs)) !== digestOf(inputs, before)) throw new Error('a source changed while it compiled; run it again');
    const manifest = { format: FORMAT, inputs: digestOf(inputs, before), ...(read.length > 0 ? { files: read } : {}), packages, bundles: bundleRecords(fresh, build), esbuild: esbuild.version, stats: Object.fromEntries(inputs.map((file) => [file, stats[file]])) };
    fs.writeFileSync(path.join(fresh, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    fs.rmSync(folder, { recursive: true, force: true });
    fs.renameSync(fresh, folder);
    return null;
  } finally {
    fs.rmSync(fresh, { recursive: true, force: true });
  }
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
  } catch (error) {
    process.stderr.write(`kvqual: could not compile the command line (it runs the TypeScript through tsx): ${problemOf(error)}\n`);
    return ifPossible ? 0 : 1;
  }
  // The sign-off's build, where its script is (a copy of src/ and bin/ alone has none).
  const qualify = BUILDS[1];
  if (!Object.values(qualify.bundles).every((source) => fs.existsSync(path.join(ROOT, source)))) return 0;
  try {
    buildCli(ROOT, require('esbuild'), qualify);
    process.stdout.write(`kvqual: compiled the sign-off into ${qualify.folder} (npm run qualify runs it while its sources are unchanged)\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`kvqual: could not compile the sign-off (npm run qualify runs the TypeScript through tsx): ${problemOf(error)}\n`);
    return ifPossible ? 0 : 1;
  }
}

/** What kept esbuild from compiling, in a line: its first errors as "file:line: text", or the error's first line. */
function problemOf(error) {
  return error && Array.isArray(error.errors) && error.errors.length > 0 ? error.errors.slice(0, 3).map(esbuildProblem).join(' / ') : error && error.message ? error.message.split('\n')[0] : String(error);
}

/** One of esbuild's errors as "file:line: text". */
function esbuildProblem(problem) {
  return problem.location ? `${problem.location.file}:${problem.location.line}: ${problem.text}` : problem.text;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));

module.exports = { BUILD_FOLDER, QUALIFY_FOLDER, BUILDS, BUNDLES, currentBuild, buildCli, inputsDigest, inputStats, loadQualify, main };
