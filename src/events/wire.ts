// The JSON-lines wire form of KV events (EVT-1): Dynamo's RouterEvent as serde writes it (a line of
// its KV event recorder too), or a batch of one rank's events, so that captured logs can be read.
// Owns parsing (u64 hashes and worker ids exact through lossless-json, timestamps to exact ns, one
// error naming line and field path) and writing, toWireLines: one RouterEvent a line, as Dynamo
// decodes it. Pure: text in, values out.
import { isLosslessNumber, LosslessNumber, parse } from 'lossless-json';
import type { BlockHash, HashedBlock } from '../hash';
import { exactWorkerId, workerIdOf, type KvEvent, type PassedOverTier, type KvEventBatch, type KvEventData, type RankRef, type Tier } from './model';
import { decimalToBigNs, DurationError } from '../time';
import type { TimeUnit } from '../time';
import { jsonSyntaxProblem, printable, type SourceLine, textLines } from '../inputFiles';
import { TraceLineError } from '../traceLineError';

/** One line of a log: a rank's events emitted together, stamped with the time written in the log. */
export interface WireBatch extends RankRef {
  /** Emission time in integer ns on the log's own clock (often the Unix epoch); null when absent. */
  timestamp_ns: bigint | null;
  events: KvEvent[];
}

/** A parsed line with its 1-based number in the file. */
export interface LogLine {
  line_number: number;
  batch: WireBatch;
}

/** A malformed line: names the line and the path of the offending field. */
export class WireFormatError extends Error {
  constructor(
    readonly line_number: number,
    readonly field_path: string,
    readonly problem: string,
  ) {
    super(`line ${line_number}: ${field_path === '' ? '' : `${field_path}: `}${problem}`);
    this.name = 'WireFormatError';
  }
}

/** A problem at a field path inside one line; parseWireLine adds the line number. */
class FieldError extends Error {
  constructor(
    readonly field_path: string,
    readonly problem: string,
  ) {
    super(problem);
  }
}

type JsonObject = Record<string, unknown>;

const U64_LIMIT = 1n << 64n;
const SAFE_LIMIT = BigInt(Number.MAX_SAFE_INTEGER);

/** A tier a log names: one of the spec's two, or one of Dynamo's others, whose events are passed over. */
type WireTier = Tier | PassedOverTier;

interface TierNames {
  tiers: ReadonlyMap<string, WireTier>;
  expected: string;
}

/** vLLM/Dynamo `medium` (on the data or the event), as Dynamo's router maps the engines' names; absent means GPU. */
const MEDIUM: TierNames = {
  tiers: new Map<string, WireTier>([
    ['GPU', 'Device'],
    ['DEVICE', 'Device'],
    ['CPU_PINNED', 'HostPinned'],
    ['CPU', 'HostPinned'],
    ['CPU_TIER1', 'HostPinned'],
    ...['CPU_TIER2', 'DISK', 'NVME', 'STORAGE'].map((name): [string, WireTier] => [name, 'disk']),
    ...['EXTERNAL', 'NETWORK', 'REMOTE', 'SHARED'].map((name): [string, WireTier] => [name, 'external']),
  ]),
  expected: 'a medium Dynamo names: "GPU" or "DEVICE"; "CPU_PINNED", "CPU" or "CPU_TIER1"; "CPU_TIER2", "DISK", "NVME" or "STORAGE"; "EXTERNAL", "NETWORK", "REMOTE" or "SHARED" (or none, meaning GPU)',
};
/** Dynamo RouterEvent `storage_tier` (on the line). */
const STORAGE_TIER: TierNames = {
  tiers: new Map<string, WireTier>([['device', 'Device'], ['host_pinned', 'HostPinned'], ['disk', 'disk'], ['external', 'external']]),
  expected: 'a storage tier of "device", "host_pinned", "disk" or "external"',
};

