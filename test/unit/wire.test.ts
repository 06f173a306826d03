// Unit tests of the KV event wire form (EVT-1): vLLM/Dynamo shapes, exact u64 hashes and
// timestamps, the medium → tier mapping, one error naming line and field path, and round trips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exactWorkerId, RankEventStream, workerIdText } from '../../src/events/model';
import type { KvEvent } from '../../src/events/model';
import { fromKvEventBatch, parseJson, parseWireLine, parseWireLines, parseWireLog, toWireLines, WireFormatError, writtenLineValue } from '../../src/events/wire';
import { checkEventLog } from '../../src/events/checkLog';
import { textLines } from '../../src/inputFiles';
import type { WireBatch } from '../../src/events/wire';
import fc from 'fast-check';
import { stringify } from 'lossless-json';

const STORED = '{"stored": {"parent_hash": null, "start_position": 0, "blocks": [{"block_hash": 123, "tokens_hash": 456}]}}';

/** A single-event line around an event's JSON text. */
function single(event: string, head = '"worker_id": 1, "dp_rank": 0, "timestamp_ms": 10.5'): string {
  return `{${head}, "event": ${event}}`;
}

function parseError(line: string, line_number = 7): WireFormatError {
  try {
    parseWireLine(line, line_number);
  } catch (error) {
    assert.ok(error instanceof WireFormatError, `expected a WireFormatError, got ${error}`);
    return error;
  }
  assert.fail(`line parsed without error: ${line}`);
}

test('the single-event shape from the brief parses into one HostPinned Stored', () => {
  const line =
    '{"worker_id": 1, "dp_rank": 0, "timestamp_ms": 10.5, "event": {"event_id": 0, "data": {"stored": {"parent_hash": null, ' +
    '"start_position": 0, "blocks": [{"block_hash": 123, "tokens_hash": 456}], "medium": "CPU_PINNED"}}}}';
  assert.deepEqual(parseWireLine(line, 1), {
    worker_id: 1,
    dp_rank: 0,
    timestamp_ns: 10_500_000n,
    events: [
      {
        event_id: 0,
        worker_id: 1,
        dp_rank: 0,
        tier: 'HostPinned',
        data: { type: 'Stored', parent_hash: null, start_position: 0, blocks: [{ block_hash: 123n, tokens_hash: 456n }] },
      },
    ],
  });
});

test('a batch line carries several events of one rank in order', () => {
  const line =
    '{"worker_id": 2, "dp_rank": 1, "timestamp_ns": 99, "events": [' +
    `{"event_id": 4, "data": ${STORED}}, {"event_id": 5, "data": {"removed": {"block_hashes": [123]}}}, {"event_id": 6, "data": "cleared"}]}`;
  const batch = parseWireLine(line, 1);
  assert.equal(batch.timestamp_ns, 99n);
  assert.deepEqual(
    batch.events.map((event) => [event.worker_id, event.dp_rank, event.event_id, event.data.type]),
    [
      [2, 1, 4, 'Stored'],
      [2, 1, 5, 'Removed'],
      [2, 1, 6, 'Cleared'],
    ],
  );
});

test('u64 hashes above 2^53 keep every digit, as integers, decimal strings or 0x hex strings', () => {
  const blocks =
    '[{"block_hash": 9007199254740993, "tokens_hash": 18446744073709551615}, ' +
    '{"block_hash": "18446744073709551557", "tokens_hash": "0xFEDCBA9876543210"}]';
  const line = single(`{"event_id": 0, "data": {"stored": {"parent_hash": 9007199254740995, "blocks": ${blocks}}}}`);
  const data = parseWireLine(line, 1).events[0].data;
  assert.equal(data.type, 'Stored');
  assert.equal(data.parent_hash, 9_007_199_254_740_995n);
  assert.deepEqual(data.blocks, [
    { block_hash: 9_007_199_254_740_993n, tokens_hash: 18_446_744_073_709_551_615n },
    { block_hash: 18_446_744_073_709_551_557n, tokens_hash: 0xfedcba9876543210n },
  ]);
});

test('medium maps to the tier as vLLM/Dynamo do: absent, null and GPU are Device; CPU_PINNED and CPU are HostPinned', () => {
  const tierOf = (medium: string): string => {
    const event = `{"event_id": 0, "data": {"removed": {"block_hashes": [1]${medium}}}}`;
    return parseWireLine(single(event), 1).events[0].tier;
  };
  assert.equal(tierOf(''), 'Device');
  assert.equal(tierOf(', "medium": null'), 'Device');
  assert.equal(tierOf(', "medium": "GPU"'), 'Device');
  assert.equal(tierOf(', "medium": "CPU_PINNED"'), 'HostPinned');
  assert.equal(tierOf(', "medium": "CPU"'), 'HostPinned');
});

