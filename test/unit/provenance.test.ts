// Unit tests of src/signoff/provenance.ts on real git repositories in temporary folders: a link out
// of the checkout is named (a link within it, or within a features folder given outside it, is
// not); git runs with GIT_* cleared and without replace refs; a clean/smudge filter is named; files
// on disk are compared with the commit's blobs by content, so a filter, GIT_WORK_TREE or
// `git replace` cannot make a changed checkout read as the commit.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blobId, contentDifferences, filteredPaths, gitEnvironment, GIT_SAFE_ARGS, linksLeaving, LOADED_PATHS } from '../../src/signoff/provenance';
import { parseQualifyArgs, prepare, UsageError } from '../../src/signoff/driver';
import type { Git } from '../../src/signoff/worktree';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-provenance-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

/** Runs git in `cwd` as a person would (their variables kept); its output, or throws. */
function run(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...IDENTITY, ...env } });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** qualify's git (provenance.ts): the caller's variables cleared, no replace refs. */
function safeGit(cwd: string, env: NodeJS.ProcessEnv = process.env): Git {
  return (args) => {
    const result = spawnSync('git', [...GIT_SAFE_ARGS, ...args], { cwd, encoding: 'utf8', env: gitEnvironment(env) });
    return result.status === 0 ? result.stdout.trim() : null;
  };
}

let repos = 0;
/** A repository with features/a.feature, steps/a.ts and requirements.yaml, committed. */
function repository(): string {
  const root = path.join(scratch, `repo-${repos++}`);
  for (const [file, text] of Object.entries({ 'features/a.feature': 'Feature: a\n', 'steps/a.ts': 'export {};\n', 'requirements.yaml': 'requirements: []\n' })) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  run(root, ['init', '-q']);
  run(root, ['add', '-A']);
  run(root, ['commit', '-qm', 'one']);
  return root;
}

test('git runs with every GIT_* variable cleared and replace refs off; other variables kept', () => {
  const env = gitEnvironment({ PATH: '/bin', GIT_DIR: '/elsewhere/.git', GIT_WORK_TREE: '/elsewhere', GIT_INDEX_FILE: 'i', HOME: '/h' });
  assert.deepEqual(env, { PATH: '/bin', HOME: '/h', GIT_NO_REPLACE_OBJECTS: '1' });
  assert.deepEqual(GIT_SAFE_ARGS, ['--no-replace-objects']);
});