/** The timestamp fields a line may carry (at most one): ns must be whole; ms and s round to the nearest ns. */
const TIMESTAMP_FIELDS: { key: string; unit: TimeUnit; rounding: 'exact' | 'nearest' }[] = [
  { key: 'timestamp_ns', unit: 'ns', rounding: 'exact' },
  { key: 'timestamp_ms', unit: 'ms', rounding: 'nearest' },
  { key: 'ts', unit: 's', rounding: 'nearest' },
];

// ── Parsing ─────────────────────────────────────────────────────────────────────────────────

/** Parses every non-blank line of a log; throws WireFormatError at the first malformed one. */
export function parseWireLog(text: string): LogLine[] {
  return [...parseWireLines(textLines(text, 'log'))];
}

/**
 * Parses the non-blank lines of a log one at a time, as they are read (see inputFiles.fileLines),
 * so a large log is never held in memory; throws WireFormatError at the first malformed one (a line
 * over the length limit included).
 */
export function* parseWireLines(lines: Iterable<SourceLine>): Generator<LogLine> {
  const iterator = lines[Symbol.iterator]();
  try {
    for (;;) {
      let next: IteratorResult<SourceLine>;
      try {
        next = iterator.next();
      } catch (error) {
        if (error instanceof TraceLineError && error.line !== null) throw new WireFormatError(error.line, '', error.problem);
        throw error;
      }
      if (next.done) return;
      const { text, number } = next.value;
      if (text.trim() !== '') yield { line_number: number, batch: parseWireLine(text, number) };
    }
  } finally {
    iterator.return?.();
  }
}

/** Parses one line (a single event or a batch) into a rank's batch (a byte-order mark before a file's first line is dropped where lines are read: inputFiles). */
export function parseWireLine(text: string, line_number: number): WireBatch {
  try {
    return readLine(writtenLineValue(text) ?? parseJson(text));
  } catch (error) {
    if (error instanceof FieldError) throw new WireFormatError(line_number, error.field_path, error.problem);
    throw error;
  }
}

/** JSON with integers as bigint (u64 hashes stay exact) and other numbers as LosslessNumber text. */
export function parseJson(text: string): unknown {
  try {
    return parse(text, null, (number) => (/^-?\d+$/.test(number) ? BigInt(number) : new LosslessNumber(number)));
  } catch {
    throw new FieldError('', jsonSyntaxProblem(text));
  }
}

// ── Lines as toWireLines writes them ────────────────────────────────────────────────────────
// A log kvqual wrote (a fuzz case's, `--events-out`) is read back many times; its lines have one
// fixed form, read here by patterns into the very value parseJson gives (plain objects with the
// keys in written order, whole numbers as bigint), about four times faster than the general JSON
// reader. Any other line (spaces, another key order, another field, a malformed one) is the
// general reader's: the patterns only ever accept a line in exactly toWireLines' form.

/** A whole number as JSON writes it: no sign, no leading zero. */
const WHOLE = '(0|[1-9][0-9]*)';
const WRITTEN_LINE = new RegExp(`^\\{"worker_id":${WHOLE},"storage_tier":"(device|host_pinned)"(?:,"timestamp_ns":${WHOLE})?,"event":\\{"event_id":${WHOLE},"data":(.+),"dp_rank":${WHOLE}\\}\\}$`);
const WRITTEN_STORED = new RegExp(`^\\{"stored":\\{"parent_hash":(?:null|${WHOLE}),"start_position":(?:null|${WHOLE}),"blocks":\\[(.*)\\]\\}\\}$`);
const WRITTEN_BLOCK = new RegExp(`\\{"block_hash":${WHOLE},"tokens_hash":${WHOLE},"mm_extra_info":null\\}`, 'y');
const WRITTEN_REMOVED = new RegExp(`^\\{"removed":\\{"block_hashes":\\[((?:${WHOLE},)*${WHOLE})?\\]\\}\\}$`);
const COMMA = 0x2c;

