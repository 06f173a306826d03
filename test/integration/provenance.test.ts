// End to end in a scratch clone of this repository: `npm run qualify` refuses, before anything
// runs and with exit status 2 naming the file, a clean/smudge filter on a loaded path (set in
// .git/info/attributes, which no commit shows) and a committed symbolic link under steps/ that
// leads out of the checkout.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-provenance-'));
const clone = path.join(scratch, 'clone');
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

function git(args: string[]): void {
  const result = spawnSync('git', args, { cwd: clone, encoding: 'utf8', env: { ...process.env, ...IDENTITY } });
  assert.equal(result.status, 0, `git ${args.join(' ')}: ${result.stderr}`);
}

function qualify(): { status: number | null; stderr: string; out: string } {
  const out = path.join(scratch, 'out');
  const result = spawnSync(process.execPath, ['--require', 'tsx/cjs', 'scripts/qualify.ts', '--no-coverage', '--fuzz-runs', '0', '--out', out], { cwd: clone, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stderr: result.stderr, out };
}

before(() => {
  const cloned = spawnSync('git', ['clone', '-q', '--shared', ROOT, clone], { encoding: 'utf8' });
  assert.equal(cloned.status, 0, cloned.stderr);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'));
});

test('a filter on the features in .git/info/attributes: refused, exit 2, naming the file and the filter', () => {
  fs.writeFileSync(path.join(clone, '.git', 'info', 'attributes'), 'features/router/*.feature filter=hide\n');
  const run = qualify();
  fs.rmSync(path.join(clone, '.git', 'info', 'attributes'));
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /^qualify: what ran would not be what the commit holds: features\/router\/[^ ]+\.feature has the git filter "hide": git would compare its filtered content, not the file's; .*refused \(remove the filter attribute\)\n$/);
  assert.equal(fs.existsSync(run.out), false, 'nothing was made');
});

test('a committed link under steps/ to a file outside the checkout: refused, exit 2, naming it', () => {
  const outside = path.join(scratch, 'outside.steps.ts');
  fs.writeFileSync(outside, 'export {};\n');
  fs.symlinkSync(outside, path.join(clone, 'steps', 'outside.steps.ts'));
  git(['add', 'steps/outside.steps.ts']);
  git(['commit', '-qm', 'a link out']);
  const run = qualify();
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /^qualify: what ran would not be what the commit holds: steps\/outside\.steps\.ts is a symbolic link to .*outside\.steps\.ts, outside the checkout: the commit holds the link, not what it points at; refused\n$/);
  assert.equal(fs.existsSync(run.out), false, 'nothing was made');
});
