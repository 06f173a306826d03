// Agentic workloads (AGX-1) and their trace format: plays of requests with sessions, authored
// start offsets and dependency edges, read from Agentic Mooncake v2 JSON lines (a header line,
// then one request per line, read one line at a time). Bad rows give one error naming the line
// and the problem. Both ways of writing v2 are read: the spec's (a dependency names its
// `predecessor`) and AISimulate's and Dynamo's (a dependency names it `request_id`; the header has
// `hash_id_scope` and `source`; rows have `model` and may number their play with
// `source_play_ordinal`). Fields that would change what a request does in AISimulate and that
// kvqual does not model (priorities) are refused unless they are at their neutral value.
import { TraceLineError } from '../traceLineError';
import { msProblem, msToNs, type Nanos } from '../time';
import { describeJsonValue, exactJsonIntegers, hashIdsProblem, parseJsonLine, type SourceLine, textLines, wholeProblem } from '../inputFiles';
import { LIMITS, limitText, MAX_HASH_ID } from '../limits';
import { didYouMean } from '../suggest';

export const AGENTIC_SCHEMA = 'dynamo.agentic_mooncake';
export const AGENTIC_VERSION = 2;

export type Trigger = 'dispatch' | 'completion';
export type Relation = 'sequence' | 'spawn' | 'join' | 'replay_barrier';

export interface Dependency {
  predecessor: string;
  trigger: Trigger;
  delay_ns: Nanos;
  relation: Relation;
}

export interface AgenticNode {
  request_id: string;
  session_id: string;
  input_length: number;
  output_length: number;
  hash_ids: number[];
  not_before_ns: Nanos;
  dependencies: Dependency[];
  /** 1-based line in the trace file, for messages. */
  line: number;
}

/** One agent trajectory of the source trace; its nodes in a dependency-respecting order. */
export interface SourcePlay {
  play_id: string;
  nodes: AgenticNode[];
}

export interface AgenticTrace {
  block_size: number;
  /** Sorted by source_play_ordinal when the trace numbers its plays, else by play_id (AGX-3 assigns sorted plays to lanes). */
  plays: SourcePlay[];
}

export class AgenticTraceError extends TraceLineError {}

type Row = Record<string, unknown>;

const HEADER_FIELDS = ['schema', 'version', 'block_size', 'hash_id_scope', 'source'];
/** The one hash id scope of v2: ids name blocks inside a play (AGX-4 keeps them play-local). */
const HASH_ID_SCOPES: readonly string[] = ['local'];
const SOURCE_FIELDS = ['format', 'digest'];
const ROW_FIELDS = [
  'request_id',
  'play_id',
  'session_id',
  'input_length',
  'output_length',
  'hash_ids',
  'not_before_ms',
  'dependencies',
  // As AISimulate and Dynamo write v2:
  'model',
  'source_play_ordinal',
  'input_tokens',
  'output_tokens',
  'output_token_ids',
  'recorded_api_time_ms',
  'priority',
  'strict_priority',
  'policy_class',
];
/** A dependency names its predecessor `predecessor` (the spec) or `request_id` (AISimulate, Dynamo). */
const DEPENDENCY_FIELDS = ['predecessor', 'request_id', 'trigger', 'delay_ms', 'relation'];
const TRIGGERS: readonly string[] = ['dispatch', 'completion'];
const RELATIONS: readonly string[] = ['sequence', 'spawn', 'join', 'replay_barrier'];

/** Reads a trace held in memory. */
export function parseAgenticTrace(text: string, source = 'agentic trace'): AgenticTrace {
  return parseAgenticLines(textLines(text, source), source);
}

