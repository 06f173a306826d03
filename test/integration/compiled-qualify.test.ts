// The sign-off's compiled build (bin/compiled.js, build/qualify/): in a copy of the repository,
// `node bin/compiled.js` (`npm run build`) compiles scripts/qualify.ts with what it imports into
// build/qualify/, and bin/qualify.js (`npm run qualify`) runs that bundle only while it is current:
// a change to any file the bundle holds, in src/ or outside it (steps/support/figureCache.ts, which
// the sign-off imports), or another version of a package compiled into it, makes it stale, and
// the sign-off then runs through tsx with the same answer; so does the bundle edited by hand; the
// file changed back makes it current again; KVQUAL_TSX=1 runs tsx whatever the build.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { loadWatch, whileEditedByHand } from '../support/loadWatch';

const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-compiled-qualify-'));
after(() => fs.rmSync(copy, { recursive: true, force: true }));
for (const part of ['src', 'bin', 'scripts', 'steps', 'package.json', 'tsconfig.json']) fs.cpSync(path.join(ROOT, part), path.join(copy, part), { recursive: true });
// node_modules: the repository's packages linked one by one, but for a copy of one the bundle holds (its version changed below).
const BUNDLED_PACKAGE = 'fastest-levenshtein';
const packages = fs.realpathSync(path.join(ROOT, 'node_modules'));
fs.mkdirSync(path.join(copy, 'node_modules'));
for (const name of fs.readdirSync(packages)) {
  if (name === BUNDLED_PACKAGE) fs.cpSync(path.join(packages, name), path.join(copy, 'node_modules', name), { recursive: true });
  else fs.symlinkSync(path.join(packages, name), path.join(copy, 'node_modules', name));
}

/** What a process says as it exits when it loaded the compiled sign-off (a preloaded watcher: the bundle itself is left as built). */
const COMPILED_RAN = '[the compiled sign-off ran]';
const WATCHED = loadWatch(copy, path.join('build', 'qualify', 'qualify.js'), COMPILED_RAN);

/** `npm run qualify -- --help` in the copy (bin/qualify.js): whether the compiled build ran, and what it printed. */
function help(env: NodeJS.ProcessEnv = {}): { compiled: boolean; stdout: string; status: number | null } {
  const run = spawnSync(process.execPath, [path.join(copy, 'bin', 'qualify.js'), '--help'], { cwd: copy, encoding: 'utf8', env: { ...process.env, KVQUAL_TSX: '', ...WATCHED, ...env } });
  return { compiled: run.stderr.includes(COMPILED_RAN), stdout: run.stdout, status: run.status };
}

/** Rewrites a file, keeping its length and modification time (a change only its contents tell). */
function editKeepingStats(file: string, from: string, to: string): void {
  const text = fs.readFileSync(file, 'utf8');
  const { atime, mtime } = fs.statSync(file);
  assert.equal(from.length, to.length);
  assert.ok(text.includes(from), `${file} holds ${from}`);
  fs.writeFileSync(file, text.replace(from, to));
  fs.utimesSync(file, atime, mtime);
}

test('npm run qualify runs the compiled sign-off only while every file it holds is unchanged', (t) => {
  const built = spawnSync(process.execPath, [path.join(copy, 'bin', 'compiled.js')], { cwd: copy, encoding: 'utf8' });
  assert.equal(built.status, 0, `${built.stdout}${built.stderr}`);
  assert.match(built.stdout, /compiled the sign-off into build\/qualify/);
  const manifest = JSON.parse(fs.readFileSync(path.join(copy, 'build', 'qualify', 'manifest.json'), 'utf8')) as { files: string[] };
  assert.deepEqual(manifest.files, ['bin/progress.js', 'scripts/qualify.ts', 'steps/support/figureCache.ts'], 'the files outside src/ the bundle holds are its inputs too');
  const usage = help({ KVQUAL_TSX: '1' }).stdout;
  assert.match(usage, /^usage: npm run qualify -- \[options\]\n/);
  const expect = (compiled: boolean, what: string, env: NodeJS.ProcessEnv = {}) => {
    const run = help(env);
    assert.equal(run.status, 0, what);
    assert.equal(run.stdout, usage, `${what}: the same usage either way`);
    assert.equal(run.compiled, compiled, `${what}: the compiled sign-off ${compiled ? 'should run' : 'ran although stale'}`);
  };

  t.diagnostic('current');
  expect(true, 'just built');
  expect(false, 'KVQUAL_TSX=1 asks for tsx', { KVQUAL_TSX: '1' });

  const cache = path.join(copy, 'steps', 'support', 'figureCache.ts');
  const original = fs.readFileSync(cache, 'utf8');
  editKeepingStats(cache, 'The figure cache of', 'THE FIGURE CACHE of');
  expect(false, 'a file outside src/ that the bundle holds changed, with its length and modification time');
  fs.writeFileSync(cache, original);
  expect(true, 'that file changed back');

  const driver = path.join(copy, 'src', 'signoff', 'driver.ts');
  const source = fs.readFileSync(driver, 'utf8');
  fs.appendFileSync(driver, '\n');
  expect(false, 'a source under src/ changed');
  fs.writeFileSync(driver, source);
  expect(true, 'everything as it was built');

  // The sign-off checks that the working tree is the commit; build/ is ignored by git, so an edited bundle would go unseen.
  whileEditedByHand(
    path.join(copy, 'build', 'qualify', 'qualify.js'),
    () => expect(false, 'the bundle edited by hand after it was built'),
    () => expect(true, 'the bundle written back as it was built'),
  );

  // A package compiled into the bundle, upgraded (as `npm install x@v` does, which runs no prepare): its version tells.
  const packageManifest = path.join(copy, 'node_modules', BUNDLED_PACKAGE, 'package.json');
  const installed = fs.readFileSync(packageManifest, 'utf8');
  const { version } = JSON.parse(installed) as { version: string };
  fs.writeFileSync(packageManifest, installed.replace(`"version": "${version}"`, '"version": "99.0.0"'));
  expect(false, 'a package the bundle holds has another version');
  fs.writeFileSync(packageManifest, installed);
  expect(true, 'that package as it was built');
});

test('a package the sources import without package.json declaring it fails the build, naming it (inside the bundle it would look for its own files beside the bundle)', () => {
  const manifestFile = path.join(copy, 'package.json');
  const original = fs.readFileSync(manifestFile, 'utf8');
  try {
    const manifest = JSON.parse(original) as { devDependencies: Record<string, string> };
    delete manifest.devDependencies['@cucumber/html-formatter'];
    fs.writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    const built = spawnSync(process.execPath, [path.join(copy, 'bin', 'compiled.js')], { cwd: copy, encoding: 'utf8' });
    assert.equal(built.status, 1, `${built.stdout}${built.stderr}`);
    assert.match(built.stderr, /the sources import @cucumber\/html-formatter, which package\.json does not declare/);
  } finally {
    fs.writeFileSync(manifestFile, original);
  }
  const again = spawnSync(process.execPath, [path.join(copy, 'bin', 'compiled.js')], { cwd: copy, encoding: 'utf8' });
  assert.equal(again.status, 0, `${again.stdout}${again.stderr}`);
});