/** The JSON value of a line in exactly toWireLines' form, as parseJson reads it; null for any other line. */
export function writtenLineValue(text: string): JsonObject | null {
  const line = WRITTEN_LINE.exec(text);
  if (line === null) return null;
  const data = writtenDataValue(line[5]);
  if (data === null) return null;
  const value: JsonObject = { worker_id: BigInt(line[1]), storage_tier: line[2] };
  if (line[3] !== undefined) value.timestamp_ns = BigInt(line[3]);
  value.event = { event_id: BigInt(line[4]), data, dp_rank: BigInt(line[6]) };
  return value;
}

function writtenDataValue(text: string): unknown {
  if (text === '"cleared"') return 'cleared';
  const stored = WRITTEN_STORED.exec(text);
  if (stored !== null) {
    const blocks = writtenBlocks(stored[3]);
    if (blocks === null) return null;
    return { stored: { parent_hash: stored[1] === undefined ? null : BigInt(stored[1]), start_position: stored[2] === undefined ? null : BigInt(stored[2]), blocks } };
  }
  const removed = WRITTEN_REMOVED.exec(text);
  if (removed === null) return null;
  const list = removed[1];
  return { removed: { block_hashes: list === undefined ? [] : list.split(',').map(BigInt) } };
}

/** The blocks of a Stored as written, separated by commas; null when the text is anything else. */
function writtenBlocks(text: string): JsonObject[] | null {
  const blocks: JsonObject[] = [];
  if (text === '') return blocks;
  for (let at = 0; ; at++) {
    WRITTEN_BLOCK.lastIndex = at;
    const block = WRITTEN_BLOCK.exec(text);
    if (block === null) return null;
    blocks.push({ block_hash: BigInt(block[1]), tokens_hash: BigInt(block[2]), mm_extra_info: null });
    at = WRITTEN_BLOCK.lastIndex;
    if (at === text.length) return blocks;
    if (text.charCodeAt(at) !== COMMA) return null;
  }
}

function readLine(value: unknown): WireBatch {
  const line = objectAt(value, '');
  if (isRecorderEntry(line)) return readRecorderEntry(line);
  return readRouterLine(line, '', timestampOf(line));
}

/**
 * Dynamo's KV event recorder writes each event it saw as {"timestamp": <whole ms since the recorder
 * started>, "event": <a RouterEvent: worker_id, storage_tier, event>}: a line whose `event` holds
 * the worker id is one of those.
 */
function isRecorderEntry(line: JsonObject): boolean {
  return line.worker_id === undefined && isObject(line.event) && line.event.worker_id !== undefined;
}

function readRecorderEntry(line: JsonObject): WireBatch {
  const stamp = optional(line.timestamp);
  if (stamp !== undefined && (typeof stamp !== 'bigint' || stamp < 0n)) throw expectation('timestamp', 'a whole number of milliseconds (the recorder\'s)', stamp);
  const timestamp_ns = stamp === undefined ? null : (stamp as bigint) * 1_000_000n;
  return readRouterLine(objectAt(line.event, 'event'), 'event.', timestamp_ns);
}

/** A line of one rank's events (`prefix`: where it stands in the line, for messages). */
function readRouterLine(line: JsonObject, prefix: string, timestamp_ns: bigint | null): WireBatch {
  const worker_id = workerIdAt(line.worker_id, `${prefix}worker_id`);
  const lineRank = optional(line.dp_rank) === undefined ? null : safeUintAt(line.dp_rank, `${prefix}dp_rank`);
  const lineTier = tierAt(line.storage_tier, `${prefix}storage_tier`, STORAGE_TIER);
  const ownerDomain = cacheOwnerDomain(line.residency_domain, `${prefix}residency_domain`);
  const entries = eventEntries(line, prefix);
  const dp_rank = batchRank(entries, lineRank);
  const events = entries.map(({ value: event, path }) => readEvent(objectAt(event, path), path, { worker_id, dp_rank }, lineTier));
  // A cache owner's domain (Dynamo's residency_domain "cache_owner") is not the worker's own residency, which the mirror keeps.
  if (ownerDomain) for (const event of events) event.passed_over ??= 'cache_owner';
  return { worker_id, dp_rank, timestamp_ns, events };
}