/** Reads a trace line by line (see inputFiles.fileLines). */
export function parseAgenticLines(lines: Iterable<SourceLine>, source = 'agentic trace'): AgenticTrace {
  let headerLine = 0;
  let blockSize = 0;
  const byPlay = new Map<string, AgenticNode[]>();
  const seen = new Map<string, { play: string; line: number }>();
  const ordinals = new PlayOrdinals(source);
  const wideIds = new WideHashIds(source);
  for (const sourceLine of lines) {
    const line = sourceLine.number;
    if (sourceLine.text.trim() === '') continue;
    const row = parseJson(sourceLine, source);
    if (headerLine === 0) {
      blockSize = parseHeader(row, source, line);
      headerLine = line;
      continue;
    }
    if (seen.size >= LIMITS.requests) throw new AgenticTraceError(source, line, `the trace has more than ${limitText(LIMITS.requests)} requests (the limit)`);
    const { play_id, node, ordinal } = parseRow(row, blockSize, source, sourceLine, wideIds);
    ordinals.note(play_id, ordinal, line);
    const previous = seen.get(node.request_id);
    if (previous) throw new AgenticTraceError(source, line, `request_id "${node.request_id}" already used on line ${previous.line}`);
    seen.set(node.request_id, { play: play_id, line });
    if (!byPlay.has(play_id)) byPlay.set(play_id, []);
    byPlay.get(play_id)!.push(node);
  }
  if (headerLine === 0) throw new AgenticTraceError(source, 1, `the first line must be the header {"schema":"${AGENTIC_SCHEMA}","version":${AGENTIC_VERSION},"block_size":…}`);
  if (byPlay.size === 0) throw new AgenticTraceError(source, headerLine, 'the trace has a header but no requests; a workload needs at least one');
  const plays = ordinals.sorted([...byPlay.keys()]).map((play_id) => ({ play_id, nodes: orderPlay(play_id, byPlay.get(play_id)!, seen, source) }));
  return { block_size: blockSize, plays };
}

/**
 * AISimulate's `source_play_ordinal`: when one row numbers its play, every row must, each play with
 * one number, and the numbers are 0 … plays − 1 once each; the plays are then taken in that order
 * (by play_id otherwise).
 */
class PlayOrdinals {
  private readonly byPlay = new Map<string, { ordinal: number | null; line: number }>();
  private numbered: { play: string; line: number } | null = null;
  private unnumbered: { play: string; line: number } | null = null;

  constructor(private readonly source: string) {}

  note(play: string, ordinal: number | null, line: number): void {
    if (ordinal === null) this.unnumbered ??= { play, line };
    else this.numbered ??= { play, line };
    if (this.numbered !== null && this.unnumbered !== null) {
      const later = this.numbered.line > this.unnumbered.line ? this.numbered : this.unnumbered;
      const earlier = later === this.numbered ? this.unnumbered : this.numbered;
      throw new AgenticTraceError(
        this.source,
        later.line,
        `source_play_ordinal is ${later === this.numbered ? 'given here' : 'missing here'} but ${earlier === this.numbered ? 'given' : 'missing'} on line ${earlier.line}: a trace numbers all of its rows' plays or none`,
      );
    }
    const first = this.byPlay.get(play);
    if (first === undefined) this.byPlay.set(play, { ordinal, line });
    else if (first.ordinal !== ordinal) {
      throw new AgenticTraceError(this.source, line, `source_play_ordinal ${ordinal} for play "${play}", which line ${first.line} numbers ${first.ordinal}`);
    }
  }

  /** The plays in the order lanes take them. */
  sorted(plays: string[]): string[] {
    if (this.numbered === null) return plays.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const byOrdinal = new Map<number, string>();
    for (const play of plays) {
      const { ordinal, line } = this.byPlay.get(play)!;
      const other = byOrdinal.get(ordinal!);
      if (other !== undefined) throw new AgenticTraceError(this.source, line, `source_play_ordinal ${ordinal} numbers both play "${other}" and play "${play}"`);
      if (ordinal! >= plays.length) {
        throw new AgenticTraceError(this.source, line, `source_play_ordinal ${ordinal} for play "${play}": the trace has ${plays.length} plays, numbered 0 to ${plays.length - 1}`);
      }
      byOrdinal.set(ordinal!, play);
    }
    return plays.map((_, ordinal) => byOrdinal.get(ordinal)!);
  }
}

/** How many requests the trace holds. */
export function agenticRequestCount(trace: AgenticTrace): number {
  return trace.plays.reduce((total, play) => total + play.nodes.length, 0);
}

function parseJson(line: SourceLine, source: string): Row {
  const value = parseJsonLine(line, source, AgenticTraceError);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AgenticTraceError(source, line.number, `expected a JSON object, got ${describeJsonValue(value)}`);
  return value as Row;
}

