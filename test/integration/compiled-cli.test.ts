// The compiled command line (bin/compiled.js): in a copy of the repository, `npm run prepare` (what
// `npm ci` runs) and `node bin/compiled.js` (`npm run build`) compile src/ into build/cli/, and
// bin/kvqual.js runs that build only while it is current: a source whose contents changed (even
// with the length and modification time it had when built), a new or a removed source, or a
// changed tsconfig.json, or the bundle itself edited, makes it stale, and kvqual then runs the
// TypeScript through tsx with the same result; a source touched but unchanged, or changed back, keeps it current; KVQUAL_TSX=1 runs
// tsx whatever the build. A source that does not compile fails `npm run build` naming it, and
// `prepare` (--if-possible) only says so.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { loadWatch, whileEditedByHand } from '../support/loadWatch';

const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-compiled-'));
after(() => fs.rmSync(copy, { recursive: true, force: true }));
for (const part of ['src', 'bin', 'package.json', 'tsconfig.json']) fs.cpSync(path.join(ROOT, part), path.join(copy, part), { recursive: true });
fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(copy, 'node_modules'), 'dir');

/** What a kvqual process says as it exits when it loaded the compiled build (a preloaded watcher: the build itself is left as built). */
const COMPILED_RAN = '[the compiled build ran]';
const WATCHED = loadWatch(copy, path.join('build', 'cli', 'main.js'), COMPILED_RAN);

function build(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [path.join(copy, 'bin', 'compiled.js'), ...args], { cwd: copy, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** `npm run prepare` in the copy (what `npm ci` runs after installing). */
function prepare(): { status: number | null; output: string } {
  const run = spawnSync('npm', ['run', '--silent', 'prepare'], { cwd: copy, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Builds (through npm's `prepare` when asked). */
function built(how: 'prepare' | 'build' = 'build'): void {
  const run = how === 'prepare' ? prepare() : build();
  assert.equal(run.status, 0, run.output);
  assert.match(run.output, /compiled src\/ into build\/cli/);
}

/** `kvqual --version` in the copy: whether the compiled build ran, and what it printed. */
function version(env: NodeJS.ProcessEnv = {}): { compiled: boolean; stdout: string; status: number | null } {
  const run = spawnSync(process.execPath, [path.join(copy, 'bin', 'kvqual.js'), '--version'], { cwd: copy, encoding: 'utf8', env: { ...process.env, KVQUAL_BUILD: '', KVQUAL_TSX: '', ...WATCHED, ...env } });
  return { compiled: run.stderr.includes(COMPILED_RAN), stdout: run.stdout, status: run.status };
}

/** Rewrites a source, keeping its length, and sets its modification time to `date` (a whole second: exact to the nanosecond). */
function editWithDate(file: string, from: string, to: string, date: Date): void {
  const text = fs.readFileSync(file, 'utf8');
  assert.equal(from.length, to.length);
  assert.ok(text.includes(from), `${file} holds ${from}`);
  fs.writeFileSync(file, text.replace(from, to));
  fs.utimesSync(file, date, date);
  assert.equal(fs.statSync(file, { bigint: true }).mtimeNs, BigInt(date.getTime()) * 1_000_000n, 'the modification time set to the nanosecond');
}

test('kvqual runs the compiled build only while it is current; a stale one never runs', (t) => {
  const main = path.join(copy, 'src', 'cli', 'main.ts');
  // A whole second, which utimes can put back exactly (to the nanosecond) after an edit.
  const second = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  fs.utimesSync(main, second, second);
  built('prepare');
  const manifest = JSON.parse(fs.readFileSync(path.join(copy, 'build', 'cli', 'manifest.json'), 'utf8')) as { inputs: string };
  assert.match(manifest.inputs, /^sha256:[0-9a-f]{64}$/);
  const expected = `${(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}\n`;
  // kvqual itself, a real process, where what runs is the question (the build, tsx asked for, one stale build: the
  // same answer through tsx); elsewhere the choice it makes, read in this process from the copy's bin/compiled.js
  // (currentBuild, which bin/kvqual.js asks: a build when current, else null), without a start per state.
  const expect = (compiled: boolean, what: string, env: NodeJS.ProcessEnv = {}) => {
    const run = version(env);
    assert.equal(run.status, 0, what);
    assert.equal(run.stdout, expected, what);
    assert.equal(run.compiled, compiled, `${what}: the compiled build ${compiled ? 'should run' : 'ran although stale'}`);
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { currentBuild } = require(path.join(copy, 'bin', 'compiled.js')) as { currentBuild(): string | null };
  const chosen = (compiled: boolean, what: string) => {
    assert.equal(currentBuild(), compiled ? path.join(copy, 'build', 'cli') : null, `${what}: the compiled build ${compiled ? 'should be chosen' : 'chosen although stale'}`);
  };
  const original = fs.readFileSync(main, 'utf8');

  t.diagnostic('current');
  expect(true, 'just built');
  expect(false, 'KVQUAL_TSX=1 asks for tsx', { KVQUAL_TSX: '1' });
  const later = new Date(Date.now() + 60_000);
  fs.utimesSync(main, later, later);
  chosen(true, 'a source touched, its contents the same');

  editWithDate(main, "for a command's options", "for a COMMAND's options", second);
  expect(false, 'a source changed, with its length and the modification time it had when built');
  fs.writeFileSync(main, original);
  chosen(true, 'the source changed back');

  const extra = path.join(copy, 'src', 'extra.ts');
  fs.writeFileSync(extra, 'export const extra = 1;\n');
  chosen(false, 'a source added');
  fs.rmSync(extra);
  chosen(true, 'the added source removed');

  const tsconfig = path.join(copy, 'tsconfig.json');
  const settings = fs.readFileSync(tsconfig, 'utf8');
  fs.writeFileSync(tsconfig, settings.replace('"strict": true', '"strict": false'));
  chosen(false, 'tsconfig.json changed');
  fs.writeFileSync(tsconfig, settings);
  expect(true, 'everything as it was built');

  whileEditedByHand(
    path.join(copy, 'build', 'cli', 'main.js'),
    () => expect(false, 'the bundle edited by hand after it was built'),
    () => chosen(true, 'the bundle written back as it was built'),
  );

  // A source nothing imports, built and then removed.
  fs.writeFileSync(extra, 'export const extra = 1;\n');
  built();
  chosen(true, 'built with one more source');
  fs.rmSync(extra);
  chosen(false, 'a source removed');
});

test('a source that does not compile fails the build naming it; prepare only says so, and the old build stays stale', () => {
  // A new source the command line imports (the build bundles what it imports).
  const file = path.join(copy, 'src', 'extra.ts');
  const importer = path.join(copy, 'src', 'time.ts');
  const imports = fs.readFileSync(importer, 'utf8');
  fs.writeFileSync(file, 'export const broken = ;\n');
  fs.writeFileSync(importer, `import './extra';\n${imports}`);
  try {
    const failed = build();
    assert.equal(failed.status, 1, failed.output);
    assert.match(failed.output, /could not compile the command line .*src\/extra\.ts:1: /);
    const prepared = build('--if-possible');
    assert.equal(prepared.status, 0, prepared.output);
    assert.match(prepared.output, /could not compile the command line/);
    assert.equal(fs.readdirSync(path.join(copy, 'build')).join(' '), 'cli', 'no half-written build is left beside it');
  } finally {
    fs.writeFileSync(importer, imports);
    fs.rmSync(file);
  }
});