test('the medium may sit on the event object, and Dynamo storage_tier on the line', () => {
  const onEvent = single('{"event_id": 0, "medium": "CPU_PINNED", "data": "cleared"}');
  assert.equal(parseWireLine(onEvent, 1).events[0].tier, 'HostPinned');
  const onLine = single(`{"event_id": 0, "data": ${STORED}}`, '"worker_id": 1, "storage_tier": "host_pinned"');
  assert.equal(parseWireLine(onLine, 1).events[0].tier, 'HostPinned');
});

test('a medium Dynamo does not name, or two media that disagree, is an error naming the field', () => {
  const attic = single('{"event_id": 0, "data": {"removed": {"block_hashes": [1], "medium": "ATTIC"}}}');
  assert.equal(
    parseError(attic).message,
    'line 7: event.data.removed.medium: expected a medium Dynamo names: "GPU" or "DEVICE"; "CPU_PINNED", "CPU" or "CPU_TIER1"; "CPU_TIER2", "DISK", "NVME" or "STORAGE"; "EXTERNAL", "NETWORK", "REMOTE" or "SHARED" (or none, meaning GPU), got "ATTIC"',
  );
  const clash = single('{"event_id": 0, "medium": "GPU", "data": {"removed": {"block_hashes": [1], "medium": "CPU_PINNED"}}}');
  assert.equal(parseError(clash).message, 'line 7: event.data.removed.medium: tier HostPinned contradicts event.medium (tier Device)');
  const inherited = single('{"event_id": 0, "medium": "constructor", "data": "cleared"}');
  assert.match(parseError(inherited).message, /^line 7: event\.medium: expected a medium Dynamo names: .*, got "constructor"$/);
  const tier = single('{"event_id": 0, "data": "cleared"}', '"worker_id": 1, "storage_tier": "attic"');
  assert.match(parseError(tier).message, /^line 7: storage_tier: expected a storage tier of "device", "host_pinned", "disk" or "external", got "attic"$/);
});

test("Dynamo's disk and external tiers (storage_tier, or an engine's medium as Dynamo maps it) are passed over: their ids counted in the rank's sequence, their blocks not mirrored, and the summary says how many", () => {
  const medium = (name: string) => parseWireLine(single(`{"event_id": 0, "medium": "${name}", "data": "cleared"}`), 1).events[0];
  assert.deepEqual(['DEVICE', 'CPU_TIER1', 'CPU_TIER2', 'NVME', 'EXTERNAL'].map((name) => [medium(name).tier, medium(name).passed_over ?? null]), [
    ['Device', null],
    ['HostPinned', null],
    ['Device', 'disk'],
    ['Device', 'disk'],
    ['Device', 'external'],
  ]);
  const line = (id: number, tier: string, data: string) => `{"worker_id":7,"storage_tier":"${tier}","event":{"event_id":${id},"data":${data},"dp_rank":0}}`;
  const stored = (hash: number) => `{"stored":{"parent_hash":null,"start_position":null,"blocks":[{"block_hash":${hash},"tokens_hash":1}]}}`;
  const log = [line(0, 'device', stored(1)), line(1, 'disk', stored(1)), line(2, 'external', '{"removed":{"block_hashes":[99]}}'), line(3, 'device', '{"removed":{"block_hashes":[1]}}')].join('\n');
  const report = checkEventLog(parseWireLog(log));
  assert.equal(report.status, 'clean', 'a disk store of a block the device holds is no duplicate, an external removal of an unknown block no violation');
  if (report.status === 'clean') assert.deepEqual([report.passed_over_events, report.ranks[0].passed_over_events, report.ranks[0].last_event_id], [2, 2, 3]);
  const gap = checkEventLog(parseWireLog(log.replace('"event_id":2', '"event_id":5')));
  assert.equal(gap.status, 'violation', 'a passed-over event still takes its place in the id sequence');
});

test('Cleared is accepted as "cleared" or as {"cleared": {}}', () => {
  for (const data of ['"cleared"', '{"cleared": {}}']) {
    assert.deepEqual(parseWireLine(single(`{"event_id": 3, "data": ${data}}`), 1).events[0].data, { type: 'Cleared' });
  }
});