function parseHeader(row: Row, source: string, line: number): number {
  const unknown = Object.keys(row).filter((key) => !HEADER_FIELDS.includes(key));
  if (unknown.length > 0) throw new AgenticTraceError(source, line, `header: unknown field ${printableKey(unknown[0])}${didYouMean(unknown[0], HEADER_FIELDS)}`);
  if (row.schema !== AGENTIC_SCHEMA) throw new AgenticTraceError(source, line, `header: schema must be "${AGENTIC_SCHEMA}", got ${describeJsonValue(row.schema)}`);
  if (row.version !== AGENTIC_VERSION) throw new AgenticTraceError(source, line, `header: version ${describeJsonValue(row.version)} is not supported (expected ${AGENTIC_VERSION})`);
  const blockSize = row.block_size;
  if (typeof blockSize !== 'number' || !Number.isInteger(blockSize) || blockSize <= 0) {
    throw new AgenticTraceError(source, line, `header: block_size must be a positive whole number, got ${describeJsonValue(blockSize)}`);
  }
  if (blockSize > LIMITS.block_size) throw new AgenticTraceError(source, line, `header: block_size ${blockSize} is above the limit of ${limitText(LIMITS.block_size)} tokens`);
  if ('hash_id_scope' in row && (typeof row.hash_id_scope !== 'string' || !HASH_ID_SCOPES.includes(row.hash_id_scope))) {
    throw new AgenticTraceError(source, line, `header: hash_id_scope must be "local" (hash ids name blocks inside one play), got ${describeJsonValue(row.hash_id_scope)}`);
  }
  if ('source' in row) parseSourceField(row.source, source, line);
  return blockSize;
}

/** The header's `source`, where the trace was made from: { format, digest }, both non-empty text (recorded by AISimulate; kvqual only checks it). */
function parseSourceField(value: unknown, source: string, line: number): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgenticTraceError(source, line, `header: source must be an object {"format": …, "digest": …}, got ${describeJsonValue(value)}`);
  }
  const fields = value as Row;
  const unknown = Object.keys(fields).filter((key) => !SOURCE_FIELDS.includes(key));
  if (unknown.length > 0) throw new AgenticTraceError(source, line, `header: source: unknown field ${printableKey(unknown[0])}${didYouMean(unknown[0], SOURCE_FIELDS)}`);
  for (const field of SOURCE_FIELDS) {
    if (typeof fields[field] !== 'string' || fields[field] === '') {
      throw new AgenticTraceError(source, line, `header: source.${field} must be a non-empty string, got ${describeJsonValue(fields[field])}`);
    }
  }
}

function wholeNumber(row: Row, field: string, source: string, line: number, minimum: number, maximum: number): number {
  const value = row[field];
  const problem = wholeProblem(field, value, minimum, maximum, 'tokens');
  if (problem !== null) throw new AgenticTraceError(source, line, problem);
  return value as number;
}

function text(row: Row, field: string, source: string, line: number): string {
  const value = row[field];
  if (typeof value !== 'string' || value === '') throw new AgenticTraceError(source, line, `${field} must be a non-empty string, got ${describeJsonValue(value)}`);
  return value;
}

function milliseconds(value: unknown, field: string, source: string, line: number): Nanos {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new AgenticTraceError(source, line, `${field} must be a number of milliseconds, got ${describeJsonValue(value)}`);
  if (value < 0) throw new AgenticTraceError(source, line, `${field} must not be negative, got ${value}`);
  const problem = msProblem(value, LIMITS.time_ms);
  if (problem !== null) throw new AgenticTraceError(source, line, `${field}: ${problem}`);
  return msToNs(value, field);
}

const U64_LIMIT = 1n << 64n;

/**
 * A row's hash_ids. AISimulate writes 64-bit ids (its importers take the first 64 bits of a content
 * hash), which a JavaScript number cannot hold exactly: each distinct id above 2^53 − 1, read exactly
 * from the line, stands in the trace for a negative number of its own, −1, −2, … in the order first
 * met. Only which ids are equal matters (a trace block's tokens are made from its id inside its
 * play's namespace, AGX-4), and no other id is negative, so no two ids share a number.
 */
class WideHashIds {
  private readonly numbers = new Map<string, number>();

  constructor(private readonly source: string) {}

  hashIdsOf(value: unknown, line: SourceLine): number[] {
    const wide = Array.isArray(value) && value.some((id) => typeof id === 'number' && Number.isInteger(id) && id > MAX_HASH_ID);
    if (!wide) {
      const problem = hashIdsProblem(value, line);
      if (problem !== null) throw new AgenticTraceError(this.source, line.number, problem);
      return value as number[];
    }
    const exact = exactJsonIntegers(line.text, ['hash_ids']);
    if ('problem' in exact) throw new AgenticTraceError(this.source, line.number, exact.problem);
    return exact.integers.map((id, i) => {
      if (id === null || id < 0n) throw new AgenticTraceError(this.source, line.number, `hash_ids[${i}] must be a whole number ≥ 0, got ${describeJsonValue((value as unknown[])[i])}`);
      if (id <= BigInt(MAX_HASH_ID)) return Number(id);
      if (id >= U64_LIMIT) throw new AgenticTraceError(this.source, line.number, `hash_ids[${i}]: ${exact.written[i]} is above 2^64 − 1, the largest hash id`);
      const digits = id.toString();
      let number = this.numbers.get(digits);
      if (number === undefined) {
        number = -(this.numbers.size + 1);
        this.numbers.set(digits, number);
      }
      return number;
    });
  }
}

