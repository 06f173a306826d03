// Tests of how kvqual reads the files it is given (src/inputFiles.ts and its users): a byte-order
// mark is accepted at the start of a config, a trace and an event log alike; lines stream with a
// length limit; only regular files are read; JSON errors never quote the file; hash ids above
// 2^53 are refused with file, line and field instead of collapsing into one; outputs are written
// all or nothing; and docs/cli.md lists every documented limit.
import { test, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
// The module object itself (the namespace above reads through it), whose writeSync a test replaces.
import nodeFs from 'node:fs';
import * as os from 'node:os';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileLines, InputFileError, jsonSyntaxProblem, printable, textLines } from '../../src/inputFiles';
import { MooncakeTraceError, parseMooncakeTrace } from '../../src/config/mooncake';
import { AgenticTraceError, parseAgenticTrace } from '../../src/agentic/trace';
import { runCli } from '../../src/cli/main';
import type { CliIo } from '../../src/cli/io';
import { planOutputs, writeOutputs, OutputError } from '../../src/cli/outputs';
import { LIMITS, limitText } from '../../src/limits';
import { TraceLineError } from '../../src/traceLineError';
import { ROOT } from '../support/paths';
import { ownerTag, pidNamespace } from '../../src/processes';

const BOM = '\uFEFF';
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-input-files-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

function kvqual(args: string[], cwd = scratch): { status: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd };
  return { status: runCli(args, io), stdout, stderr };
}