test('dp_rank comes from the line, else from the events (Dynamo: an event without one is rank 0), else 0; a line holds one rank', () => {
  const rankOf = (head: string, event: string): number => parseWireLine(single(event, head), 1).dp_rank;
  assert.equal(rankOf('"worker_id": 1, "dp_rank": 2', `{"event_id": 0, "data": ${STORED}}`), 2);
  assert.equal(rankOf('"worker_id": 1', `{"event_id": 0, "dp_rank": 3, "data": ${STORED}}`), 3);
  assert.equal(rankOf('"worker_id": 1', `{"event_id": 0, "data": ${STORED}}`), 0);
  const batch = `{"worker_id": 1, "dp_rank": 0, "events": [{"event_id": 0, "data": "cleared"}, {"event_id": 1, "dp_rank": 1, "data": "cleared"}]}`;
  assert.equal(parseError(batch).message, "line 7: events[1].dp_rank: dp rank 1 differs from the line's dp rank 0 (a line holds one rank's events)");
  // Without a line rank, an event without one is rank 0 as Dynamo reads it, never its sibling's.
  const events = (a: string, b: string) => `{"worker_id": 1, "events": [{"event_id": 0, ${a}"data": "cleared"}, {"event_id": 1, ${b}"data": "cleared"}]}`;
  assert.equal(parseError(events('"dp_rank": 1, ', '')).message, "line 7: events[1].dp_rank: no dp rank (read as 0, as Dynamo reads it) differs from events[0]'s dp rank 1 (a line holds one rank's events)");
  assert.equal(parseError(events('', '"dp_rank": 1, ')).message, "line 7: events[1].dp_rank: dp rank 1 differs from events[0]'s dp rank 0 (a line holds one rank's events)");
  assert.equal(parseWireLine(events('"dp_rank": 2, ', '"dp_rank": 2, '), 1).dp_rank, 2);
  assert.equal(parseWireLine(events('"dp_rank": 0, ', ''), 1).dp_rank, 0);
  // With a line rank, an event without one takes it (kvqual's older batch lines).
  assert.equal(parseWireLine(`{"worker_id": 1, "dp_rank": 3, "events": [{"event_id": 0, "data": "cleared"}, {"event_id": 1, "dp_rank": 3, "data": "cleared"}]}`, 1).dp_rank, 3);
});

test('timestamps: timestamp_ns, timestamp_ms or ts (seconds) become exact integer ns; none is allowed', () => {
  const stampOf = (head: string): bigint | null => parseWireLine(single('{"event_id": 0, "data": "cleared"}', head), 1).timestamp_ns;
  assert.equal(stampOf('"worker_id": 1, "timestamp_ns": 1718000000123456789'), 1_718_000_000_123_456_789n);
  assert.equal(stampOf('"worker_id": 1, "timestamp_ms": 14.999'), 14_999_000n);
  assert.equal(stampOf('"worker_id": 1, "timestamp_ms": 1718000000123.456789'), 1_718_000_000_123_456_789n);
  assert.equal(stampOf('"worker_id": 1, "ts": 1718000000.1234567'), 1_718_000_000_123_456_700n);
  assert.equal(stampOf('"worker_id": 1, "ts": 0.30000000000000004'), 300_000_000n);
  assert.equal(stampOf('"worker_id": 1'), null);
});

