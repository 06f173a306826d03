// End-to-end benchmark: a generated agentic-style workload (prompts of about 8,000 tokens sharing
// prefixes, 200 output tokens, Poisson arrivals) replayed on 16 aggregated workers with private
// G2. Prints simulated requests per wall second, kernel events per second, the peak RSS of one
// run in a fresh process and the report's digest beside the one the golden record keeps
// (bench/longRuns.ts).
// Benchmark code may read the wall clock; src/ never does.
import { Cluster, ClusterSpec, RequestSpec } from '../src/sim/cluster';
import { buildReport } from '../src/report/report';
import { namedChunk, Prompt } from '../src/prompt';
import { RandomStreams } from '../src/random';
import type { Benchmark } from './harness';
import { digestFigure } from './recordedDigests';
import { spawnSync } from 'node:child_process';

export interface EndToEndFigures {
  requests: number;
  wall_s: number;
  requests_per_s: number;
  events_per_s: number;
  kernel_events: number;
  peak_rss_mb: number;
  virtual_s: number;
  prefix_reuse_ratio: number;
  digest: string;
}

const WORKERS = 16;
/** Requests of one pass (the long run pinned in the golden record). */
export const E2E_REQUESTS = 10_000;
/** This benchmark's run in the golden record's long runs (bench/longRuns.ts). */
export const E2E_RUN_NAME = 'the e2e workload, 10,000 generated requests, 16 workers';
const PEAK_RSS_TARGET_MB = 300;
const SYSTEM_PROMPTS = 64;

export function spec(): ClusterSpec {
  return {
    seed: 7,
    keep_event_history: false,
    roles: [
      {
        role: 'aggregated',
        replicas: WORKERS,
        dp_size: 1,
        tensor_parallel_size: 1,
        engine: {
          block_size: 64,
          num_gpu_blocks: 12288,
          max_num_seqs: 64,
          max_num_batched_tokens: 16384,
          enable_prefix_caching: true,
          kv_cache_bytes_per_token: 131072,
          pass_time: { model: 'fixed', prefill_ns: 60_000_000, decode_ns: 15_000_000 },
        },
        host_offload: {
          num_host_blocks: 16384,
          scope: 'dp_rank_local',
          d2h_bandwidth_gbps: 32,
          h2d_bandwidth_gbps: 32,
          latency_to_first_byte_ns: 0,
          shared_d2h_bandwidth_gbps: 80,
          shared_h2d_bandwidth_gbps: 80,
          kv_layout_id: 'bench',
        },
      },
    ],
    router: { policy: 'kv', overlap_score_credit: 1, host_cache_hit_weight: 0.75, prefill_load_scale: 1, router_temperature: 0, kv_event_lag_ns: 1_000_000 },
  };
}

/** Requests: a shared system prompt (4,000 tokens), a session history (3,000–4,000), a new turn. */
export function generateWorkload(count: number, seed = 11): RequestSpec[] {
  return [...workload(count, seed)];
}

/** The same requests, made one at a time in arrival order. */
export function* workload(count: number, seed = 11): Generator<RequestSpec> {
  const random = new RandomStreams(seed);
  const arrivals = random.stream('bench.arrivals');
  const shapes = random.stream('bench.shapes');
  const meanGapNs = 4_000_000; // 250 requests per virtual second
  let now = 0;
  for (let i = 0; i < count; i++) {
    now += Math.round(-Math.log(1 - arrivals.next()) * meanGapNs);
    const system = shapes.below(SYSTEM_PROMPTS);
    const session = shapes.below(count / 4);
    const historyTokens = 3000 + shapes.below(1000);
    const prompt = new Prompt([
      namedChunk(`system prompt ${system}`, 4000),
      namedChunk(`history of session ${session}`, historyTokens),
      namedChunk(`turn ${i}`, 1000 - shapes.below(200)),
    ]);
    yield {
      identity: { request_id: `q${i}`, ordinal: i, session_id: `s${session}`, play_id: null, cache_id: null, lane: null },
      arrival_ns: now,
      prompt,
      output_length: 200,
    };
  }
}

export function runEndToEnd(count = E2E_REQUESTS): EndToEndFigures {
  const started = process.hrtime.bigint();
  const cluster = new Cluster(spec());
  // Requests are fed lazily: the next one is submitted when the previous one has been dispatched
  // (in its arrival instant, before the next arrival), so only one waits in the kernel at a time.
  // Arrivals are ordered by (time, phase, ordinal), so the run is the same as submitting all upfront.
  const requests = workload(count);
  const submitNext = () => {
    const next = requests.next();
    if (!next.done) cluster.submit(next.value);
  };
  cluster.onDispatched = submitNext;
  submitNext();
  const result = cluster.run();
  const report = buildReport(result, 64, 0.75);
  const wall_s = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    requests: count,
    wall_s,
    requests_per_s: count / wall_s,
    events_per_s: cluster.kernel.eventsProcessed / wall_s,
    kernel_events: cluster.kernel.eventsProcessed,
    /** The process's peak so far (the whole run of this process, not only this pass). */
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
    virtual_s: result.end_ns / 1e9,
    prefix_reuse_ratio: report.summary.prefix_reuse_ratio,
    digest: report.digest,
  };
}

/** The harness entry: 10,000 requests per pass, target 2,000 simulated requests per wall second. */
export function endToEndBenchmark(): Benchmark {
  let last: EndToEndFigures | null = null;
  let peakMb = Number.NaN;
  return {
    name: 'e2e',
    unit: 'simulated requests',
    targetPerSecond: 2_000,
    runPass: () => {
      last = runEndToEnd(E2E_REQUESTS);
      return { count: last.requests, elapsedSeconds: last.wall_s };
    },
    details: () => {
      const figures = last!;
      peakMb = singleRunPeakMb();
      return (
        `${Math.round(figures.events_per_s).toLocaleString('en-US')} kernel events/s; ${figures.virtual_s.toFixed(1)} s of virtual time; ` +
        `prefix reuse ${(figures.prefix_reuse_ratio * 100).toFixed(1)}%`
      );
    },
    targets: () => [
      { benchmark: 'e2e', label: 'peak RSS of one 10,000-request run in a fresh process', value: peakMb, unit: 'MB', target: PEAK_RSS_TARGET_MB, better: 'lower' },
      digestFigure('e2e', E2E_RUN_NAME, last!.digest),
    ],
  };
}

/** Peak RSS of a single 10,000-request run in a fresh process (the harness's own process also ran the other passes). */
function singleRunPeakMb(): number {
  const child = spawnSync(process.execPath, ['--require', 'tsx/cjs', __filename, String(E2E_REQUESTS), '--json'], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`the single-run measurement failed: ${child.stderr}`);
  return (JSON.parse(child.stdout) as EndToEndFigures).peak_rss_mb;
}

if (require.main === module) {
  const count = Number(process.argv[2] ?? E2E_REQUESTS);
  const figures = runEndToEnd(count);
  console.log(process.argv.includes('--json') ? JSON.stringify(figures) : figures);
}
