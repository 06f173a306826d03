// Mooncake request traces (FAST'25 format: one JSON object per line with timestamp in ms,
// input_length, output_length and hash_ids of trace_block_size tokens each) turned into request
// specs, with line-numbered errors for bad rows. Lines are read one at a time; timestamps must not
// go backwards (the published traces are in time order, and a reordered one is refused, not sorted).
import { TraceLineError } from '../traceLineError';
import { msProblem, msToNs } from '../time';
import { tracePrompt } from '../prompt';
import type { RequestSpec } from '../sim/cluster';
import { describeJsonValue, hashIdsProblem, parseJsonLine, type SourceLine, textLines, wholeProblem } from '../inputFiles';
import { LIMITS, limitText } from '../limits';

export interface MooncakeOptions {
  trace_block_size: number;
  /** Take at most this many requests from the start of the trace. */
  max_requests: number | null;
  /** Multiply timestamps by this (0.5 replays twice as fast). */
  time_scale: number;
  first_ordinal: number;
}

export class MooncakeTraceError extends TraceLineError {}

/** Reads a trace held in memory. */
export function parseMooncakeTrace(text: string, source: string, options: MooncakeOptions): RequestSpec[] {
  return parseMooncakeLines(textLines(text, source), source, options);
}

/** Reads a trace line by line (see inputFiles.fileLines); stops after max_requests. */
export function parseMooncakeLines(lines: Iterable<SourceLine>, source: string, options: MooncakeOptions): RequestSpec[] {
  const requests: RequestSpec[] = [];
  let previous: { timestamp: number; line: number } | null = null;
  for (const line of lines) {
    if (options.max_requests !== null && requests.length >= options.max_requests) break;
    if (line.text.trim() === '') continue;
    const fail = (problem: string): never => {
      throw new MooncakeTraceError(source, line.number, problem);
    };
    if (requests.length >= LIMITS.requests) fail(`the trace has more than ${limitText(LIMITS.requests)} requests (the limit); set workload.mooncake.max_requests`);
    const value = parseJsonLine(line, source, MooncakeTraceError);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`expected a JSON object, got ${describeJsonValue(value)}`);
    const row = value as Record<string, unknown>;
    const input_length = row.input_length as number;
    const output_length = row.output_length as number;
    const problem =
      wholeProblem('input_length', input_length, 1, LIMITS.prompt_tokens, 'tokens') ?? wholeProblem('output_length', output_length, 0, LIMITS.output_tokens, 'tokens');
    if (problem !== null) fail(problem);
    const timestamp = row.timestamp;
    if (typeof timestamp !== 'number') fail(`timestamp must be a number of milliseconds, got ${describeJsonValue(timestamp)}`);
    const timeProblem = msProblem(timestamp as number, LIMITS.time_ms);
    if (timeProblem !== null) fail(`timestamp: ${timeProblem}`);
    if (previous !== null && (timestamp as number) < previous.timestamp) {
      fail(`timestamp ${timestamp} is before ${previous.timestamp} on line ${previous.line}: a Mooncake trace must be in time order`);
    }
    previous = { timestamp: timestamp as number, line: line.number };
    const hashProblem = hashIdsProblem(row.hash_ids, line);
    if (hashProblem !== null) fail(hashProblem);
    const hash_ids = row.hash_ids as number[];
    const expected = Math.ceil(input_length / options.trace_block_size);
    if (hash_ids.length !== expected) {
      fail(`hash_ids has ${hash_ids.length} ids for input_length ${input_length}; expected ${expected} at ${options.trace_block_size} tokens per id`);
    }
    const scaled = Number(((timestamp as number) * options.time_scale).toFixed(6));
    if (scaled > LIMITS.time_ms) fail(`timestamp ${timestamp} × time_scale ${options.time_scale} = ${scaled} ms is above the limit of ${limitText(LIMITS.time_ms)} ms`);
    const ordinal = options.first_ordinal + requests.length;
    requests.push({
      identity: { request_id: `line${line.number}`, ordinal, session_id: null, play_id: null, cache_id: null, lane: null },
      arrival_ns: msToNs(scaled, `${source}: line ${line.number}: timestamp`),
      prompt: tracePrompt(hash_ids, input_length, options.trace_block_size),
      output_length,
    });
  }
  if (requests.length === 0) throw new MooncakeTraceError(source, null, 'the trace holds no requests; a workload needs at least one');
  return requests;
}