test('every malformed field is reported with its line and path', () => {
  const event = (data: string) => single(`{"event_id": 0, "data": ${data}}`);
  const cases: [string, string][] = [
    ['{"worker_id": 1', 'line 7: not valid JSON: '],
    ['[1, 2]', 'line 7: expected a JSON object, got an array'],
    ['{"dp_rank": 0, "event": {}}', 'line 7: worker_id: expected an unsigned 64-bit integer, but the field is missing'],
    ['{"worker_id": -1, "event": {}}', 'line 7: worker_id: expected an unsigned 64-bit integer, got -1'],
    ['{"worker_id": 18446744073709551616, "event": {}}', 'line 7: worker_id: expected an unsigned 64-bit integer, got 18446744073709551616'],
    ['{"worker_id": "1", "event": {}}', 'line 7: worker_id: expected an unsigned 64-bit integer, got "1"'],
    ['{"worker_id": 1, "dp_rank": 0.5, "event": {}}', 'line 7: dp_rank: expected an integer from 0 to 9007199254740991, got 0.5'],
    ['{"worker_id": 1}', 'line 7: expected exactly one of "event" (one event) or "events" (a batch)'],
    ['{"worker_id": 1, "event": {}, "events": []}', 'line 7: expected exactly one of "event" (one event) or "events" (a batch)'],
    ['{"worker_id": 1, "events": {}}', 'line 7: events: expected an array, got an object'],
    ['{"worker_id": 1, "events": [7]}', 'line 7: events[0]: expected a JSON object, got 7'],
    ['{"worker_id": 1, "event": {"data": "cleared"}}', 'line 7: event.event_id: expected an integer from 0 to 9007199254740991, but the field is missing'],
    ['{"worker_id": 1, "event": {"event_id": 0}}', 'line 7: event.data: expected {"stored": {…}}, {"removed": {…}}, "cleared" or {"cleared": {}}, but the field is missing'],
    [event('"stored"'), 'line 7: event.data: expected {"stored": {…}}, {"removed": {…}}, "cleared" or {"cleared": {}}, got "stored"'],
    [event('{"stored": {}, "removed": {}}'), 'line 7: event.data: expected {"stored": {…}}, {"removed": {…}}, "cleared" or {"cleared": {}}, got an object'],
    [event('{"evicted": {}}'), 'line 7: event.data: expected {"stored": {…}}, {"removed": {…}}, "cleared" or {"cleared": {}}, got an object with key "evicted"'],
    [event('{"stored": []}'), 'line 7: event.data.stored: expected a JSON object, got an array'],
    [event('{"stored": {"blocks": 3}}'), 'line 7: event.data.stored.blocks: expected an array, got 3'],
    [event('{"stored": {"blocks": [null]}}'), 'line 7: event.data.stored.blocks[0]: expected a JSON object, got null'],
    [event('{"stored": {"blocks": [{"block_hash": "abc", "tokens_hash": 1}]}}'), 'line 7: event.data.stored.blocks[0].block_hash: expected an unsigned 64-bit integer, got "abc"'],
    [event('{"stored": {"blocks": [{"block_hash": 1}]}}'), 'line 7: event.data.stored.blocks[0].tokens_hash: expected an unsigned 64-bit integer, but the field is missing'],
    [event('{"stored": {"blocks": [{"block_hash": 18446744073709551616, "tokens_hash": 1}]}}'), 'line 7: event.data.stored.blocks[0].block_hash: expected an unsigned 64-bit integer, got 18446744073709551616'],
    [event('{"stored": {"blocks": [{"block_hash": -5, "tokens_hash": 1}]}}'), 'line 7: event.data.stored.blocks[0].block_hash: expected an unsigned 64-bit integer, got -5'],
    [event('{"stored": {"blocks": [{"block_hash": 1.5, "tokens_hash": 1}]}}'), 'line 7: event.data.stored.blocks[0].block_hash: expected an unsigned 64-bit integer, got 1.5'],
    [event('{"stored": {"parent_hash": "0x", "blocks": []}}'), 'line 7: event.data.stored.parent_hash: expected an unsigned 64-bit integer, got "0x"'],
    [event('{"stored": {"start_position": "0", "blocks": []}}'), 'line 7: event.data.stored.start_position: expected an integer from 0 to 9007199254740991, got "0"'],
    [event('{"removed": {"block_hashes": [1, true]}}'), 'line 7: event.data.removed.block_hashes[1]: expected an unsigned 64-bit integer, got true'],
    [event('{"removed": {}}'), 'line 7: event.data.removed.block_hashes: expected an array, but the field is missing'],
    [event('{"cleared": 1}'), 'line 7: event.data.cleared: expected a JSON object, got 1'],
    [single('{"event_id": 0, "data": "cleared"}', '"worker_id": 1, "timestamp_ns": 1.5'), 'line 7: timestamp_ns: expected a non-negative integer that fits 64 bits of ns, got 1.5'],
    [single('{"event_id": 0, "data": "cleared"}', '"worker_id": 1, "timestamp_ms": -3'), 'line 7: timestamp_ms: expected a non-negative number of milliseconds that fits 64 bits of ns, got -3'],
    [single('{"event_id": 0, "data": "cleared"}', '"worker_id": 1, "ts": "now"'), 'line 7: ts: expected a non-negative number of seconds, got "now"'],
    [single('{"event_id": 0, "data": "cleared"}', '"worker_id": 1, "ts": 1, "timestamp_ms": 1000'), 'line 7: ts: give one timestamp, not both timestamp_ms and ts'],
  ];
  for (const [line, message] of cases) {
    const error = parseError(line);
    if (message.endsWith(': ')) assert.ok(error.message.startsWith(message), error.message);
    else assert.equal(error.message, message);
  }
});

test('the error carries the line number and field path as fields', () => {
  const error = parseError('{"worker_id": 1, "events": [{"event_id": 0, "data": "cleared"}, {"event_id": "x", "data": "cleared"}]}', 12);
  assert.equal(error.line_number, 12);
  assert.equal(error.field_path, 'events[1].event_id');
  assert.equal(error.name, 'WireFormatError');
});

