// Tests of `kvqual check-events …` on the examples: the exit status (0 clean, 1 violation, 2 usage /
// unreadable / malformed) and what it prints. Most cases run the command line in this process; a
// clean log and an unknown command also go through a real `node bin/kvqual.js` process, and so do
// the cases about the process itself (a full disk: exit 2; a reader that leaves early: a
// violation's exit 1; a removed working folder; a temporary folder that cannot hold tsx's cache).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { terminalSafe } from '../../src/cli/io';
import * as path from 'node:path';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { spawn, spawnSync } from 'node:child_process';
import { kvqualInProcess, kvqualProcess } from '../support/cli';
import { ROOT } from '../support/paths';

const kvqual = (...args: string[]) => kvqualInProcess(args);
const kvqualAsProcess = (...args: string[]) => kvqualProcess(args);

const example = (name: string): string => path.join('examples', 'events', name);

test('a clean log exits 0 with a per-rank summary', () => {
  const run = kvqualAsProcess('check-events', example('clean.jsonl'));
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^examples\/events\/clean\.jsonl: clean — 9 batch\(es\), 11 event\(s\) from 3 rank\(s\)$/m);
  assert.match(run.stdout, /timestamps 10000000 ns to 20000000 ns \(span 10 ms\)/);
  assert.match(run.stdout, /worker 1 dp rank 1: 3 batch\(es\), 3 event\(s\), ids 0 to 2; resident at the end: Device 1, HostPinned 0 block\(s\) \(at most 1 and 0 at once\)/);
  assert.match(run.stdout, /worker 1 dp rank 0: .*resident at the end: Device 1, HostPinned 1 block\(s\) \(at most 2 and 2 at once\)/);
  assert.equal(run.stderr, '');
});

test('each violation example exits 1 and names the line, worker, dp rank, event and tier', () => {
  const expected: [string, RegExp][] = [
    ['duplicate_store.jsonl', /line 3: .*duplicate Stored.*worker 1, dp rank 0, event 2, tier HostPinned, block 9007199254740993/],
    ['unknown_removal.jsonl', /line 3: .*Removed of a block.*worker 1, dp rank 0, event 2, tier Device, block 18446744073709551557/],
    ['event_id_gap.jsonl', /line 4: .*worker 1, dp rank 0, event 3 \(expected event 2\), tier Device.*: lost/],
    ['reordered_pair.jsonl', /line 2: .*worker 1, dp rank 0, event 2 \(expected event 1\), tier Device.*: reordered/],
    ['broken_chain.jsonl', /line 2: .*Stored whose parent block the rank does not hold in that tier.*worker 1, dp rank 0, event 1, tier HostPinned, block 101/],
    ['broken_chain_moved_block.jsonl', /line 2: .*Stored that puts a block some rank holds at another position.*worker 0, dp rank 0, event 1, tier HostPinned, block 13/],
    ['timestamps_backwards.jsonl', /line 3: timestamps go backwards — worker 1, dp rank 0: stamped 9500000 ns/],
  ];
  for (const [name, message] of expected) {
    const run = kvqual('check-events', example(name));
    assert.equal(run.status, 1, `${name}: ${run.stdout}${run.stderr}`);
    assert.match(run.stdout, message, name);
  }
});

test('a malformed line exits 2 with line number and field path on stderr', () => {
  const run = kvqual('check-events', example('malformed.jsonl'));
  assert.equal(run.status, 2);
  assert.equal(
    run.stderr,
    'kvqual check-events: examples/events/malformed.jsonl: line 3: events[1].data.stored.blocks[0].block_hash: ' +
      'expected an unsigned 64-bit integer, got "abc"\n',
  );
  assert.equal(run.stdout, '');
});

test('an unreadable file, a missing argument or an unknown command exits 2', () => {
  const missingFile = kvqual('check-events', example('no-such-log.jsonl'));
  assert.equal(missingFile.status, 2);
  assert.match(missingFile.stderr, /^kvqual check-events: cannot read examples\/events\/no-such-log\.jsonl: no such file$/m);
  const noArgument = kvqual('check-events');
  assert.equal(noArgument.status, 2);
  assert.match(noArgument.stderr, /missing required argument 'file'/);
  assert.equal(kvqualAsProcess('no-such-command').status, 2);
  assert.equal(kvqual().status, 2);
  assert.equal(kvqual('check-events', '--help').status, 0);
});

test('--json prints the report as JSON with u64 values as decimal strings', () => {
  const violation = kvqual('check-events', '--json', example('unknown_removal.jsonl'));
  assert.equal(violation.status, 1);
  const report = JSON.parse(violation.stdout);
  assert.equal(report.status, 'violation');
  assert.equal(report.file, example('unknown_removal.jsonl'));
  assert.deepEqual(
    [report.violation.violation, report.violation.line_number, report.violation.block_hash],
    ['unknown-removal', 3, '18446744073709551557'],
  );
  const clean = JSON.parse(kvqual('check-events', example('clean.jsonl'), '--json').stdout);
  assert.deepEqual([clean.status, clean.span_ns, clean.ranks.length], ['clean', '10000000', 3]);
  const malformed = kvqual('check-events', '--json', example('malformed.jsonl'));
  assert.equal(malformed.status, 2);
  assert.deepEqual(JSON.parse(malformed.stdout).field_path, 'events[1].data.stored.blocks[0].block_hash');
});

