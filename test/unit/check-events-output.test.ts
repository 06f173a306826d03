// Tests of what `kvqual check-events` writes for a log with many ranks and for a log with nothing
// in it: a clean log's JSON and text summaries reach standard output in pieces (never one string:
// millions of ranks would pass V8's longest string), and a log without a single event is bad
// input (exit 2, one line naming the file), never a clean log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkEventsFile } from '../../src/cli/checkEvents';
import type { CliIo } from '../../src/cli/io';
import { scratchFolder } from '../support/scratch';

const scratch = scratchFolder('check-events');

function capture(): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), cwd: scratch }, out, err };
}

/** A clean log of `ranks` workers, one stored block each. */
function manyRanks(ranks: number): string {
  const file = path.join(scratch, `ranks-${ranks}.jsonl`);
  const lines: string[] = [];
  for (let worker = 0; worker < ranks; worker++) {
    lines.push(`{"worker_id": ${worker}, "timestamp_ms": 1, "event": {"event_id": 0, "data": {"stored": {"parent_hash": null, "start_position": 0, "blocks": [{"block_hash": ${worker + 1}, "tokens_hash": 1}]}}}}`);
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

test('a clean log of many ranks (the most a log may have) is written in pieces, as JSON and as text, and reads back whole', () => {
  const file = manyRanks(4_096);
  const json = capture();
  assert.equal(checkEventsFile(file, { json: true }, json.io), 0);
  assert.ok(json.out.length > 10, `JSON written in ${json.out.length} piece(s)`);
  assert.ok(Math.max(...json.out.map((piece) => piece.length)) <= 256 * 1024, 'no piece longer than a few 64 KB');
  const report = JSON.parse(json.out.join(''));
  assert.deepEqual([report.status, report.events, report.ranks.length, report.ranks[4_095].worker_id], ['clean', 4_096, 4_096, 4_095]);
  assert.ok(json.out.join('').endsWith('}\n'));
  const text = capture();
  assert.equal(checkEventsFile(file, { json: false }, text.io), 0);
  assert.ok(text.out.length > 10, `text written in ${text.out.length} piece(s)`);
  assert.ok(Math.max(...text.out.map((piece) => piece.length)) <= 256 * 1024);
  const lines = text.out.join('').split('\n');
  assert.match(lines[0], /: clean — 4096 batch\(es\), 4096 event\(s\) from 4096 rank\(s\)$/);
  assert.equal(lines.length, 4_096 + 3);
});

test('a log with no event (empty, blank lines, or only empty batches) exits 2 with one line naming the file, as text and as JSON', () => {
  const logs: [string, string][] = [
    ['empty.jsonl', ''],
    ['blank.jsonl', '  \n\n\t\n'],
    ['empty-batch.jsonl', '{"worker_id": 1, "timestamp_ms": 1, "events": []}\n'],
  ];
  for (const [name, content] of logs) {
    fs.writeFileSync(path.join(scratch, name), content);
    const text = capture();
    assert.equal(checkEventsFile(name, { json: false }, text.io), 2, name);
    assert.deepEqual(text.out, [], name);
    assert.equal(text.err.length, 1, name);
    assert.match(text.err[0], new RegExp(`^kvqual check-events: ${name.replace('.', '\\.')}: the event log holds no event \\(\\d batch\\(es\\)\\); a capture that wrote nothing cannot be checked\\n$`));
    const json = capture();
    assert.equal(checkEventsFile(name, { json: true }, json.io), 2, name);
    assert.equal(JSON.parse(json.out.join('')).status, 'empty', name);
  }
});