test('a log skips blank lines but keeps file line numbers, with LF or CRLF endings', () => {
  const line = single(`{"event_id": 0, "data": ${STORED}}`);
  const lines = parseWireLog(`${line}\r\n\r\n   \r\n${line}\n`);
  assert.deepEqual(
    lines.map((entry) => entry.line_number),
    [1, 4],
  );
  assert.throws(() => parseWireLog(`${line}\n\n{"worker_id": 1}\n`), /^WireFormatError: line 3: /);
});

test('a byte-order mark before the first line is read past (as editors on Windows write it); one on a later line is named as malformed there', () => {
  const line = single(`{"event_id": 0, "data": ${STORED}}`);
  const [first] = parseWireLog(`\uFEFF${line}\n`);
  assert.deepEqual(first.batch, parseWireLine(line, 1));
  assert.throws(() => parseWireLog(`${line}\n\uFEFF${line}\n`), /^WireFormatError: line 2: /);
});

test("toWireLines writes one event a line as Dynamo's RouterEvent serializes it: the tier as storage_tier, dp_rank in the event, u64 hashes as JSON integers", () => {
  const stream = new RankEventStream({ worker_id: 3, dp_rank: 1 });
  const stored = stream.stored('Device', [{ block_hash: 18_446_744_073_709_551_557n, tokens_hash: 1n }], null, 0);
  assert.equal(
    toWireLines({ worker_id: 3, dp_rank: 1, timestamp_ns: 5n, events: [stored] }),
    '{"worker_id":3,"storage_tier":"device","timestamp_ns":5,"event":{"event_id":0,"data":{"stored":{"parent_hash":null,"start_position":0,' +
      '"blocks":[{"block_hash":18446744073709551557,"tokens_hash":1,"mm_extra_info":null}]}},"dp_rank":1}}\n',
  );
  const two = toWireLines({ worker_id: 3, dp_rank: 1, timestamp_ns: null, events: [stream.cleared('HostPinned'), stream.removed('Device', [1n])] });
  assert.equal(
    two,
    '{"worker_id":3,"storage_tier":"host_pinned","event":{"event_id":1,"data":"cleared","dp_rank":1}}\n' +
      '{"worker_id":3,"storage_tier":"device","event":{"event_id":2,"data":{"removed":{"block_hashes":[1]}},"dp_rank":1}}\n',
  );
  assert.equal(toWireLines({ worker_id: 3, dp_rank: 1, timestamp_ns: 5n, events: [] }), '', 'a batch of no event writes no line');
});

/** The events of a batch's lines read back, as one batch. */
function readBack(text: string): WireBatch[] {
  return parseWireLog(text).map((line) => line.batch);
}

test('toWireLines then parseWireLog gives back every event of the batch, with its rank, tier and time, every event kind and tier', () => {
  const stream = new RankEventStream({ worker_id: 7, dp_rank: 2 });
  const events: KvEvent[] = [
    stream.stored('Device', [{ block_hash: 9_007_199_254_740_993n, tokens_hash: 2n ** 64n - 1n }], null, 0),
    stream.stored('HostPinned', [{ block_hash: 18_446_744_073_709_551_557n, tokens_hash: 0n }], 9_007_199_254_740_993n, 1),
    stream.removed('HostPinned', [18_446_744_073_709_551_557n]),
    stream.removed('Device', [9_007_199_254_740_993n]),
    stream.cleared('Device'),
    stream.cleared('HostPinned'),
  ];
  const batches: WireBatch[] = [
    { worker_id: 7, dp_rank: 2, timestamp_ns: 1_718_000_000_123_456_789n, events },
    { worker_id: 7, dp_rank: 2, timestamp_ns: null, events: events.slice(0, 1) },
    fromKvEventBatch({ worker_id: 7, dp_rank: 2, emitted_ns: 14_999_000, events: events.slice(2, 3) }),
  ];
  for (const batch of batches) {
    const lines = readBack(toWireLines(batch));
    assert.equal(lines.length, batch.events.length);
    for (const line of lines) assert.deepEqual([line.worker_id, line.dp_rank, line.timestamp_ns], [batch.worker_id, batch.dp_rank, batch.timestamp_ns]);
    assert.deepEqual(lines.flatMap((line) => line.events), batch.events);
  }
});

