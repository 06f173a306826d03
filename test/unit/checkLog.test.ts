// Unit tests of the captured-log checker (MIR-2, MIR-3 on a log): each example in
// examples/events/ gives its violation's line and named fields, or the clean summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkEventLog } from '../../src/events/checkLog';
import type { LogReport, LogViolation } from '../../src/events/checkLog';
import type { KvEvent, KvEventData, Tier } from '../../src/events/model';
import { parseWireLines, parseWireLog, WireFormatError } from '../../src/events/wire';
import { type SourceLine, textLines } from '../../src/inputFiles';
import type { LogLine } from '../../src/events/wire';
import { ROOT } from '../support/paths';

const EXAMPLES = path.join(ROOT, 'examples', 'events');

function checkExample(name: string): LogReport {
  return checkEventLog(parseWireLog(fs.readFileSync(path.join(EXAMPLES, name), 'utf8')));
}

function violationOf(report: LogReport): LogViolation {
  assert.equal(report.status, 'violation', 'the log should have been rejected');
  return report.violation;
}

/** A log line built in memory: one rank's events at an optional timestamp. */
function logLine(line_number: number, dp_rank: number, timestamp_ns: bigint | null, events: [number, KvEventData, Tier?][]): LogLine {
  const built: KvEvent[] = events.map(([event_id, data, tier = 'Device']) => ({ event_id, worker_id: 1, dp_rank, tier, data }));
  return { line_number, batch: { worker_id: 1, dp_rank, timestamp_ns, events: built } };
}

const store = (hash: bigint): KvEventData => ({ type: 'Stored', parent_hash: null, start_position: null, blocks: [{ block_hash: hash, tokens_hash: hash }] });

test('the clean example: three ranks, both tiers, a batch, Cleared, big hashes', () => {
  const report = checkExample('clean.jsonl');
  assert.equal(report.status, 'clean');
  assert.equal(report.batches, 9);
  assert.equal(report.events, 11);
  assert.equal(report.first_timestamp_ns, 10_000_000n);
  assert.equal(report.last_timestamp_ns, 20_000_000n);
  assert.equal(report.span_ns, 10_000_000n);
  assert.deepEqual(
    report.ranks.map((rank) => [rank.worker_id, rank.dp_rank, rank.batches, rank.events, rank.first_event_id, rank.last_event_id, rank.resident_blocks]),
    [
      [1, 0, 3, 4, 0, 3, { Device: 1, HostPinned: 1 }],
      [1, 1, 3, 3, 0, 2, { Device: 1, HostPinned: 0 }],
      [2, 0, 3, 4, 0, 3, { Device: 1, HostPinned: 1 }],
    ],
  );
  // Rank 1/0 held both blocks of its first Stored on each tier before a Removed of one.
  assert.deepEqual(
    report.ranks.map((rank) => rank.peak_resident_blocks),
    [
      { Device: 2, HostPinned: 2 },
      { Device: 1, HostPinned: 0 },
      { Device: 1, HostPinned: 1 },
    ],
  );
  assert.deepEqual(
    report.ranks.map((rank) => [rank.first_timestamp_ns, rank.last_timestamp_ns]),
    [
      [10_000_000n, 20_000_000n],
      [11_000_000n, 16_000_000n],
      [10_500_000n, 14_999_000n],
    ],
  );
});

test('duplicate store: the second HostPinned Stored of a block, at line 3', () => {
  const report = checkExample('duplicate_store.jsonl');
  assert.deepEqual(violationOf(report), {
    violation: 'duplicate-store',
    line_number: 3,
    worker_id: 1,
    dp_rank: 0,
    event_id: 2,
    tier: 'HostPinned',
    block_hash: 9_007_199_254_740_993n,
    expected_event_id: null,
    id_gap_cause: null,
    message:
      'KV event stream rejected: duplicate Stored: the rank already holds this block in that tier — worker 1, dp rank 0, ' +
      'event 2, tier HostPinned, block 9007199254740993',
  });
  assert.equal(report.status === 'violation' && report.events_checked, 2);
});

test('unknown removal: a Removed after Cleared dropped the block (MIR-3), at line 3', () => {
  const violation = violationOf(checkExample('unknown_removal.jsonl'));
  assert.ok(violation.violation === 'unknown-removal', violation.message);
  assert.equal(violation.line_number, 3);
  assert.deepEqual([violation.worker_id, violation.dp_rank, violation.event_id], [1, 0, 2]);
  assert.equal(violation.tier, 'Device');
  assert.equal(violation.block_hash, 18_446_744_073_709_551_557n);
});