function write(name: string, text: string): string {
  const file = path.join(scratch, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

const CLUSTER = 'cluster:\n  workers:\n    - role: aggregated\n      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }\n';
const MOONCAKE_ROW = (timestamp: number, ids: string) => `{"timestamp": ${timestamp}, "input_length": 8, "output_length": 2, "hash_ids": [${ids}]}`;
const OPTIONS = { trace_block_size: 4, max_requests: null, time_scale: 1, first_ordinal: 0 };

test('a byte-order mark is accepted at the start of a config, a Mooncake trace, an agentic trace and an event log', () => {
  write('bom/mooncake.jsonl', `${BOM}${MOONCAKE_ROW(0, '1, 2')}\n`);
  write('bom/mooncake.yaml', `${BOM}${CLUSTER}workload:\n  trace_block_size: 4\n  mooncake: { trace: mooncake.jsonl }\n`);
  const agentic = fs.readFileSync(path.join(ROOT, 'examples', 'agentic', 'coding-agent.jsonl'), 'utf8');
  write('bom/agentic.jsonl', `${BOM}${agentic}`);
  write('bom/agentic.yaml', `${BOM}${CLUSTER}workload:\n  agentic: { trace: agentic.jsonl }\n`);
  write('bom/events.jsonl', `${BOM}{"worker_id": 1, "event": {"event_id": 0, "data": "cleared"}}\n`);
  for (const config of ['bom/mooncake.yaml', 'bom/agentic.yaml']) {
    const run = kvqual(['replay', config]);
    assert.equal(run.status, 0, `${config}: ${run.stderr}`);
  }
  const check = kvqual(['check-events', 'bom/events.jsonl']);
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stdout, /clean — 1 batch\(es\)/);
  // Only at the very start: a mark inside the file is a character like any other.
  assert.throws(() => parseMooncakeTrace(`${MOONCAKE_ROW(0, '1, 2')}\n${BOM}${MOONCAKE_ROW(1, '1, 2')}\n`, 't.jsonl', OPTIONS), /t\.jsonl: line 2: not valid JSON/);
});

test('file lines: CRLF or LF, a last line without a break, numbers counted over blank lines', () => {
  const file = write('lines/crlf.txt', 'a\r\n\r\nb\nc');
  assert.deepEqual([...fileLines(file, 'crlf.txt', 'crlf.txt')], [
    { text: 'a', number: 1 },
    { text: '', number: 2 },
    { text: 'b', number: 3 },
    { text: 'c', number: 4 },
  ]);
  assert.deepEqual([...textLines('a\r\nb', 'x')].map((line) => line.text), ['a', 'b']);
});

test('a line over the limit is an error naming its number, also when it spans read chunks', () => {
  const file = write('lines/long.txt', `short\n${'x'.repeat(3 * 1024 * 1024)}\nafter\n`);
  const lines = fileLines(file, 'long.txt', 'long.txt', 2 * 1024 * 1024);
  assert.throws(() => [...lines], (error: unknown) => error instanceof TraceLineError && error.line === 2 && /longer than the limit of 2,097,152 characters/.test(error.message));
  assert.throws(() => [...textLines(`a\n${'x'.repeat(11)}`, 'mem', 10)], /mem: line 2: the line is longer than the limit of 10 characters/);
});

test('only regular files are read: a folder, a device and a missing file each get one message', () => {
  assert.throws(() => fileLines(scratch, 'the folder', 'the folder'), (error: unknown) => error instanceof InputFileError && /the folder: it is a folder, not a regular file/.test(error.message));
  assert.throws(() => fileLines('/dev/zero', '/dev/zero', '/dev/zero'), /it is a character device, not a regular file/);
  assert.throws(() => fileLines(path.join(scratch, 'none'), 'none', 'none'), /cannot read none: no such file/);
});

test('a JSON error names the character and column, never the text around it', () => {
  const secret = 'root:x:0:0:root:/root:/bin/bash';
  assert.equal(jsonSyntaxProblem(secret), "not valid JSON: JSON value expected but got 'r' at column 1");
  assert.equal(jsonSyntaxProblem('\u001b[2J'), "not valid JSON: JSON value expected but got '\\u001b' at column 1");
  assert.equal(printable('a\u0007b\u202Ec'), 'a\\u0007b\\u202ec');
  assert.equal(printable('x'.repeat(50)).length, 41);
});

test('two hash ids that differ only above 2^53 are refused in configs and Mooncake traces with file, line and field, kept apart in agentic traces, never merged', () => {
  // 9007199254740993 and 9007199254740992 are the same JavaScript number: read as numbers, the two
  // requests below would share a cached block they do not share.
  const mooncake = `${MOONCAKE_ROW(0, '1, 9007199254740992')}\n${MOONCAKE_ROW(1, '1, 9007199254740993')}\n`;
  assert.throws(
    () => parseMooncakeTrace(mooncake, 'big-ids.jsonl', OPTIONS),
    (error: unknown) =>
      error instanceof MooncakeTraceError &&
      error.message === 'big-ids.jsonl: line 1: hash_ids[1]: 9007199254740992 is above 2^53 − 1 (9007199254740991), the largest hash id kvqual keeps exact',
  );
  const second = `${MOONCAKE_ROW(0, '1, 2')}\n${MOONCAKE_ROW(1, '1, 9007199254740993')}\n`;
  assert.throws(() => parseMooncakeTrace(second, 'big-ids.jsonl', OPTIONS), /big-ids\.jsonl: line 2: hash_ids\[1\]: 9007199254740993 is above 2\^53 − 1/);
  // An agentic trace may hold 64-bit ids (AISimulate writes them): read exactly, they stay apart.
  const header = '{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4}';
  const agenticRow = (id: string, ids: string) => `{"request_id":"${id}","play_id":"p","session_id":"s","input_length":8,"output_length":2,"hash_ids":[${ids}]}`;
  const agentic = parseAgenticTrace(`${header}\n${agenticRow('a', '1, 9007199254740992')}\n${agenticRow('b', '1, 9007199254740993')}\n`, 'agentic.jsonl');
  const [a, b] = agentic.plays[0].nodes.map((node) => node.hash_ids);
  assert.equal(a[0], b[0]);
  assert.notEqual(a[1], b[1]);
  assert.throws(
    () => parseAgenticTrace(`${header}\n${agenticRow('a', '1, 18446744073709551616')}\n`, 'agentic.jsonl'),
    (error: unknown) => error instanceof AgenticTraceError && /^agentic\.jsonl: line 2: hash_ids\[1\]: 18446744073709551616 is above 2\^64 − 1/.test(error.message),
  );
  // The largest exact id is accepted, and stays distinct from its neighbour.
  const edge = parseMooncakeTrace(`${MOONCAKE_ROW(0, '1, 9007199254740991')}\n${MOONCAKE_ROW(1, '1, 9007199254740990')}\n`, 'edge.jsonl', OPTIONS);
  assert.notDeepEqual(edge[0].prompt.blockHashes(4), edge[1].prompt.blockHashes(4));
});

test('a Mooncake trace in time order is read; one that goes back is refused, naming both lines', () => {
  assert.equal(parseMooncakeTrace(`${MOONCAKE_ROW(0, '1, 2')}\n${MOONCAKE_ROW(0, '1, 2')}\n${MOONCAKE_ROW(3, '1, 2')}\n`, 't', OPTIONS).length, 3);
  assert.throws(() => parseMooncakeTrace(`${MOONCAKE_ROW(7, '1, 2')}\n\n${MOONCAKE_ROW(3, '1, 2')}\n`, 't', OPTIONS), /t: line 3: timestamp 3 is before 7 on line 1/);
});

test('outputs are all or nothing: when the second cannot be written, the first is not left behind', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'outputs-'));
  const outputs = planOutputs(
    [
      { option: '--out', file: 'report.json' },
      { option: '--events-out', file: 'events.jsonl' },
    ],
    dir,
    [],
  );
  // Occupy the second output's temporary name so that writing it fails.
  fs.mkdirSync(path.join(dir, `.events.jsonl.kvqual-${ownerTag()}.tmp`));
  assert.throws(() => writeOutputs(outputs.map((output) => ({ output, text: 'x' }))), (error: unknown) => error instanceof OutputError && /--events-out events\.jsonl: cannot write it \(EEXIST\); nothing was written/.test(error.message));
  assert.deepEqual(fs.readdirSync(dir), [`.events.jsonl.kvqual-${ownerTag()}.tmp`]);
  fs.rmdirSync(path.join(dir, `.events.jsonl.kvqual-${ownerTag()}.tmp`));
  writeOutputs(outputs.map((output) => ({ output, text: output.option })));
  assert.deepEqual(fs.readdirSync(dir).sort(), ['events.jsonl', 'report.json']);
  assert.equal(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'), '--out');
});