/** Whether a RouterEvent's `residency_domain` is a cache owner's ("cache_owner"), not the worker's ("worker", absent, or another name, as Dynamo reads any). */
function cacheOwnerDomain(value: unknown, path: string): boolean {
  if (optional(value) === undefined) return false;
  if (typeof value !== 'string') throw expectation(path, 'a residency domain name such as "worker" or "cache_owner"', value);
  return value === 'cache_owner';
}

/** The line's events with their paths: `event` for a single event, `events[i]` for a batch. */
function eventEntries(line: JsonObject, prefix: string): { value: unknown; path: string }[] {
  const single = line.event !== undefined;
  const batch = line.events !== undefined;
  if (single === batch) throw new FieldError(prefix.replace(/\.$/, ''), 'expected exactly one of "event" (one event) or "events" (a batch)');
  if (single) return [{ value: line.event, path: `${prefix}event` }];
  return arrayAt(line.events, `${prefix}events`).map((value, index) => ({ value, path: `${prefix}events[${index}]` }));
}

/**
 * The one dp rank of a line: the line's own (kvqual's older batch lines; an event without one takes
 * it), else the events' (Dynamo puts it there, and reads an event without one as rank 0, so every
 * event of such a line must name the same rank, a missing one counting as 0).
 */
function batchRank(entries: { value: unknown; path: string }[], lineRank: number | null): number {
  let rank = lineRank;
  let firstPath: string | null = null;
  for (const { value, path } of entries) {
    const eventRank = optional(objectAt(value, path).dp_rank);
    if (eventRank === undefined && lineRank !== null) continue;
    const own = eventRank === undefined ? 0 : safeUintAt(eventRank, `${path}.dp_rank`);
    if (rank !== null && own !== rank) {
      const given = eventRank === undefined ? 'no dp rank (read as 0, as Dynamo reads it)' : `dp rank ${own}`;
      const other = lineRank !== null ? `the line's dp rank ${rank}` : `${firstPath}'s dp rank ${rank}`;
      throw new FieldError(`${path}.dp_rank`, `${given} differs from ${other} (a line holds one rank's events)`);
    }
    rank = own;
    firstPath ??= path;
  }
  return rank ?? 0;
}

function readEvent(event: JsonObject, path: string, rank: RankRef, lineTier: WireTier | null): KvEvent {
  const event_id = safeUintAt(event.event_id, `${path}.event_id`);
  const eventTier = tierAt(event.medium, `${path}.medium`, MEDIUM);
  const { data, tier: dataTier, tierPath } = readData(event.data, `${path}.data`);
  const tier = agreeingTier([
    { tier: lineTier, path: 'storage_tier' },
    { tier: eventTier, path: `${path}.medium` },
    { tier: dataTier, path: tierPath },
  ]);
  if (tier === 'disk' || tier === 'external') return { event_id, worker_id: rank.worker_id, dp_rank: rank.dp_rank, tier: 'Device', data, passed_over: tier };
  return { event_id, worker_id: rank.worker_id, dp_rank: rank.dp_rank, tier, data };
}

/** The tier named by the line, event and data (absent means Device); they must not contradict. */
function agreeingTier(sources: { tier: WireTier | null; path: string }[]): WireTier {
  const named = sources.filter((source): source is { tier: WireTier; path: string } => source.tier !== null);
  for (const source of named.slice(1)) {
    if (source.tier !== named[0].tier) {
      throw new FieldError(source.path, `tier ${source.tier} contradicts ${named[0].path} (tier ${named[0].tier})`);
    }
  }
  return named[0]?.tier ?? 'Device';
}

const DATA_SHAPES = '{"stored": {…}}, {"removed": {…}}, "cleared" or {"cleared": {}}';
const DATA_VARIANTS = ['stored', 'removed', 'cleared'];