test('event-id gap: id 3 where 2 was expected and 2 never comes is a lost event, at line 4', () => {
  const violation = violationOf(checkExample('event_id_gap.jsonl'));
  assert.ok(violation.violation === 'event-id-gap');
  assert.equal(violation.line_number, 4);
  assert.deepEqual([violation.worker_id, violation.dp_rank, violation.event_id, violation.expected_event_id], [1, 0, 3, 2]);
  assert.equal(violation.tier, 'Device');
  assert.equal(violation.block_hash, 9_007_199_254_740_993n);
  assert.equal(violation.id_gap_cause, 'lost');
  assert.match(violation.message, /event 3 \(expected event 2\).*event 2 never appears in the log: lost$/);
});

test('reordered pair: id 2 arrives before 1, which comes on the next line, at line 2', () => {
  const violation = violationOf(checkExample('reordered_pair.jsonl'));
  assert.ok(violation.violation === 'event-id-gap');
  assert.equal(violation.line_number, 2);
  assert.deepEqual([violation.event_id, violation.expected_event_id, violation.tier, violation.block_hash], [2, 1, 'Device', 18_446_744_073_709_551_557n]);
  assert.equal(violation.id_gap_cause, 'reordered');
  assert.match(violation.message, /event 1 appears later in the log: reordered$/);
});

test('timestamps going backwards on one rank, at line 3 (another rank earlier is fine)', () => {
  const violation = violationOf(checkExample('timestamps_backwards.jsonl'));
  assert.deepEqual(violation, {
    violation: 'timestamp-backwards',
    line_number: 3,
    worker_id: 1,
    dp_rank: 0,
    event_id: 1,
    timestamp_ns: 9_500_000n,
    previous_timestamp_ns: 10_000_000n,
    previous_line_number: 1,
    message: "timestamps go backwards — worker 1, dp rank 0: stamped 9500000 ns, 0.5 ms before the rank's line 1 (10000000 ns)",
  });
});

test('the malformed example fails to parse at line 3 with the field path', () => {
  const text = fs.readFileSync(path.join(EXAMPLES, 'malformed.jsonl'), 'utf8');
  assert.throws(
    () => parseWireLog(text),
    (error: unknown) =>
      error instanceof WireFormatError &&
      error.line_number === 3 &&
      error.field_path === 'events[1].data.stored.blocks[0].block_hash' &&
      error.message === 'line 3: events[1].data.stored.blocks[0].block_hash: expected an unsigned 64-bit integer, got "abc"',
  );
});

test('in a captured log the first id seen sets each rank’s start (MIR-2)', () => {
  const report = checkEventLog([logLine(1, 0, null, [[41, store(1n)]]), logLine(2, 1, null, [[7, store(1n)]]), logLine(3, 0, null, [[42, store(2n)]])]);
  assert.equal(report.status, 'clean');
  assert.deepEqual(
    report.ranks.map((rank) => [rank.first_event_id, rank.last_event_id]),
    [
      [41, 42],
      [7, 7],
    ],
  );
  assert.equal(report.span_ns, null);
});

test('an id the stream already passed is diagnosed as a duplicate or replay', () => {
  const violation = violationOf(checkEventLog([logLine(1, 0, 5n, [[0, store(1n)]]), logLine(2, 0, 5n, [[0, store(2n)]])]));
  assert.ok(violation.violation === 'event-id-gap');
  assert.equal(violation.id_gap_cause, 'behind');
  assert.match(violation.message, /duplicated or replayed event$/);
});

test('a pair swapped inside one batch line is diagnosed as reordered', () => {
  const lines = [logLine(1, 0, null, [[0, store(1n)]]), logLine(2, 0, null, [[2, store(2n)], [1, store(3n)]])];
  const violation = violationOf(checkEventLog(lines));
  assert.ok(violation.violation === 'event-id-gap');
  assert.deepEqual([violation.line_number, violation.id_gap_cause], [2, 'reordered']);
});

test('equal timestamps are fine; a line without a timestamp is not compared', () => {
  const lines = [logLine(1, 0, 10n, [[0, store(1n)]]), logLine(2, 0, null, [[1, store(2n)]]), logLine(3, 0, 10n, [[2, store(3n)]])];
  const report = checkEventLog(lines);
  assert.equal(report.status, 'clean');
  assert.equal(report.span_ns, 0n);
});

test('Cleared drops both tiers of that rank only', () => {
  const lines = [
    logLine(1, 0, null, [[0, store(1n)], [1, store(1n), 'HostPinned']]),
    logLine(2, 1, null, [[0, store(1n), 'HostPinned']]),
    logLine(3, 0, null, [[2, { type: 'Cleared' }]]),
  ];
  const report = checkEventLog(lines);
  assert.equal(report.status, 'clean');
  assert.deepEqual(
    report.ranks.map((rank) => rank.resident_blocks),
    [
      { Device: 0, HostPinned: 0 },
      { Device: 0, HostPinned: 1 },
    ],
  );
});