test('what kvqual prints is terminal-safe: control characters but line breaks and tabs are written as \\uXXXX, which JSON reads back as the same character', () => {
  assert.equal(terminalSafe('failed: \u001b[31mRED\u001b]0;pwned\u0007: needs 9 G1 blocks\n\tnext'), 'failed: \\u001b[31mRED\\u001b]0;pwned\\u0007: needs 9 G1 blocks\n\tnext');
  assert.equal(terminalSafe('ms "1\u0000" is not a number'), 'ms "1\\u0000" is not a number');
  const json = JSON.stringify({ id: 'x\u0085\u007f\u001b' });
  assert.deepEqual(JSON.parse(terminalSafe(json)), { id: 'x\u0085\u007f\u001b' });
  assert.equal(terminalSafe('plain text, “quotes” and … stay'), 'plain text, “quotes” and … stay');
});

test('kvqual runs, with the same results, when the temporary folder cannot hold a cache (TMPDIR a file, or /proc)', () => {
  // tsx keeps its transform cache there: it crashed with Node's stack and exit 1, and spun for ever on /proc.
  // Through tsx (KVQUAL_TSX=1), even where a compiled build/cli is current (bin/compiled.js), which loads no tsx.
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-tmpdir-'));
  try {
    const file = path.join(scratch, 'a-file');
    fs.writeFileSync(file, '');
    const places = [file, ...(fs.existsSync('/proc/self') ? ['/proc'] : [])];
    const expected = kvqualInProcess(['check-events', example('clean.jsonl')]);
    for (const tmpdir of places) {
      const run = kvqualProcess(['check-events', example('clean.jsonl')], undefined, { TMPDIR: tmpdir, TSX_DISABLE_CACHE: '', KVQUAL_TSX: '1' });
      assert.deepEqual({ status: run.status, stdout: run.stdout, stderr: run.stderr }, { status: 0, stdout: expected.stdout, stderr: '' }, `TMPDIR=${tmpdir}`);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

const FULL_DEVICE = '/dev/full';
const withFullDevice = fs.existsSync(FULL_DEVICE) ? {} : { skip: `${FULL_DEVICE} is not on this machine` };

test('a standard output that cannot be written (a full disk) is exit 2 with one line, not a stack and exit 1; the work is done all the same', withFullDevice, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-full-'));
  const full = fs.openSync(FULL_DEVICE, 'w');
  try {
    const run = (args: string[]) => spawnSync(process.execPath, [path.join(ROOT, 'bin', 'kvqual.js'), ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', full, 'pipe'] });
    // A clean log: exit 1 would read as "the log breaks a rule".
    const clean = run(['check-events', example('clean.jsonl')]);
    assert.equal(clean.status, 2, clean.stderr);
    assert.equal(clean.stderr, 'kvqual: standard output: cannot write it (no space left on the device); what was printed is incomplete\n');
    const report = path.join(scratch, 'report.json');
    const replay = run(['replay', path.join('examples', 'configs', 'lagged-events.yaml'), '--out', report]);
    assert.equal(replay.status, 2, replay.stderr);
    assert.match(replay.stderr, /^kvqual: standard output: cannot write it \(no space left on the device\)/);
    assert.ok(JSON.parse(fs.readFileSync(report, 'utf8')).digest, 'the report is written whole');
  } finally {
    fs.closeSync(full);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test('a reader that leaves early (`kvqual … | head`) ends the command quietly with the status of its work', async () => {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'kvqual.js'), 'check-events', example('duplicate_store.jsonl'), '--json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.once('data', () => child.stdout.destroy());
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  assert.equal(status, 1, `the violation's status, whatever was left unread: ${stderr}`);
  assert.doesNotMatch(stderr, /EPIPE|at /);
});

test('a working folder removed under the shell is one line and exit 2, not a stack and exit 1', { skip: !fs.existsSync('/bin/sh') && 'no /bin/sh here' }, () => {
  const gone = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-gone-'));
  const script = `cd "$1" && rmdir "$1" && exec "$2" "$3" --version`;
  const run = spawnSync('/bin/sh', ['-c', script, 'sh', gone, process.execPath, path.join(ROOT, 'bin', 'kvqual.js')], { encoding: 'utf8' });
  assert.deepEqual({ status: run.status, stdout: run.stdout, stderr: run.stderr }, { status: 2, stdout: '', stderr: 'kvqual: the working folder cannot be read (it was removed); change to an existing folder\n' });
});
