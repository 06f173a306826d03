// Mooncake request traces (FAST'25 format: one JSON object per line with timestamp in ms,
// input_length, output_length and hash_ids of trace_block_size tokens each) turned into request
// specs, with line-numbered errors for bad rows.
import { TraceLineError } from '../traceLineError';
import { msToNs } from '../time';
import { tracePrompt } from '../prompt';
import type { RequestSpec } from '../sim/cluster';

export interface MooncakeOptions {
  trace_block_size: number;
  /** Take at most this many requests from the start of the trace. */
  max_requests: number | null;
  /** Multiply timestamps by this (0.5 replays twice as fast). */
  time_scale: number;
  first_ordinal: number;
}

export class MooncakeTraceError extends TraceLineError {}

function whole(row: Record<string, unknown>, field: string, minimum: number, source: string, line: number): number {
  const value = row[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new MooncakeTraceError(source, line, `${field} must be a whole number ≥ ${minimum}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function parseMooncakeTrace(text: string, source: string, options: MooncakeOptions): RequestSpec[] {
  const requests: RequestSpec[] = [];
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    if (options.max_requests !== null && requests.length >= options.max_requests) break;
    const raw = lines[index];
    if (raw.trim() === '') continue;
    const line = index + 1;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(raw) as Record<string, unknown>;
    } catch (error) {
      throw new MooncakeTraceError(source, line, `not valid JSON (${(error as Error).message})`);
    }
    const input_length = whole(row, 'input_length', 1, source, line);
    const output_length = whole(row, 'output_length', 0, source, line);
    const timestamp = row.timestamp;
    if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0) {
      throw new MooncakeTraceError(source, line, `timestamp must be a non-negative number of milliseconds, got ${JSON.stringify(timestamp)}`);
    }
    const hash_ids = row.hash_ids;
    if (!Array.isArray(hash_ids) || hash_ids.some((id) => typeof id !== 'number' || !Number.isInteger(id) || id < 0)) {
      throw new MooncakeTraceError(source, line, 'hash_ids must be a list of whole numbers ≥ 0');
    }
    const expected = Math.ceil(input_length / options.trace_block_size);
    if (hash_ids.length !== expected) {
      throw new MooncakeTraceError(source, line, `hash_ids has ${hash_ids.length} ids for input_length ${input_length}; expected ${expected} at ${options.trace_block_size} tokens per id`);
    }
    const ordinal = options.first_ordinal + requests.length;
    requests.push({
      identity: { request_id: `line${line}`, ordinal, session_id: null, play_id: null, cache_id: null, lane: null },
      arrival_ns: msToNs(Number((timestamp * options.time_scale).toFixed(6)), `${source}: line ${line}: timestamp`),
      prompt: tracePrompt(hash_ids as number[], input_length, options.trace_block_size),
      output_length,
    });
  }
  return requests;
}