test('a streamed log: the line is read once, the look-ahead for a reordered id still works, and a malformed line after the violation still counts', () => {
  const text = fs.readFileSync(path.join(EXAMPLES, 'reordered_pair.jsonl'), 'utf8');
  let read = 0;
  function* counted(): Generator<SourceLine> {
    for (const line of textLines(text, 'reordered_pair.jsonl')) {
      read++;
      yield line;
    }
  }
  const violation = violationOf(checkEventLog(parseWireLines(counted())));
  assert.ok(violation.violation === 'event-id-gap');
  assert.deepEqual([violation.line_number, violation.id_gap_cause], [2, 'reordered']);
  assert.equal(read, 4, 'every line (and the empty one after the last break) was read exactly once');
  assert.throws(() => checkEventLog(parseWireLines(textLines(`${text}{"worker_id": 1}\n`, 'log'))), /^WireFormatError: line 4: /);
});

test('the log span runs from the earliest to the latest stamp of any rank, ignoring lines and ranks without one', () => {
  const onWorker = (worker_id: number, line: LogLine): LogLine => ({ ...line, batch: { ...line.batch, worker_id, events: line.batch.events.map((e) => ({ ...e, worker_id })) } });
  const lines = [
    onWorker(1, logLine(1, 0, 20n, [[0, store(1n)]])),
    onWorker(1, logLine(2, 0, 30n, [[1, store(2n)]])),
    onWorker(2, logLine(3, 0, 5n, [[0, store(1n)]])),
    onWorker(2, logLine(4, 0, 40n, [[1, store(2n)]])),
    onWorker(2, logLine(5, 0, null, [[2, store(3n)]])),
    onWorker(3, logLine(6, 0, null, [[0, store(1n)]])),
  ];
  const report = checkEventLog(lines);
  assert.ok(report.status === 'clean');
  assert.deepEqual(
    report.ranks.map((rank) => [rank.worker_id, rank.first_timestamp_ns, rank.last_timestamp_ns]),
    [
      [1, 20n, 30n],
      [2, 5n, 40n],
      [3, null, null],
    ],
  );
  assert.deepEqual([report.first_timestamp_ns, report.last_timestamp_ns, report.span_ns], [5n, 40n, 35n]);
});

test('ranks of one worker are summarised in dp rank order, whatever order they first appear in', () => {
  const lines = [2, 0, 3, 1].map((dp_rank, i) => logLine(i + 1, dp_rank, null, [[0, store(1n)]]));
  const report = checkEventLog(lines);
  assert.ok(report.status === 'clean');
  assert.deepEqual(
    report.ranks.map((rank) => rank.dp_rank),
    [0, 1, 2, 3],
  );
});

test('an event id lost on one rank is lost even when another rank later uses that id', () => {
  const lines = [
    logLine(1, 0, null, [[0, store(1n)]]),
    logLine(2, 0, null, [[2, store(2n)]]),
    logLine(3, 1, null, [[0, store(1n)], [1, store(2n)]]),
  ];
  const violation = violationOf(checkEventLog(lines));
  assert.ok(violation.violation === 'event-id-gap');
  assert.deepEqual([violation.line_number, violation.expected_event_id, violation.id_gap_cause], [2, 1, 'lost']);
});

test('timestamps going backwards on a line with no events name no event', () => {
  const lines = [logLine(1, 0, 10n, [[0, store(1n)]]), logLine(2, 0, 9n, [])];
  const violation = violationOf(checkEventLog(lines));
  assert.ok(violation.violation === 'timestamp-backwards');
  assert.deepEqual([violation.line_number, violation.event_id, violation.previous_line_number], [2, null, 1]);
});

/** A log of wire lines (worker, dp rank 0, one Stored each): [worker, event id, parent, start position, block, medium]. */
function storedLog(lines: [number, number, number | null, number | null, number, string?][]): string {
  return lines
    .map(([worker, id, parent, start, block, medium]) =>
      JSON.stringify({ worker_id: worker, dp_rank: 0, event: { event_id: id, data: { stored: { parent_hash: parent, start_position: start, blocks: [{ block_hash: block, tokens_hash: 1 }], ...(medium ? { medium } : {}) } } } }),
    )
    .join('\n');
}

