// `kvqual qualify`: the sign-off as a kvqual command. Its help lists every option `npm run qualify`
// takes (the driver's usage is the reference, so the two cannot drift); a misspelt command or
// option gets a did-you-mean; the options reach the sign-off as `npm run qualify -- …` takes them
// and its exit status is the command's; through bin/kvqual.js it runs scripts/qualify.ts (a bad
// option there is the driver's one-line refusal, exit 2, before anything runs). A whole sign-off
// through `kvqual qualify` is left to the sign-off's own tests (npm run qualify runs the same code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCliAsync } from '../../src/cli/main';
import { QUALIFY_OPTIONS } from '../../src/cli/qualify';
import { QUALIFY_USAGE } from '../../src/signoff/driver';
import { kvqualInProcess, kvqualProcess } from '../support/cli';
import { ROOT } from '../support/paths';

/** `kvqual ARGS` in this process with a stand-in for the sign-off that records what it was given and exits `status`. */
async function withStandIn(args: string[], status: number): Promise<{ status: number; given: string[][]; stderr: string }> {
  const given: string[][] = [];
  let stderr = '';
  const qualify = async (argv: string[]) => {
    given.push(argv);
    return status;
  };
  const code = await runCliAsync(args, { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: ROOT, qualify });
  return { status: code, given, stderr };
}

const longFlag = (flags: string) => flags.split(' ')[0];

test('kvqual qualify --help lists every option of npm run qualify, the exit statuses, and runs nothing', async () => {
  const driverFlags = [...QUALIFY_USAGE.matchAll(/^ {2}(--[a-z-]+)/gm)].map((match) => match[1]);
  assert.ok(driverFlags.length >= 9, QUALIFY_USAGE);
  assert.deepEqual(QUALIFY_OPTIONS.map((option) => longFlag(option.flags)).sort(), [...driverFlags].sort(), 'kvqual qualify takes exactly the options of npm run qualify');
  const run = await withStandIn(['qualify', '--help'], 0);
  assert.equal(run.status, 0);
  assert.deepEqual(run.given, [], 'help runs no sign-off');
  const help = kvqualInProcess(['qualify', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: kvqual qualify \[options\]\n/);
  for (const flag of driverFlags) assert.match(help.stdout, new RegExp(`\\n  ${flag} `), flag);
  assert.match(help.stdout, /Exit status: 0 QUALIFIED, 1 NOT QUALIFIED, 2 a usage or input error/);
  assert.match(kvqualInProcess(['--help']).stdout, /\n {2}qualify \[options\] +run the qualification and publish the sign-off/);
});

test('a misspelt command or option gets a did-you-mean, exit 2, and runs nothing', async () => {
  const command = await withStandIn(['qualfy'], 0);
  assert.equal(command.status, 2);
  assert.equal(command.stderr, "kvqual: unknown command 'qualfy'; did you mean qualify? (see kvqual --help)\n");
  const option = await withStandIn(['qualify', '--ot', 'reports'], 0);
  assert.equal(option.status, 2);
  assert.equal(option.stderr, "kvqual qualify: unknown option '--ot'; did you mean --out? (see kvqual qualify --help)\n");
  const missing = await withStandIn(['qualify', '--out'], 0);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^kvqual qualify: option '--out <dir>' argument missing/);
  assert.deepEqual([...command.given, ...option.given, ...missing.given], []);
});

test('the options reach the sign-off as npm run qualify takes them, and its status is the exit status', async () => {
  const none = await withStandIn(['qualify'], 0);
  assert.deepEqual([none.status, none.given], [0, [[]]], 'no option given: the driver keeps its defaults');
  const all = await withStandIn(
    ['qualify', '--shard', '2/3', '--fuzz-runs', '5', '--no-coverage', '--out=shard-2', '--features', 'features/ux', '--requirements', 'r.yaml'],
    1,
  );
  assert.equal(all.status, 1, 'NOT QUALIFIED');
  assert.deepEqual(all.given, [['--features', 'features/ux', '--requirements', 'r.yaml', '--out', 'shard-2', '--no-coverage', '--fuzz-runs', '5', '--shard', '2/3']]);
  const merge = await withStandIn(['qualify', '--merge', 'a', 'b', '--campaign', 'nightly', '--merge', 'c', '--baseline', 'old/signoff.json'], 2);
  assert.equal(merge.status, 2);
  assert.deepEqual(merge.given, [['--campaign', 'nightly', '--baseline', 'old/signoff.json', '--merge', 'a', 'b', 'c']]);
});

test('without a sign-off runner (src/ alone, no bin/kvqual.js) qualify says so and exits 2', async () => {
  let stderr = '';
  const status = await runCliAsync(['qualify'], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: ROOT });
  assert.equal(status, 2);
  assert.match(stderr, /^kvqual qualify: the sign-off cannot run here .*npm run qualify/);
});

test('through bin/kvqual.js, qualify is scripts/qualify.ts: a bad option is its one-line refusal, exit 2, before anything runs', () => {
  const bad = kvqualProcess(['qualify', '--features', 'no-such-folder', '--no-coverage']);
  assert.deepEqual(bad, { status: 2, stdout: '', stderr: 'qualify: --features no-such-folder: no such folder\n' });
});