/** A line as a general JSON writer that keeps u64 exact writes a RouterEvent (what toWireLines writes as text directly). */
function generalWireLines(batch: WireBatch): string {
  const data = (e: KvEvent): unknown => {
    if (e.data.type === 'Stored') return { stored: { parent_hash: e.data.parent_hash, start_position: e.data.start_position, blocks: e.data.blocks.map((b) => ({ ...b, mm_extra_info: null })) } };
    if (e.data.type === 'Removed') return { removed: { block_hashes: e.data.block_hashes } };
    return 'cleared';
  };
  return batch.events
    .map((e) => {
      const line: Record<string, unknown> = { worker_id: batch.worker_id, storage_tier: e.tier === 'HostPinned' ? 'host_pinned' : 'device' };
      if (batch.timestamp_ns !== null) line.timestamp_ns = batch.timestamp_ns;
      line.event = { event_id: e.event_id, data: data(e), dp_rank: batch.dp_rank };
      return `${stringify(line)}\n`;
    })
    .join('');
}

/** Generated batches of every kind of event, with hashes over the whole u64 range. */
function generatedBatches(): fc.Arbitrary<WireBatch> {
  const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
  const tier = fc.constantFrom<'Device' | 'HostPinned'>('Device', 'HostPinned');
  const data = fc.oneof(
    fc.record({ type: fc.constant('Stored' as const), parent_hash: fc.option(u64), start_position: fc.option(fc.nat({ max: 1 << 20 })), blocks: fc.array(fc.record({ block_hash: u64, tokens_hash: u64 }), { maxLength: 4 }) }),
    fc.record({ type: fc.constant('Removed' as const), block_hashes: fc.array(u64, { maxLength: 4 }) }),
    fc.constant({ type: 'Cleared' as const }),
  );
  return fc.record({ worker_id: fc.nat(), dp_rank: fc.nat({ max: 64 }), timestamp_ns: fc.option(fc.bigInt({ min: 0n, max: 2n ** 63n })) }).chain((head) =>
    fc.array(fc.record({ event_id: fc.nat(), tier, data }), { minLength: 1, maxLength: 4 }).map((events): WireBatch => ({ ...head, events: events.map((e) => ({ ...e, worker_id: head.worker_id, dp_rank: head.dp_rank })) })),
  );
}

/** What the general JSON reader makes of a line, or null when it refuses it. */
function generalValue(line: string): unknown {
  try {
    return parseJson(line);
  } catch {
    return null;
  }
}

test('a line as toWireLines writes it is read by its patterns into exactly the value the general JSON reader gives', () => {
  fc.assert(
    fc.property(generatedBatches(), (batch) => {
      for (const line of toWireLines(batch).split('\n').filter(Boolean)) {
        const value = writtenLineValue(line);
        assert.notEqual(value, null, line);
        assert.deepStrictEqual(value, generalValue(line));
      }
    }),
    { numRuns: 500, seed: 1893 },
  );
});

test('a line in any other form is left to the general JSON reader: the patterns never read a line otherwise than it does', () => {
  // Written lines with one character inserted, removed or replaced (by a character of JSON's own, often).
  const edit = fc.tuple(generatedBatches(), fc.nat(), fc.constantFrom('insert', 'remove', 'replace'), fc.constantFrom(',', ' ', '0', '1', '-', '"', '{', '}', '[', ']', ':', 'e', '.', 'n', 'x', '\\'));
  let accepted = 0;
  fc.assert(
    fc.property(edit, ([batch, at, how, char]) => {
      const line = toWireLines(batch).split('\n')[0];
      const i = at % (line.length + 1);
      const edited = how === 'insert' ? line.slice(0, i) + char + line.slice(i) : how === 'remove' ? line.slice(0, i) + line.slice(i + 1) : line.slice(0, i) + char + line.slice(i + 1);
      const value = writtenLineValue(edited);
      if (value === null) return;
      accepted++;
      assert.deepStrictEqual(value, generalValue(edited), edited);
    }),
    { numRuns: 3000, seed: 1893 },
  );
  assert.ok(accepted > 100, `some edited lines are still in the written form (${accepted})`);
  const cleared = '{"worker_id":1,"storage_tier":"device","event":{"event_id":0,"data":"cleared","dp_rank":0}}';
  assert.deepStrictEqual(writtenLineValue(cleared), generalValue(cleared));
  for (const other of [
    cleared.replace('"event_id":0', '"event_id":00'),
    cleared.replace('"event_id":0', '"event_id":-0'),
    cleared.replace('"event_id":0', '"event_id":0.0'),
    cleared.replace('"event_id":0', '"event_id": 0'),
    cleared.replace('"worker_id":1', '"worker_id":1,"worker_id":1'),
    cleared.replace('"data":"cleared"', '"data":{"stored":{"parent_hash":null,"start_position":null,"blocks":[{"block_hash":1,"tokens_hash":2,"mm_extra_info":null},]}}'),
    cleared.replace('"data":"cleared"', '"data":{"removed":{"block_hashes":[1,]}}'),
    cleared.replace('"data":"cleared"', '"data":"cleared","dp_rank":0}},"x":{"y":{"data":"cleared"'),
    `${cleared} `,
    `\ufeff${cleared}`,
  ]) {
    assert.equal(writtenLineValue(other), null, other);
  }
});