/** `data`: serde's externally tagged enum, `"cleared"` or an object with exactly one variant key. */
function readData(value: unknown, path: string): { data: KvEventData; tier: WireTier | null; tierPath: string } {
  if (value === 'cleared') return { data: { type: 'Cleared' }, tier: null, tierPath: path };
  if (!isObject(value) || Object.keys(value).length !== 1) throw expectation(path, DATA_SHAPES, value);
  const [variant] = Object.keys(value);
  if (!DATA_VARIANTS.includes(variant)) throw new FieldError(path, `expected ${DATA_SHAPES}, got an object with key "${variant}"`);
  const bodyPath = `${path}.${variant}`;
  const body = objectAt(value[variant], bodyPath);
  const tierPath = `${bodyPath}.medium`;
  return { data: readVariant(variant, body, bodyPath), tier: tierAt(body.medium, tierPath, MEDIUM), tierPath };
}

function readVariant(variant: string, body: JsonObject, path: string): KvEventData {
  if (variant === 'stored') return readStored(body, path);
  if (variant === 'removed') {
    const block_hashes = arrayAt(body.block_hashes, `${path}.block_hashes`).map((hash, index) => u64At(hash, `${path}.block_hashes[${index}]`));
    return { type: 'Removed', block_hashes };
  }
  return { type: 'Cleared' };
}

function readStored(body: JsonObject, path: string): KvEventData {
  const parent = optional(body.parent_hash);
  const start = optional(body.start_position);
  const blocks = arrayAt(body.blocks, `${path}.blocks`).map((block, index) => readBlock(block, `${path}.blocks[${index}]`));
  return {
    type: 'Stored',
    parent_hash: parent === undefined ? null : u64At(parent, `${path}.parent_hash`),
    start_position: start === undefined ? null : safeUintAt(start, `${path}.start_position`),
    blocks,
  };
}

function readBlock(value: unknown, path: string): HashedBlock {
  const block = objectAt(value, path);
  return { block_hash: u64At(block.block_hash, `${path}.block_hash`), tokens_hash: u64At(block.tokens_hash, `${path}.tokens_hash`) };
}

/** The line's timestamp in exact ns from whichever one of timestamp_ns, timestamp_ms, ts is given. */
function timestampOf(line: JsonObject): bigint | null {
  const given = TIMESTAMP_FIELDS.filter(({ key }) => optional(line[key]) !== undefined);
  if (given.length === 0) return null;
  if (given.length > 1) throw new FieldError(given[1].key, `give one timestamp, not both ${given[0].key} and ${given[1].key}`);
  const { key, unit, rounding } = given[0];
  const value = line[key];
  const expected = rounding === 'exact' ? 'a non-negative integer' : `a non-negative number of ${unit === 's' ? 'seconds' : 'milliseconds'}`;
  if (typeof value !== 'bigint' && !isLosslessNumber(value)) throw new FieldError(key, `expected ${expected}, got ${describeValue(value)}`);
  try {
    return decimalToBigNs(String(value), unit, rounding);
  } catch (error) {
    if (error instanceof DurationError) throw new FieldError(key, `expected ${expected} that fits 64 bits of ns, got ${describeValue(value)}`);
    throw error;
  }
}

// ── Field readers: each checks one JSON value at a path ────────────────────────────────────

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value);
}

/** A field that is absent or null. */
function optional(value: unknown): unknown {
  return value === null ? undefined : value;
}

function objectAt(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw expectation(path, 'a JSON object', value);
  return value;
}

function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw expectation(path, 'an array', value);
  return value;
}

/** A non-negative integer that a JS number holds exactly (ids, ranks, positions). */
function safeUintAt(value: unknown, path: string): number {
  if (typeof value !== 'bigint' || value < 0n || value > SAFE_LIMIT) throw expectation(path, `an integer from 0 to ${SAFE_LIMIT}`, value);
  return Number(value);
}