test('a Stored that gives no position leaves a block another rank or tier holds at its known position: a later child at another position is still a broken chain', () => {
  const otherRank = storedLog([[1, 0, null, 0, 10], [1, 1, 10, 1, 11], [2, 0, null, 0, 10], [2, 1, 10, null, 11], [1, 2, 11, 7, 12]]);
  const rejected = violationOf(checkEventLog(parseWireLog(otherRank)));
  assert.deepEqual([rejected.line_number, rejected.violation], [5, 'broken-chain']);
  const otherTier = storedLog([[1, 0, null, 0, 10], [1, 1, 10, 1, 11], [1, 2, null, 0, 10, 'CPU_PINNED'], [1, 3, 10, null, 11, 'CPU_PINNED'], [1, 4, 11, 7, 12]]);
  assert.deepEqual([violationOf(checkEventLog(parseWireLog(otherTier))).line_number], [5]);
  // The child at the right position is accepted either way.
  assert.equal(checkEventLog(parseWireLog(otherRank.replace('"start_position":7', '"start_position":2'))).status, 'clean');
});

test('the moved-block example: block 13, stored at position 2 under 12, comes again in G2 at position 1 under 11: a broken chain at line 2', () => {
  const violation = violationOf(checkExample('broken_chain_moved_block.jsonl'));
  assert.ok(violation.violation === 'broken-chain');
  assert.deepEqual([violation.line_number, violation.worker_id, violation.event_id, violation.tier, violation.block_hash], [2, 0, 1, 'HostPinned', 13n]);
  assert.match(violation.message, /puts a block some rank holds at another position or under another parent/);
});

test('a block another rank holds keeps its parent: at its own position under another one is a broken chain at that line; without a position it says nothing', () => {
  const log = (start: number | null) => storedLog([[1, 0, null, 0, 10], [1, 1, 10, 1, 11], [2, 0, null, 0, 20], [2, 1, 20, start, 11], [2, 2, 11, 2, 12]]);
  assert.deepEqual([violationOf(checkEventLog(parseWireLog(log(1)))).line_number], [4]);
  assert.equal(checkEventLog(parseWireLog(log(null))).status, 'clean');
  assert.equal(checkEventLog(parseWireLog(log(1).replace('"parent_hash":20,', '"parent_hash":10,').replace('"block_hash":20', '"block_hash":10'))).status, 'clean');
});

test('positions past 2^31 − 1 (a log may give up to 2^53 − 1) are kept exactly: a chain that follows is accepted, one that does not is rejected', () => {
  const chain = (first: number, second: number) => storedLog([[1, 0, null, null, 10], [1, 1, 10, first, 11], [1, 2, 11, second, 12]]);
  assert.equal(checkEventLog(parseWireLog(chain(4294967301, 4294967302))).status, 'clean');
  assert.equal(violationOf(checkEventLog(parseWireLog(chain(4294967301, 6)))).line_number, 3);
  assert.equal(violationOf(checkEventLog(parseWireLog(chain(2147483648, 5)))).line_number, 3);
  assert.equal(checkEventLog(parseWireLog(chain(9007199254740990, 9007199254740991))).status, 'clean');
});

test('a log of more ranks than a config may have (4,096) is refused at the first rank past the limit, naming it', () => {
  const lines = Array.from({ length: 4097 }, (_, rank) => logLine(rank + 1, rank, null, [[0, store(10n)]]));
  assert.equal(checkEventLog(lines.slice(0, 4096)).status, 'clean');
  assert.throws(() => checkEventLog(lines), (error: Error) => error instanceof WireFormatError && error.message === 'line 4097: worker 1, dp rank 4096 is rank 4,097 of the log, above the limit of 4,096 ranks (as in a config)');
});

test('a Stored with a parent at position 0 is a broken chain even when the parent gave no position: a child comes after its parent', () => {
  const log = storedLog([[1, 0, null, null, 10], [1, 1, 10, 0, 11]]);
  assert.equal(violationOf(checkEventLog(parseWireLog(log))).line_number, 2);
  assert.equal(checkEventLog(parseWireLog(log.replace('"start_position":0', '"start_position":null'))).status, 'clean');
});

test('the peak residency is counted after each event, inside a batch too, and a Cleared or a Removed does not lower it', () => {
  const removed = (...hashes: bigint[]): KvEventData => ({ type: 'Removed', block_hashes: hashes });
  const report = checkEventLog([
    logLine(1, 0, null, [
      [0, store(1n)],
      [1, store(2n)],
      [2, store(3n)],
      [3, removed(1n, 2n)],
    ]),
    logLine(2, 0, null, [[4, store(4n)]]),
    logLine(3, 0, null, [[5, { type: 'Cleared' }]]),
    logLine(4, 0, null, [[6, store(5n), 'HostPinned']]),
  ]);
  assert.equal(report.status, 'clean');
  if (report.status !== 'clean') return;
  assert.deepEqual(report.ranks[0].peak_resident_blocks, { Device: 3, HostPinned: 1 });
  assert.deepEqual(report.ranks[0].resident_blocks, { Device: 0, HostPinned: 1 });
});