test('toWireLines writes what a general JSON writer writes, and parseWireLog reads it back, for generated batches', () => {
  const batch = generatedBatches();
  fc.assert(
    fc.property(batch.map((generated) => structuredClone(generated)), (generated) => {
      const text = toWireLines(generated);
      assert.equal(text, generalWireLines(generated));
      assert.deepEqual(readBack(text).flatMap((line) => line.events), generated.events);
    }),
    { numRuns: 300, seed: 1893 },
  );
});

test('storage_tier "device" is the Device tier; a line tier and an event medium must agree', () => {
  const cleared = '{"event_id": 0, "data": "cleared"}';
  assert.equal(parseWireLine(single(cleared, '"worker_id": 1, "storage_tier": "device"'), 1).events[0].tier, 'Device');
  const agreeing = single('{"event_id": 0, "medium": "CPU_PINNED", "data": "cleared"}', '"worker_id": 1, "storage_tier": "host_pinned"');
  assert.equal(parseWireLine(agreeing, 1).events[0].tier, 'HostPinned');
  const clash = single('{"event_id": 0, "medium": "GPU", "data": "cleared"}', '"worker_id": 1, "storage_tier": "host_pinned"');
  assert.equal(parseError(clash).message, 'line 7: event.medium: tier Device contradicts storage_tier (tier HostPinned)');
});

test("an event's dp_rank equal to the line's is accepted; a malformed one is named by its path", () => {
  const same = single('{"event_id": 0, "dp_rank": 2, "data": "cleared"}', '"worker_id": 1, "dp_rank": 2');
  assert.equal(parseWireLine(same, 1).dp_rank, 2);
  const bad = single('{"event_id": 0, "dp_rank": "two", "data": "cleared"}', '"worker_id": 1');
  assert.equal(parseError(bad).message, 'line 7: event.dp_rank: expected an integer from 0 to 9007199254740991, got "two"');
});