/**
 * fs.writeSync as a disk with `room` bytes left sees it: each call writes at most `per_call` bytes
 * of what fits and says how many; once the disk is full a write writes nothing and returns 0 (as
 * write(2) does for the bytes of a short write) or throws ENOSPC (`throwWhenFull`).
 */
function fillingDisk(room: number, per_call: number, throwWhenFull: boolean) {
  const real = nodeFs.writeSync;
  let left = room;
  return mock.method(nodeFs, 'writeSync', (fd: number, buffer: Buffer, offset: number, length: number) => {
    const wrote = Math.min(length, per_call, left);
    if (wrote === 0 && throwWhenFull) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    left -= wrote;
    return wrote === 0 ? 0 : real(fd, buffer, offset, wrote);
  });
}

test('a write the disk cuts short is written again until it is whole; a disk that fills up fails the outputs, leaving nothing', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'full-disk-'));
  const [report, events] = planOutputs(
    [
      { option: '--out', file: 'report.json' },
      { option: '--requests-out', file: 'requests.jsonl' },
    ],
    dir,
    [],
  );
  const text = 'x'.repeat(50_000);
  const shortWrites = fillingDisk(Infinity, 4096, false);
  try {
    writeOutputs([{ output: report, text }, { output: events, write: (sink) => sink(text) }]);
  } finally {
    shortWrites.mock.restore();
  }
  assert.equal(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'), text, 'short writes are continued, not taken for the whole');
  assert.equal(fs.readFileSync(path.join(dir, 'requests.jsonl'), 'utf8'), text);
  for (const throwWhenFull of [false, true]) {
    for (const [at, output] of [[0, report], [1, events]] as const) {
      fs.rmSync(dir, { recursive: true });
      fs.mkdirSync(dir);
      const full = fillingDisk(12_288, 1 << 20, throwWhenFull);
      const written = [{ output: report, text }, { output: events, write: (sink: (piece: string) => void) => sink(text) }];
      try {
        assert.throws(
          () => writeOutputs(at === 0 ? written : [{ output: report, text: '{}' }, written[1]]),
          (error: unknown) => error instanceof OutputError && error.message === `${output.option} ${output.file}: cannot write it (no space left on the device); nothing was written`,
        );
      } finally {
        full.mock.restore();
      }
      assert.deepEqual(fs.readdirSync(dir), [], 'no output and no temporary file is left');
    }
  }
});

