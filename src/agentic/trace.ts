// Agentic workloads (AGX-1) and their trace format: plays of requests with sessions, authored
// start offsets and dependency edges, read from Agentic Mooncake v2 JSON lines (a header line,
// then one request per line, read one line at a time). Bad rows give one error naming the line
// and the problem.
import { TraceLineError } from '../traceLineError';
import { msProblem, msToNs, type Nanos } from '../time';
import { describeJsonValue, hashIdsProblem, parseJsonLine, type SourceLine, textLines, wholeProblem } from '../inputFiles';
import { LIMITS, limitText } from '../limits';
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
  /** Sorted by play_id (AGX-3 assigns sorted plays to lanes). */
  plays: SourcePlay[];
}

export class AgenticTraceError extends TraceLineError {}

type Row = Record<string, unknown>;

const ROW_FIELDS = ['request_id', 'play_id', 'session_id', 'input_length', 'output_length', 'hash_ids', 'not_before_ms', 'dependencies'];
const DEPENDENCY_FIELDS = ['predecessor', 'trigger', 'delay_ms', 'relation'];
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
    const { play_id, node } = parseRow(row, blockSize, source, sourceLine);
    const previous = seen.get(node.request_id);
    if (previous) throw new AgenticTraceError(source, line, `request_id "${node.request_id}" already used on line ${previous.line}`);
    seen.set(node.request_id, { play: play_id, line });
    if (!byPlay.has(play_id)) byPlay.set(play_id, []);
    byPlay.get(play_id)!.push(node);
  }
  if (headerLine === 0) throw new AgenticTraceError(source, 1, `the first line must be the header {"schema":"${AGENTIC_SCHEMA}","version":${AGENTIC_VERSION},"block_size":…}`);
  if (byPlay.size === 0) throw new AgenticTraceError(source, headerLine, 'the trace has a header but no requests; a workload needs at least one');
  const plays = [...byPlay.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([play_id, nodes]) => ({ play_id, nodes: orderPlay(play_id, nodes, seen, source) }));
  return { block_size: blockSize, plays };
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
  if (row.schema !== AGENTIC_SCHEMA) throw new AgenticTraceError(source, line, `header: schema must be "${AGENTIC_SCHEMA}", got ${describeJsonValue(row.schema)}`);
  if (row.version !== AGENTIC_VERSION) throw new AgenticTraceError(source, line, `header: version ${describeJsonValue(row.version)} is not supported (expected ${AGENTIC_VERSION})`);
  const blockSize = row.block_size;
  if (typeof blockSize !== 'number' || !Number.isInteger(blockSize) || blockSize <= 0) {
    throw new AgenticTraceError(source, line, `header: block_size must be a positive whole number, got ${describeJsonValue(blockSize)}`);
  }
  if (blockSize > LIMITS.block_size) throw new AgenticTraceError(source, line, `header: block_size ${blockSize} is above the limit of ${limitText(LIMITS.block_size)} tokens`);
  return blockSize;
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

function parseRow(row: Row, blockSize: number, source: string, sourceLine: SourceLine): { play_id: string; node: AgenticNode } {
  const line = sourceLine.number;
  const unknown = Object.keys(row).filter((key) => !ROW_FIELDS.includes(key));
  if (unknown.length > 0) throw new AgenticTraceError(source, line, `unknown field ${printableKey(unknown[0])}${didYouMean(unknown[0], ROW_FIELDS)}`);
  const input_length = wholeNumber(row, 'input_length', source, line, 1, LIMITS.prompt_tokens);
  const hashProblem = hashIdsProblem(row.hash_ids, sourceLine);
  if (hashProblem !== null) throw new AgenticTraceError(source, line, hashProblem);
  const hash_ids = row.hash_ids as number[];
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
      output_length: wholeNumber(row, 'output_length', source, line, 0, LIMITS.output_tokens),
      hash_ids: hash_ids as number[],
      not_before_ns: milliseconds(row.not_before_ms ?? 0, 'not_before_ms', source, line),
      dependencies: dependencies.map((dependency, i) => parseDependency(dependency, `dependencies[${i}]`, source, line)),
      line,
    },
  };
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
  return {
    predecessor: text(row, 'predecessor', source, line),
    trigger: trigger as Trigger,
    delay_ns: milliseconds(row.delay_ms ?? 0, `${at}.delay_ms`, source, line),
    relation: relation as Relation,
  };
}

/** Checks every predecessor exists in the same play and that the edges form no cycle; returns a topological order (stable by line). */
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
        throw new AgenticTraceError(source, predecessor.line, `dependency cycle: ${[...path.slice(path.indexOf(predecessor.request_id)), predecessor.request_id].join(' → ')}`);
      }
      state.set(predecessor.request_id, 'visiting');
      stack.push({ node: predecessor, next: 0 });
    }
  }
  return ordered;
}