/** The field a row gives of two names for one thing (`input_length` or AISimulate's `input_tokens`): one, not both. */
function eitherName(row: Row, name: string, alias: string, source: string, line: number): string {
  if (name in row && alias in row) throw new AgenticTraceError(source, line, `${name} and ${alias} name the same thing: give one of them`);
  return alias in row ? alias : name;
}

function parseRow(row: Row, blockSize: number, source: string, sourceLine: SourceLine, wideIds: WideHashIds): { play_id: string; node: AgenticNode; ordinal: number | null } {
  const line = sourceLine.number;
  const unknown = Object.keys(row).filter((key) => !ROW_FIELDS.includes(key));
  if (unknown.length > 0) throw new AgenticTraceError(source, line, `unknown field ${printableKey(unknown[0])}${didYouMean(unknown[0], ROW_FIELDS)}`);
  const input_length = wholeNumber(row, eitherName(row, 'input_length', 'input_tokens', source, line), source, line, 1, LIMITS.prompt_tokens);
  const output_length = wholeNumber(row, eitherName(row, 'output_length', 'output_tokens', source, line), source, line, 0, LIMITS.output_tokens);
  checkRecordedFields(row, output_length, source, line);
  const hash_ids = wideIds.hashIdsOf(row.hash_ids, sourceLine);
  const expected = Math.ceil(input_length / blockSize);
  if (hash_ids.length !== expected) {
    throw new AgenticTraceError(source, line, `hash_ids has ${hash_ids.length} ids for input_length ${input_length}; expected ${expected} at block_size ${blockSize}`);
  }
  const dependencies = row.dependencies ?? [];
  if (!Array.isArray(dependencies)) throw new AgenticTraceError(source, line, 'dependencies must be a list');
  return {
    play_id: text(row, 'play_id', source, line),
    node: {
      request_id: text(row, 'request_id', source, line),
      session_id: text(row, 'session_id', source, line),
      input_length,
      output_length,
      hash_ids: hash_ids as number[],
      not_before_ns: milliseconds(row.not_before_ms ?? 0, 'not_before_ms', source, line),
      dependencies: dependencies.map((dependency, i) => parseDependency(dependency, `dependencies[${i}]`, source, line)),
      line,
    },
    ordinal: 'source_play_ordinal' in row ? playOrdinal(row.source_play_ordinal, source, line) : null,
  };
}

function playOrdinal(value: unknown, source: string, line: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new AgenticTraceError(source, line, `source_play_ordinal must be a whole number ≥ 0, got ${describeJsonValue(value)}`);
  return value;
}

/**
 * Fields AISimulate reads or records that change nothing kvqual models: checked as AISimulate checks
 * them, then left aside. Its scheduling priorities would change the order requests run in, which
 * kvqual (first come, first served, ENG-1) does not model: only their neutral values are accepted.
 */
function checkRecordedFields(row: Row, output_length: number, source: string, line: number): void {
  if ('model' in row) text(row, 'model', source, line);
  if ('recorded_api_time_ms' in row) milliseconds(row.recorded_api_time_ms, 'recorded_api_time_ms', source, line);
  if ('output_token_ids' in row) {
    const ids = row.output_token_ids;
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 0xffffffff)) {
      throw new AgenticTraceError(source, line, `output_token_ids must be a list of token ids (whole numbers from 0 to 2^32 − 1), got ${describeJsonValue(ids)}`);
    }
    if (ids.length !== output_length) throw new AgenticTraceError(source, line, `output_token_ids has ${ids.length} tokens for output_length ${output_length}`);
  }
  const unmodelled = 'kvqual schedules first come, first served (ENG-1) and does not model priorities';
  for (const field of ['priority', 'strict_priority']) {
    if (field in row && row[field] !== 0) throw new AgenticTraceError(source, line, `${field} ${describeJsonValue(row[field])}: ${unmodelled}; give 0 or leave the field out`);
  }
  if ('policy_class' in row && row.policy_class !== null) {
    throw new AgenticTraceError(source, line, `policy_class ${describeJsonValue(row.policy_class)}: ${unmodelled}; give null or leave the field out`);
  }
}