test('a key given twice on a trace line is refused, naming it; a colon after an escaped quote inside a string is not taken for a key', () => {
  const row = (extra: string) => `{"timestamp": 0, "input_length": 8, "output_length": 2, "hash_ids": [1, 2]${extra}}\n`;
  assert.throws(() => parseMooncakeTrace(row(', "output_length": 900'), 't.jsonl', OPTIONS), /t\.jsonl: line 1: the key "output_length" appears twice on the line: give each field once/);
  assert.throws(() => parseMooncakeTrace(row(', "x": {"a": 1, "a": 2}'), 't.jsonl', OPTIONS), /line 1: the key "a" appears twice/, 'in a nested object too');
  assert.equal(parseMooncakeTrace(row(', "note": "a\\":b", "more": [{"a": 1}, {"a": 2}]'), 't.jsonl', OPTIONS).length, 1, 'equal keys in two objects, and a quoted colon, are fine');
});

test('an output named by a symbolic link is written to the link\'s target, and the link stays (a dangling one\'s target is made)', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'linked-'));
  fs.writeFileSync(path.join(dir, 'target.json'), 'old');
  fs.symlinkSync('target.json', path.join(dir, 'link.json'));
  fs.symlinkSync('later.json', path.join(dir, 'dangling.json'));
  const outputs = planOutputs([{ option: '--out', file: 'link.json' }, { option: '--events-out', file: 'dangling.json' }], dir, []);
  writeOutputs(outputs.map((output) => ({ output, text: output.option })));
  assert.equal(fs.lstatSync(path.join(dir, 'link.json')).isSymbolicLink(), true, 'the link stays a link');
  assert.equal(fs.readFileSync(path.join(dir, 'target.json'), 'utf8'), '--out', 'the target holds the output');
  assert.equal(fs.readFileSync(path.join(dir, 'later.json'), 'utf8'), '--events-out', "the dangling link's target is made");
  assert.deepEqual(fs.readdirSync(dir).sort(), ['dangling.json', 'later.json', 'link.json', 'target.json']);
});

test('the temporary files a killed run left beside an output are removed by the next run of it; a live process\'s, or another pid namespace\'s, are kept', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'killed-'));
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const elsewhere = pidNamespace() === 'abcdef01' ? 'abcdef02' : 'abcdef01';
  const removed = [`.report.json.kvqual-${gone}-${pidNamespace()}.tmp`, `.report.json.kvqual-${gone}.tmp`];
  // A container sharing the folder: its pid means nothing here, so its file may be live.
  const kept = ['.report.json.kvqual-1.tmp', `.report.json.kvqual-${gone}-${elsewhere}.tmp`, `.other.json.kvqual-${gone}.tmp`, '.report.json.kvqual-x.tmp'];
  for (const name of [...removed, ...kept]) fs.writeFileSync(path.join(dir, name), 'half');
  planOutputs([{ option: '--out', file: 'report.json' }], dir, []);
  assert.deepEqual(fs.readdirSync(dir).sort(), kept.sort(), 'only the gone process\'s temporary files of this output are removed');
});

test('docs/cli.md lists every documented limit with its value', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8');
  for (const [name, value] of Object.entries(LIMITS)) {
    assert.ok(doc.includes(limitText(value)), `docs/cli.md does not give the limit ${name} = ${limitText(value)}`);
  }
});

test('an agentic 64-bit hash id may be written in any JSON number form of a whole number, and is read exactly', () => {
  const header = '{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4}';
  const ids = (written: string) => {
    const row = `{"request_id":"a","play_id":"p","session_id":"s","input_length":8,"output_length":1,"hash_ids":[18446744073709551615,${written}]}`;
    return parseAgenticTrace(`${header}\n${row}\n`, 't.jsonl').plays[0].nodes[0].hash_ids;
  };
  assert.deepEqual(ids('5.0'), [-1, 5]);
  assert.deepEqual(ids('0e7'), [-1, 0]);
  assert.deepEqual(ids('1.8446744073709551615e19'), [-1, -1], 'the same id written two ways is one id');
  assert.deepEqual(ids('9.007199254740993e15'), [-1, -2], '2^53 + 1 is not 2^53');
  assert.throws(() => ids('1.5'), /line 2: hash_ids\[1\] must be a whole number ≥ 0, got 1\.5/);
  assert.throws(() => ids('-3'), /line 2: hash_ids\[1\] must be a whole number ≥ 0, got -3/);
  assert.throws(() => ids('1e999999999'), /line 2: hash_ids\[1\]: 1e999999999 is above 2\^64 − 1/);
});