/** A worker id: a JSON integer from 0 to 2^64 − 1 (Dynamo's are u64), as the number it stands as (workerIdOf). */
function workerIdAt(value: unknown, path: string): number {
  if (typeof value !== 'bigint' || value < 0n || value >= U64_LIMIT) throw expectation(path, 'an unsigned 64-bit integer', value);
  return workerIdOf(value);
}

/** A u64 block hash: a JSON integer, a decimal string or a "0x…" hex string. */
function u64At(value: unknown, path: string): BlockHash {
  const hash = typeof value === 'string' ? hashFromString(value) : value;
  if (typeof hash !== 'bigint' || hash < 0n || hash >= U64_LIMIT) throw expectation(path, 'an unsigned 64-bit integer', value);
  return hash;
}

function hashFromString(text: string): bigint | null {
  if (/^\d+$/.test(text)) return BigInt(text);
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) return BigInt(`0x${text.slice(2)}`);
  return null;
}

/** A tier named by a string field, or null when the field is absent or null. */
function tierAt(value: unknown, path: string, names: TierNames): WireTier | null {
  if (optional(value) === undefined) return null;
  const tier = typeof value === 'string' ? names.tiers.get(value) : undefined;
  if (tier === undefined) throw expectation(path, names.expected, value);
  return tier;
}

function expectation(path: string, expected: string, value: unknown): FieldError {
  const got = value === undefined ? 'but the field is missing' : `got ${describeValue(value)}`;
  return new FieldError(path, `expected ${expected}, ${got}`);
}

/** A short rendering of an unexpected value: strings quoted, numbers as written. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return `"${printable(value)}"`;
  if (typeof value === 'bigint' || isLosslessNumber(value)) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (isObject(value)) return 'an object';
  return String(value);
}

// ── Writing ─────────────────────────────────────────────────────────────────────────────────

/** A simulator batch as a wire batch (its emission time becomes the line's timestamp). */
export function fromKvEventBatch(batch: KvEventBatch): WireBatch {
  return { worker_id: batch.worker_id, dp_rank: batch.dp_rank, timestamp_ns: BigInt(batch.emitted_ns), events: batch.events };
}

/**
 * The lines of a batch, one event a line, each as Dynamo's `RouterEvent` serializes it (so Dynamo's
 * router and indexer decode kvqual's logs): `worker_id`, `storage_tier` ("device" or
 * "host_pinned"), the batch's emission time as `timestamp_ns` (a field serde passes over), and
 * `event` with `event_id`, `data` (serde's externally tagged enum; a stored block's
 * `mm_extra_info` null) and `dp_rank`; hashes as JSON integers; every line ends with a line break.
 * Written directly as text (the shape is fixed and every value a number, null or one of a few fixed
 * strings): a general JSON writer that keeps u64 exact made this most of the cost of `--events-out`.
 */
export function toWireLines(batch: WireBatch): string {
  const head = `{"worker_id":${exactWorkerId(batch.worker_id)}`;
  const stamp = batch.timestamp_ns === null ? '' : `,"timestamp_ns":${batch.timestamp_ns}`;
  let text = '';
  for (const event of batch.events) {
    text += `${head},"storage_tier":"${event.tier === 'HostPinned' ? 'host_pinned' : 'device'}"${stamp},"event":{"event_id":${event.event_id},"data":${dataText(event.data)},"dp_rank":${batch.dp_rank}}}\n`;
  }
  return text;
}

function dataText(data: KvEventData): string {
  switch (data.type) {
    case 'Stored': {
      const blocks = data.blocks;
      let text = `{"stored":{"parent_hash":${data.parent_hash ?? 'null'},"start_position":${data.start_position ?? 'null'},"blocks":[`;
      for (let i = 0; i < blocks.length; i++) text += `${i === 0 ? '' : ','}{"block_hash":${blocks[i].block_hash},"tokens_hash":${blocks[i].tokens_hash},"mm_extra_info":null}`;
      return `${text}]}}`;
    }
    case 'Removed':
      return `{"removed":{"block_hashes":[${data.block_hashes.join(',')}]}}`;
    case 'Cleared':
      return '"cleared"';
  }
}
