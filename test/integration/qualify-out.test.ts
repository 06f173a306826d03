// `npm run qualify -- --out DIR` refuses a folder it did not make (issue 11): one holding files
// qualify does not write, since it replaces signoff-assets/ there recursively. Nothing is deleted,
// and the refusal is one line with exit status 2 (checked before any suite runs).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { qualifyInProcess } from '../support/qualify';

const ROOT = path.join(__dirname, '..', '..');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-qualify-out-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** `npm run qualify -- --out OUT --no-coverage MORE…` in this process (test/support/qualify.ts); as a real process with `asProcess`. */
async function qualify(out: string, ...more: string[]): Promise<{ status: number | null; stderr: string }> {
  const { status, stderr } = await qualifyInProcess(['--out', out, '--no-coverage', ...more]);
  return { status, stderr };
}

function asProcess(out: string): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, ['--require', 'tsx/cjs', 'scripts/qualify.ts', '--out', out, '--no-coverage'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stderr: result.stderr };
}

test('a folder holding files qualify did not write is refused, and nothing in it is deleted', () => {
  // As a real process: the exit status and the one line on standard error; the other refusals run in this process.
  const home = path.join(scratch, 'home');
  fs.mkdirSync(path.join(home, 'signoff-assets'), { recursive: true });
  fs.writeFileSync(path.join(home, 'notes.txt'), 'keep me');
  fs.writeFileSync(path.join(home, 'signoff-assets', 'holiday.jpg'), 'keep me too');
  const run = asProcess(home);
  assert.equal(run.status, 2);
  assert.equal(run.stderr, `qualify: --out ${home}: the folder holds files qualify did not write (notes.txt, signoff-assets); give a new or empty folder\n`);
  assert.deepEqual(fs.readdirSync(home).sort(), ['notes.txt', 'signoff-assets']);
  assert.deepEqual(fs.readdirSync(path.join(home, 'signoff-assets')), ['holiday.jpg']);
});

test('a file given as --out, and an unknown option, are refused in one line', async () => {
  const file = path.join(scratch, 'a-file');
  fs.writeFileSync(file, 'x');
  assert.deepEqual(await qualify(file), { status: 2, stderr: `qualify: --out ${file}: exists and is not a folder\n` });
  const unknown = await qualify(path.join(scratch, 'new'), '--colour');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /^qualify: unknown option "--colour" \(options: --features/);
  assert.equal(fs.existsSync(path.join(scratch, 'new')), false);
});

test('an --out folder that cannot be made is refused at once in one line (no recursive mkdir spinning under /proc)', async () => {
  const run = await qualify('/proc/kvqual-no-such/out');
  assert.deepEqual(run, { status: 2, stderr: 'qualify: --out /proc/kvqual-no-such/out: cannot make the folder /proc/kvqual-no-such (ENOENT)\n' });
});

test('--help prints the options and exits 0, running nothing', async () => {
  const result = await qualifyInProcess(['--help']);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /^usage: npm run qualify -- \[options\]\n/);
  for (const option of ['--features', '--requirements', '--out', '--campaign', '--baseline', '--no-coverage', '--fuzz-runs', '--shard', '--merge']) assert.match(result.stdout, new RegExp(`\\n  ${option} `), option);
});

/** Processes whose command line names `text` (Linux /proc). */
function processesNaming(text: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('stopped by SIGTERM, qualify stops the suite runs it started and exits 143, leaving no sign-off', { skip: !fs.existsSync('/proc/self/cmdline') && 'no /proc here' }, async () => {
  const out = path.join(scratch, 'stopped');
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'scripts/qualify.ts', '--out', out, '--no-coverage', '--fuzz-runs', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // The suite runs name the run folder under --out on their command lines, relative to the repository
  // (one at least is running once the first starts): the scratch folder's unique name and the folder below it.
  const runFolder = `${path.basename(scratch)}/stopped/`;
  const deadline = Date.now() + 120_000;
  while (processesNaming(runFolder).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(processesNaming(runFolder).length > 0, `a suite run started: ${stderr}`);
  child.kill('SIGTERM');
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  assert.equal(status, 143, stderr);
  assert.match(stderr, /qualify: stopped by SIGTERM; the last published sign-off is unchanged\n$/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(processesNaming(runFolder), [], 'no suite run is left running');
  assert.equal(fs.existsSync(path.join(out, 'signoff.md')), false);
});

test('a folder given as --baseline is refused as not a file, in one line', async () => {
  const run = await qualify(path.join(scratch, 'with-baseline'), '--baseline', scratch);
  assert.deepEqual(run, { status: 2, stderr: `qualify: --baseline ${scratch}: not a file (give an earlier signoff.json)\n` });
});

test('an --out folder that cannot be written (a read-only file system) is refused at once in one line', async (t) => {
  const readOnly = path.join(scratch, 'read-only');
  fs.mkdirSync(readOnly);
  // A read-only mount refuses even root; where mounting is not allowed, a folder without write permission does (for others).
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', readOnly]).status === 0;
  if (!mounted) {
    fs.chmodSync(readOnly, 0o555);
    if (process.getuid?.() === 0) return t.skip('root, and no read-only mount allowed here');
  }
  try {
    const run = await qualify(readOnly);
    assert.equal(run.status, 2);
    assert.match(run.stderr, new RegExp(`^qualify: --out ${readOnly}: cannot write in it \\((EROFS|EACCES)\\); give a folder qualify may write\\n$`));
  } finally {
    if (mounted) spawnSync('umount', [readOnly]);
  }
});

test('a standard output that cannot be written (a full disk) is said on standard error; qualify goes on and exits with its own status, not a stack and exit 1', { skip: !fs.existsSync('/dev/full') && 'no /dev/full here' }, () => {
  const full = fs.openSync('/dev/full', 'w');
  try {
    const result = spawnSync(process.execPath, ['--require', 'tsx/cjs', 'scripts/qualify.ts', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000, stdio: ['ignore', full, 'pipe'] });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, 'qualify: standard output: cannot write it (no space left on the device); what was printed is incomplete\n');
  } finally {
    fs.closeSync(full);
  }
});

test('the --out folder removed while the suite runs: qualify publishes nothing and exits 2 saying so (not a false NOT QUALIFIED)', async () => {
  const out = path.join(scratch, 'removed');
  const fixture = path.join('test', 'fixtures', 'signoff');
  // In this process: the run goes on (its suite runs are processes) while this test removes its folder.
  const running = qualifyInProcess(['--out', out, '--no-coverage', '--fuzz-runs', '0', '--features', path.join(fixture, 'features'), '--requirements', path.join(fixture, 'requirements.yaml')]);
  const runs = path.join(out, '.signoff-runs');
  const deadline = Date.now() + 60_000;
  while (!(fs.existsSync(runs) && fs.readdirSync(runs).length > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  fs.rmSync(out, { recursive: true, force: true });
  const { status, stderr } = await running;
  assert.equal(status, 2, stderr);
  assert.match(stderr, /^qualify could not complete: --out .*removed: the run's folder \.signoff-runs\/run-\d+-\d+-[0-9a-f]+ was removed while the suite ran, with its reports; nothing was published\n$/m);
  assert.equal(fs.existsSync(path.join(out, 'signoff.md')), false, 'no sign-off is published');
});