function printableKey(key: string): string {
  return describeJsonValue(key).slice(1, -1);
}

function parseDependency(value: unknown, at: string, source: string, line: number): Dependency {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AgenticTraceError(source, line, `${at} must be an object`);
  const row = value as Row;
  const unknown = Object.keys(row).filter((key) => !DEPENDENCY_FIELDS.includes(key));
  if (unknown.length > 0) throw new AgenticTraceError(source, line, `${at}: unknown field ${printableKey(unknown[0])}${didYouMean(unknown[0], DEPENDENCY_FIELDS)}`);
  const trigger = row.trigger ?? 'completion';
  const relation = row.relation ?? 'sequence';
  if (typeof trigger !== 'string' || !TRIGGERS.includes(trigger)) throw new AgenticTraceError(source, line, `${at}.trigger must be dispatch or completion, got ${describeJsonValue(trigger)}`);
  if (typeof relation !== 'string' || !RELATIONS.includes(relation)) {
    throw new AgenticTraceError(source, line, `${at}.relation must be one of ${RELATIONS.join(', ')}, got ${describeJsonValue(relation)}`);
  }
  if ('predecessor' in row && 'request_id' in row) throw new AgenticTraceError(source, line, `${at}: predecessor and request_id both name the predecessor: give one of them`);
  const named = 'request_id' in row ? 'request_id' : 'predecessor';
  const predecessor = row[named];
  if (typeof predecessor !== 'string' || predecessor === '') throw new AgenticTraceError(source, line, `${at}.${named} must be a non-empty string, got ${describeJsonValue(predecessor)}`);
  return {
    predecessor,
    trigger: trigger as Trigger,
    delay_ns: milliseconds(row.delay_ms ?? 0, `${at}.delay_ms`, source, line),
    relation: relation as Relation,
  };
}

/** Checks every predecessor exists in the same play and that the edges form no cycle; returns a topological order (stable by line). */
/** Requests of a dependency cycle named in its message, at most: a longer cycle is cut in the middle, saying how many hops were left out. */
const CYCLE_HOPS_SHOWN = 20;

/** A cycle's requests joined by arrows (the first again at the end); a long one shows its first and last hops around "… (N more) …". */
export function cycleText(cycle: readonly string[]): string {
  if (cycle.length <= CYCLE_HOPS_SHOWN) return cycle.join(' → ');
  const head = cycle.slice(0, CYCLE_HOPS_SHOWN / 2);
  const tail = cycle.slice(cycle.length - CYCLE_HOPS_SHOWN / 2);
  return `${head.join(' → ')} → … (${(cycle.length - CYCLE_HOPS_SHOWN).toLocaleString('en-US')} more) → ${tail.join(' → ')}`;
}

function orderPlay(play_id: string, nodes: AgenticNode[], seen: Map<string, { play: string; line: number }>, source: string): AgenticNode[] {
  const byId = new Map(nodes.map((node) => [node.request_id, node]));
  for (const node of nodes) {
    for (const dependency of node.dependencies) {
      const found = seen.get(dependency.predecessor);
      if (!found) throw new AgenticTraceError(source, node.line, `predecessor "${dependency.predecessor}" does not exist`);
      if (found.play !== play_id) throw new AgenticTraceError(source, node.line, `predecessor "${dependency.predecessor}" belongs to play "${found.play}", not "${play_id}"`);
    }
  }
  const ordered: AgenticNode[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  // Depth-first, post-order, with an explicit stack: a chain of a million requests listed last
  // to first must not overflow the call stack.
  for (const root of nodes) {
    if (state.get(root.request_id) === 'done') continue;
    const stack: { node: AgenticNode; next: number }[] = [{ node: root, next: 0 }];
    state.set(root.request_id, 'visiting');
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.next === frame.node.dependencies.length) {
        state.set(frame.node.request_id, 'done');
        ordered.push(frame.node);
        stack.pop();
        continue;
      }
      const predecessor = byId.get(frame.node.dependencies[frame.next++].predecessor)!;
      const seenAs = state.get(predecessor.request_id);
      if (seenAs === 'done') continue;
      if (seenAs === 'visiting') {
        const path = stack.map((entry) => entry.node.request_id);
        throw new AgenticTraceError(source, predecessor.line, `dependency cycle: ${cycleText([...path.slice(path.indexOf(predecessor.request_id)), predecessor.request_id])}`);
      }
      state.set(predecessor.request_id, 'visiting');
      stack.push({ node: predecessor, next: 0 });
    }
  }
  return ordered;
}
