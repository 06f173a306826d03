// Unit tests of src/signoff/worktree.ts with a fake git: what `git status` lists, files git was told
// not to look at whose content is not the commit's, and ignored files where code is loaded from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { worktreeDifferences, worktreeText, type Git } from '../../src/signoff/worktree';

/** A git that answers from a table of "args joined by spaces" → output (null: failed). */
function fakeGit(answers: Record<string, string | null>): Git {
  return (args) => {
    const key = args.join(' ');
    return key in answers ? answers[key] : key.startsWith('ls-files --others') ? '' : null;
  };
}

test('a clean tree: nothing listed, nothing hidden, nothing ignored where code is loaded', () => {
  const git = fakeGit({ 'status --porcelain --untracked-files=all': '', 'ls-files -v': 'H src/a.ts\nH steps/b.ts' });
  assert.deepEqual(worktreeDifferences(git), []);
  assert.equal(worktreeText([]), 'clean working tree');
});

test('what git status lists counts, first line trimmed or not, a rename by its new name', () => {
  const git = fakeGit({ 'status --porcelain --untracked-files=all': 'M src/a.ts\n?? steps/new.ts\nR  old.ts -> src/renamed.ts', 'ls-files -v': '' });
  assert.deepEqual(worktreeDifferences(git), ['src/a.ts', 'src/renamed.ts', 'steps/new.ts']);
});

test('a skip-worktree or assume-unchanged file counts when its content is not the commit\'s, not when it is', () => {
  const git = fakeGit({
    'status --porcelain --untracked-files=all': '',
    'ls-files -v': 'S steps/blocks.steps.ts\nh src/same.ts\nH src/plain.ts',
    'rev-parse HEAD:steps/blocks.steps.ts': 'aaa',
    'hash-object -- steps/blocks.steps.ts': 'bbb',
    'rev-parse HEAD:src/same.ts': 'ccc',
    'hash-object -- src/same.ts': 'ccc',
  });
  assert.deepEqual(worktreeDifferences(git), ['steps/blocks.steps.ts']);
});

test('an ignored file inside a folder code is loaded from counts (cucumber loads steps/**), and the text says how many', () => {
  const git = fakeGit({
    'status --porcelain --untracked-files=all': '',
    'ls-files -v': '',
    'ls-files --others --ignored --exclude-standard -- src steps features test': 'steps/local-helpers.ts',
  });
  const differences = worktreeDifferences(git);
  assert.deepEqual(differences, ['steps/local-helpers.ts']);
  assert.equal(worktreeText(differences), 'working tree differs from the commit in 1 file');
  assert.equal(worktreeText(null), 'no git information');
});