test('ids up to 2^53 − 1 are accepted', () => {
  const line = single('{"event_id": 9007199254740991, "data": "cleared"}', '"worker_id": 9007199254740991');
  const batch = parseWireLine(line, 1);
  assert.deepEqual([batch.worker_id, batch.events[0].event_id], [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
});

test('a hash string must be all decimal digits or 0x and hex digits, nothing before or after', () => {
  for (const text of ['x12', '12x', 'a0x1f', '0x1fz']) {
    const line = single(`{"event_id": 0, "data": {"removed": {"block_hashes": ["${text}"]}}}`);
    assert.equal(parseError(line).message, `line 7: event.data.removed.block_hashes[0]: expected an unsigned 64-bit integer, got "${text}"`);
  }
});

test('a long unexpected string is quoted up to its 40th character', () => {
  const long = 'A'.repeat(40) + 'BEYOND';
  const line = single(`{"event_id": 0, "medium": "${long}", "data": "cleared"}`);
  assert.match(parseError(line).message, new RegExp(`, got "${'A'.repeat(40)}…"$`));
  const forty = single(`{"event_id": 0, "medium": "${'A'.repeat(40)}", "data": "cleared"}`);
  assert.match(parseError(forty).message, new RegExp(`, got "${'A'.repeat(40)}"$`));
});

test("Dynamo's worker ids are u64 (real ones near 10^18): read exactly, named exactly in messages and summaries, ordered by value, written as exact decimals in JSON; 2^64 is refused", () => {
  const line = (worker: string, id: number, data: string) => `{"worker_id":${worker},"event":{"event_id":${id},"data":${data},"dp_rank":0}}`;
  const stored = (hash: number) => `{"stored":{"parent_hash":null,"start_position":null,"blocks":[{"block_hash":${hash},"tokens_hash":1}]}}`;
  const log = [line('1718573674787700191', 0, stored(5)), line('3', 0, stored(6)), line('18446744073709551615', 0, stored(7))].join('\n');
  const report = checkEventLog(parseWireLog(log));
  assert.equal(report.status, 'clean');
  if (report.status !== 'clean') return;
  assert.deepEqual(report.ranks.map((rank) => workerIdText(rank.worker_id)), ['3', '1718573674787700191', '18446744073709551615'], 'ordered by their exact values');
  assert.deepEqual(report.ranks.map((rank) => exactWorkerId(rank.worker_id)), [3, 1718573674787700191n, 18446744073709551615n]);
  const broken = `${log}\n${line('1718573674787700191', 1, '{"removed":{"block_hashes":[99]}}')}`;
  const rejected = checkEventLog(parseWireLog(broken));
  assert.equal(rejected.status, 'violation');
  if (rejected.status === 'violation') assert.match(rejected.violation.message, /— worker 1718573674787700191, dp rank 0, event 1, tier Device, block 99$/);
  assert.throws(() => parseWireLog(line('18446744073709551616', 0, stored(5))), /line 1: worker_id: expected an unsigned 64-bit integer, got 18446744073709551616/);
});

test("Dynamo's KV event recorder lines ({timestamp: ms since it started, event: RouterEvent}) are read: the rank, tier and events inside, the timestamp in ms; a problem inside is named by its path there", () => {
  const entry = (ms: number, id: number, data: string, tier = 'device') => `{"timestamp":${ms},"event":{"worker_id":7,"storage_tier":"${tier}","residency_domain":"worker","event":{"event_id":${id},"data":${data},"dp_rank":1}}}`;
  const log = [entry(0, 0, '{"stored":{"parent_hash":null,"start_position":null,"blocks":[{"block_hash":1,"tokens_hash":2,"mm_extra_info":null}]}}'), entry(15, 1, '{"removed":{"block_hashes":[1]}}')].join('\n');
  const [first, second] = [...parseWireLines(textLines(log, 'log'))];
  assert.deepEqual([first.batch.worker_id, first.batch.dp_rank, first.batch.timestamp_ns, second.batch.timestamp_ns], [7, 1, 0n, 15_000_000n]);
  assert.equal(checkEventLog(parseWireLog(log)).status, 'clean');
  const backwards = [entry(20, 0, '{"stored":{"parent_hash":null,"blocks":[{"block_hash":1,"tokens_hash":2}]}}'), entry(15, 1, '{"removed":{"block_hashes":[1]}}')].join('\n');
  assert.equal(checkEventLog(parseWireLog(backwards)).status, 'violation', 'the recorder\'s timestamps are checked');
  assert.throws(() => parseWireLog(entry(0, 0, '"cleared"', 'attic')), /line 1: event\.storage_tier: expected a storage tier of "device", "host_pinned", "disk" or "external", got "attic"/);
  assert.throws(() => parseWireLog(entry(0, 0, '{"stored":{"parent_hash":null,"blocks":[{"block_hash":-5,"tokens_hash":2}]}}')), /line 1: event\.event\.data\.stored\.blocks\[0\]\.block_hash: expected an unsigned 64-bit integer/);
  assert.throws(() => parseWireLog(log.replace('"timestamp":0', '"timestamp":-1')), /line 1: timestamp: expected a whole number of milliseconds \(the recorder's\), got -1/);
});

test("a RouterEvent of a cache owner's residency domain is passed over (the mirror keeps the worker's own): a cache owner's Cleared leaves the worker's blocks", () => {
  const line = (id: number, tier: string, domain: string, data: string) => `{"worker_id":7,"storage_tier":"${tier}","residency_domain":"${domain}","event":{"event_id":${id},"data":${data},"dp_rank":0},"state_source":{"pool":"p"}}`;
  const log = [
    line(0, 'device', 'worker', '{"stored":{"parent_hash":null,"start_position":null,"blocks":[{"block_hash":100,"tokens_hash":1}]}}'),
    line(1, 'host_pinned', 'cache_owner', '{"stored":{"parent_hash":null,"start_position":null,"blocks":[{"block_hash":200,"tokens_hash":2}]}}'),
    line(2, 'device', 'cache_owner', '"cleared"'),
    line(3, 'device', 'worker', '{"removed":{"block_hashes":[100]}}'),
  ].join('\n');
  const report = checkEventLog(parseWireLog(log));
  assert.equal(report.status, 'clean');
  if (report.status === 'clean') assert.equal(report.passed_over_events, 2);
  assert.throws(() => parseWireLog(log.replace('"residency_domain":"worker"', '"residency_domain":7')), /line 1: residency_domain: expected a residency domain name such as "worker" or "cache_owner", got 7/);
});
