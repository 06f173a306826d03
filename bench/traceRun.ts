// One pass over the whole Mooncake conversation trace (shared/data/mooncake) in this fresh process,
// printing one JSON line. `traceRun.ts N`: a replay on N aggregated workers with the example engine
// settings and private G2 (wall seconds, peak RSS, requests, report size, digest). `traceRun.ts
// --ingest`: only what any replay of it must do first, read the file, parse its rows and hash
// every request's engine blocks (wall seconds, requests, blocks, peak RSS), the floor the replay's
// wall time is compared with. `traceRun.ts N --doubled`: the replay of the trace followed by a copy
// of itself shifted to start a second after its last arrival (twice the requests, the same
// prompts). Run by the `trace` and `scale` benchmarks. May read the clock.
import fs from 'node:fs';
import path from 'node:path';
import { parseReplayConfig } from '../src/config/load';
import type { ReplayConfig } from '../src/config/schema';
import { parseMooncakeTrace } from '../src/config/mooncake';
import type { RequestSpec } from '../src/sim/cluster';
import { runReplay } from '../src/replay';
import { writeCanonicalPretty } from '../src/report/canonical';
import { WORDS_PER_BLOCK } from '../src/hash';
import { wallSeconds } from './harness';
import { traceFolder } from '../src/traceFolder';

const ROOT = path.resolve(__dirname, '..');
export const TRACE = path.join(traceFolder(ROOT), 'conversation_trace.jsonl');
const CONFIG = path.join(ROOT, 'examples', 'configs', 'mooncake-conversation.yaml');

/** The example config on `workers` workers, over the whole trace (no max_requests). */
function wholeTraceConfig(workers: number): ReplayConfig {
  const text = fs.readFileSync(CONFIG, 'utf8').replace(/replicas: \d+/, `replicas: ${workers}`).replace(/^\s*max_requests: \d+\s*$/m, '');
  return parseReplayConfig(text, CONFIG);
}

/** Reads and parses the whole trace as the config asks. */
function readTrace(config: ReplayConfig): RequestSpec[] {
  return parseMooncakeTrace(fs.readFileSync(TRACE, 'utf8'), TRACE, { trace_block_size: config.workload.trace_block_size, max_requests: null, time_scale: config.workload.mooncake!.time_scale, first_ordinal: 0 });
}

function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** The trace, then the same requests again from a second after its last arrival (new ids and ordinals). */
function doubled(requests: RequestSpec[]): RequestSpec[] {
  const shift_ns = requests[requests.length - 1].arrival_ns + 1_000_000_000;
  const copies = requests.map((request, i) => ({
    ...request,
    identity: { ...request.identity, request_id: `${request.identity.request_id}-again`, ordinal: requests.length + i },
    arrival_ns: request.arrival_ns + shift_ns,
  }));
  return [...requests, ...copies];
}

/** What one replay of the whole trace gave. */
export interface WholeTraceRun {
  workers: number;
  requests: number;
  finished: number;
  wall_s: number;
  peak_rss_mb: number;
  report_mb: number;
  digest: string;
}

/** The name of a whole-trace replay in the golden record's long runs (bench/longRuns.ts). */
export function wholeTraceRunName(workers: number, twice: boolean): string {
  return `whole conversation trace${twice ? ' twice (the copy time-shifted)' : ''}, ${workers} workers`;
}

/** Replays the whole trace (twice: followed by its time-shifted copy) on `workers` workers, and writes the report's text (to count it). */
export function runWholeTrace(workers: number, twice: boolean): WholeTraceRun {
  const started = wallSeconds();
  const config = wholeTraceConfig(workers);
  const requests = readTrace(config);
  const outcome = runReplay(config, { mooncake_requests: twice ? doubled(requests) : requests });
  let reportBytes = 0;
  writeCanonicalPretty(outcome.report, (piece) => (reportBytes += piece.length));
  const wall_s = wallSeconds() - started;
  return { workers, requests: outcome.report.summary.requests.total, finished: outcome.report.summary.requests.finished, wall_s, peak_rss_mb: peakRssMb(), report_mb: reportBytes / 1e6, digest: outcome.report.digest };
}

function replay(workers: number, twice: boolean): void {
  process.stdout.write(`${JSON.stringify(runWholeTrace(workers, twice))}\n`);
}

/** Read, parse and block-hash the trace (each prompt's engine blocks, as a replay attaches them to its request). */
function ingest(): void {
  const started = wallSeconds();
  const config = wholeTraceConfig(1);
  const blockSize = config.cluster.workers[0].engine.block_size;
  const requests = readTrace(config);
  let blocks = 0;
  for (const request of requests) blocks += request.prompt.computeBlockWords(blockSize).length / WORDS_PER_BLOCK;
  const wall_s = wallSeconds() - started;
  process.stdout.write(`${JSON.stringify({ requests: requests.length, blocks, block_size: blockSize, wall_s, peak_rss_mb: peakRssMb() })}\n`);
}

if (require.main === module) {
  if (process.argv[2] === '--ingest') ingest();
  else replay(Number(process.argv[2] ?? 16), process.argv[3] === '--doubled');
}