test('a blob is hashed as git hashes it', () => {
  const root = repository();
  assert.equal(blobId(fs.readFileSync(path.join(root, 'steps/a.ts'))), run(root, ['rev-parse', 'HEAD:steps/a.ts']));
  assert.equal(blobId(Buffer.from('')), 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
  assert.equal(blobId(Buffer.from(''), 'sha256'), '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813');
});

test('a clean checkout: no link out, no filter, every file the commit\'s', () => {
  const root = repository();
  assert.deepEqual(linksLeaving(root, 'features'), []);
  assert.deepEqual(filteredPaths(safeGit(root), ['features', 'steps']), []);
  assert.deepEqual(contentDifferences(root, safeGit(root), ['features', 'steps', 'requirements.yaml', 'src']), []);
});

test('a link out of the checkout is named wherever it is; a link within it, a missing path and a dangling link are told apart', () => {
  const root = repository();
  const outside = path.join(scratch, `outside-${repos}.feature`);
  fs.writeFileSync(outside, 'Feature: elsewhere\n');
  fs.symlinkSync(outside, path.join(root, 'features', 'x.feature'));
  fs.mkdirSync(path.join(root, 'features', 'deep'));
  fs.symlinkSync(scratch, path.join(root, 'features', 'deep', 'folder'));
  fs.symlinkSync('../steps/a.ts', path.join(root, 'features', 'inside.ts'));
  fs.symlinkSync(path.join(root, 'no-such'), path.join(root, 'steps', 'dangling.ts'));
  const found = linksLeaving(root, 'features');
  assert.equal(found.length, 2, found.join('\n'));
  assert.match(found[0], new RegExp(`^features/deep/folder is a symbolic link to ${fs.realpathSync(scratch)}, outside the checkout: the commit holds the link, not what it points at$`));
  assert.match(found[1], /^features\/x\.feature is a symbolic link to .*outside-\d+\.feature, outside the checkout/);
  assert.match(linksLeaving(root, 'steps')[0], /^steps\/dangling\.ts is a symbolic link that leads nowhere/);
  assert.deepEqual(linksLeaving(root, 'no-such-folder'), []);
  fs.symlinkSync(outside, path.join(root, 'cucumber.js'));
  assert.match(linksLeaving(root, path.join(root, 'cucumber.js'))[0], /^cucumber\.js is a symbolic link to /);
  // A whole folder that is a link out of the checkout.
  fs.symlinkSync(scratch, path.join(root, 'src'));
  assert.match(linksLeaving(root, 'src')[0], /^src is a symbolic link to /);
});

test('a features folder given outside the checkout may link within itself, not out of it', () => {
  const root = repository();
  const features = path.join(scratch, `features-${repos}`);
  fs.mkdirSync(path.join(features, 'inner'), { recursive: true });
  fs.writeFileSync(path.join(features, 'inner', 'a.feature'), 'Feature: a\n');
  fs.symlinkSync(path.join(features, 'inner', 'a.feature'), path.join(features, 'b.feature'));
  assert.deepEqual(linksLeaving(root, features), []);
  fs.symlinkSync(path.join(root, 'features', 'a.feature'), path.join(features, 'c.feature'));
  assert.match(linksLeaving(root, features)[0], new RegExp(`^${features}/c\\.feature is a symbolic link to .*, outside ${features}:`));
});

test('qualify refuses a features folder or registry with a link out of the checkout before anything runs (exit 2, naming it)', () => {
  const root = repository();
  const outside = path.join(scratch, `registry-${repos}.yaml`);
  fs.writeFileSync(outside, 'requirements:\n  - { id: LAG-1, title: t, source: s, owner: o }\n');
  fs.symlinkSync(outside, path.join(root, 'linked.yaml'));
  const out = path.join(scratch, `out-${repos}`);
  const options = parseQualifyArgs(['--features', path.join(root, 'features'), '--requirements', path.join(root, 'linked.yaml'), '--out', out]);
  assert.throws(
    () => prepare(options, root),
    (error: Error) => error instanceof UsageError && /^what ran would not be what the commit holds: linked\.yaml is a symbolic link to .*registry-\d+\.yaml, outside the checkout: the commit holds the link, not what it points at; refused$/.test(error.message),
  );
  assert.equal(fs.existsSync(out), false, 'nothing was made');
});

test('a clean or smudge filter on a loaded path is named (from .git/info/attributes too); files without one are not', () => {
  const root = repository();
  fs.writeFileSync(path.join(root, '.git', 'info', 'attributes'), 'features/*.feature filter=hide\n');
  assert.deepEqual(filteredPaths(safeGit(root), ['features', 'steps']), ['features/a.feature has the git filter "hide": git would compare its filtered content, not the file\'s']);
  fs.writeFileSync(path.join(root, '.git', 'info', 'attributes'), 'features/*.feature -filter\n');
  assert.deepEqual(filteredPaths(safeGit(root), ['features']), []);
  assert.deepEqual(filteredPaths(safeGit(root), ['nothing-here']), []);
});

test('a clean filter that hides an edit from git status does not hide it from the content comparison', () => {
  const root = repository();
  run(root, ['config', 'filter.hide.clean', 'cat features/a.feature.orig']);
  fs.copyFileSync(path.join(root, 'features', 'a.feature'), path.join(root, 'features', 'a.feature.orig'));
  run(root, ['update-index', '--assume-unchanged', 'features/a.feature']);
  fs.writeFileSync(path.join(root, '.git', 'info', 'attributes'), 'features/a.feature filter=hide\n');
  fs.writeFileSync(path.join(root, 'features', 'a.feature'), 'Feature: edited\n');
  fs.rmSync(path.join(root, 'features', 'a.feature.orig'));
  fs.writeFileSync(path.join(root, '.git', 'info', 'exclude'), '*.orig\n');
  assert.deepEqual(contentDifferences(root, safeGit(root), ['features']), ['features/a.feature']);
});

test('GIT_WORK_TREE and GIT_DIR set by the caller do not make git describe another checkout', () => {
  const root = repository();
  const other = repository();
  fs.writeFileSync(path.join(root, 'steps', 'a.ts'), 'export const changed = 1;\n');
  const lying = { ...process.env, GIT_WORK_TREE: other, GIT_DIR: path.join(other, '.git') };
  assert.equal(run(root, ['status', '--porcelain'], lying), '', 'git itself, told so, says the tree is clean');
  assert.deepEqual(contentDifferences(root, safeGit(root, lying), ['steps']), ['steps/a.ts']);
});

test('a replace ref does not stand in for the commit', () => {
  const root = repository();
  const head = run(root, ['rev-parse', 'HEAD']);
  fs.writeFileSync(path.join(root, 'features', 'a.feature'), 'Feature: other\n');
  run(root, ['commit', '-qam', 'two']);
  const second = run(root, ['rev-parse', 'HEAD']);
  // The checkout is the second commit; a replace ref makes the first stand in for it.
  run(root, ['replace', second, head]);
  run(root, ['reset', '-q', '--hard']);
  assert.equal(fs.readFileSync(path.join(root, 'features', 'a.feature'), 'utf8'), 'Feature: a\n', "the checkout holds the first commit's file");
  assert.equal(run(root, ['rev-parse', 'HEAD']), second, 'under the second commit');
  assert.equal(run(root, ['status', '--porcelain']), '', 'git, following the replace ref, calls the tree clean');
  assert.deepEqual(contentDifferences(root, safeGit(root), ['features']), ['features/a.feature']);
});

test('content comparison: an edit, a missing file, a file the commit lacks, a committed link and a file turned into a link', () => {
  const root = repository();
  fs.symlinkSync('../steps/a.ts', path.join(root, 'features', 'link.ts'));
  run(root, ['add', '-A']);
  run(root, ['commit', '-qm', 'link']);
  assert.deepEqual(contentDifferences(root, safeGit(root), ['features', 'steps']), [], 'a committed link compares by its target text');
  fs.rmSync(path.join(root, 'features', 'link.ts'));
  fs.symlinkSync('../steps/other.ts', path.join(root, 'features', 'link.ts'));
  fs.writeFileSync(path.join(root, 'features', 'new.feature'), 'Feature: new\n');
  fs.rmSync(path.join(root, 'steps', 'a.ts'));
  fs.writeFileSync(path.join(root, 'steps', 'b.ts'), '');
  fs.writeFileSync(path.join(root, 'requirements.yaml'), 'requirements: [] # edited\n');
  assert.deepEqual(contentDifferences(root, safeGit(root), ['features', 'steps', 'requirements.yaml']), ['features/link.ts', 'features/new.feature', 'requirements.yaml', 'steps/a.ts', 'steps/b.ts']);
  const copy = repository();
  fs.copyFileSync(path.join(copy, 'steps', 'a.ts'), path.join(scratch, `same-${repos}.ts`));
  fs.rmSync(path.join(copy, 'steps', 'a.ts'));
  fs.symlinkSync(path.join(scratch, `same-${repos}.ts`), path.join(copy, 'steps', 'a.ts'));
  assert.deepEqual(contentDifferences(copy, safeGit(copy), ['steps']), ['steps/a.ts'], 'a committed file now a link, even to the same content');
  assert.equal(contentDifferences(scratch, () => null), null, 'no git: null');
});

test('a repository in the SHA-256 object format is compared in its own format', () => {
  const root = path.join(scratch, `repo-sha256-${repos++}`);
  fs.mkdirSync(path.join(root, 'steps'), { recursive: true });
  fs.writeFileSync(path.join(root, 'steps', 'a.ts'), 'export {};\n');
  const init = spawnSync('git', ['init', '-q', '--object-format=sha256'], { cwd: root, encoding: 'utf8' });
  if (init.status !== 0) return; // a git without SHA-256 repositories
  run(root, ['add', '-A']);
  run(root, ['commit', '-qm', 'one']);
  assert.deepEqual(contentDifferences(root, safeGit(root), ['steps']), []);
  fs.writeFileSync(path.join(root, 'steps', 'a.ts'), 'export const b = 1;\n');
  assert.deepEqual(contentDifferences(root, safeGit(root), ['steps']), ['steps/a.ts']);
});

test('the paths compared are those a run loads; a git that cannot say which files have a filter is a problem, not a pass', () => {
  assert.deepEqual(LOADED_PATHS, ['features', 'steps', 'src', 'requirements.yaml', 'cucumber.js', 'scripts/first-run.ts', 'scripts/suiteInProcess.ts']);
  const git: Git = (args) => (args[0] === 'ls-files' ? 'features/a.feature\0' : null);
  assert.deepEqual(filteredPaths(git, ['features']), ['git check-attr could not say which files have a filter']);
});
