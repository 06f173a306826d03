// The documented upper limits on what kvqual reads: sizes far beyond any real cluster or published
// trace, so that a small file can never ask for unbounded work. The schema, the trace and event
// readers and the command line all take their limits from here; docs/cli.md lists them.

/** Upper limits, each named after the field or input it bounds. */
export const LIMITS = {
  /** `cluster.workers[].replicas`: workers of one role. */
  replicas: 1024,
  /** `cluster.workers[].dp_size`: attention data-parallel ranks per worker. */
  dp_size: 256,
  /** replicas × dp_size summed over the roles: simulated engine ranks in the cluster. */
  ranks: 4096,
  /** `cluster.workers[].tensor_parallel_size`. */
  tensor_parallel_size: 1024,
  /** Tokens per block: `engine.block_size`, `workload.trace_block_size`, an agentic trace's `block_size`. */
  block_size: 65_536,
  /** `engine.num_gpu_blocks`: G1 blocks per rank. */
  num_gpu_blocks: 100_000_000,
  /** `host_offload.num_host_blocks`: G2 blocks per rank or shared pool. */
  num_host_blocks: 1_000_000_000,
  /** `engine.max_num_seqs`. */
  max_num_seqs: 65_536,
  /** `engine.max_num_batched_tokens`. */
  max_num_batched_tokens: 10_000_000,
  /** `engine.kv_cache_bytes_per_token`. */
  kv_cache_bytes_per_token: 10_000_000,
  /** Any bandwidth in GB/s (decimal); 0 still means unlimited where documented. */
  bandwidth_gbps: 1_000_000,
  /** The smallest bandwidth other than 0, in GB/s (1 MB/s): slower links would push a transfer past the virtual clock. */
  min_bandwidth_gbps: 0.001,
  /** Milliseconds of one pass, lag or latency: prefill_ms, decode_ms, kv_event_lag_ms, latencies. */
  step_ms: 60_000,
  /** Milliseconds of an instant or a delay on the workload's clock: arrivals, trace timestamps, not_before_ms, delay_ms. */
  time_ms: 1_000_000_000,
  /** Prompt tokens of one request (input_length, a prefix, a prompt part, a whole `extends` chain). */
  prompt_tokens: 10_000_000,
  /** Output tokens of one request. */
  output_tokens: 1_000_000,
  /**
   * Requests in one replay: explicit requests, trace lines, or agentic requests × lanes × iterations
   * (a run of 996,000 small agentic requests peaked at 3.9 GB, near the heap's end: half of that).
   */
  requests: 500_000,
  /**
   * Complete blocks of one request's prompt (its tokens ÷ the engine's block size): a Stored KV event
   * of a whole prompt is one line of an event log, and 10,000,000 one-token blocks took minutes and
   * gigabytes and overflowed the longest string JavaScript makes.
   */
  prompt_blocks: 1_048_576,
  /** Prompt tokens of every request of a replay together (agentic ones as often as lanes and iterations repeat them). */
  workload_prompt_tokens: 10_000_000_000,
  /** Output tokens of every request of a replay together: each is a decode step of some pass (1e12 of them would take days). */
  workload_output_tokens: 1_000_000_000,
  /** Placements × candidate ranks a report keeps with `kvqual replay --scores all` (each a record in the report). */
  kept_scores: 1_000_000,
  /** `workload.agentic.lanes`. */
  lanes: 10_000,
  /** `workload.agentic.iterations`. */
  iterations: 10_000,
  /** A router weight: `overlap_score_credit`, `host_cache_hit_weight`, `prefill_load_scale`, `router_temperature` (larger ones overflow the costs). */
  router_weight: 1_000_000,
  /** `workload.mooncake.time_scale`. */
  time_scale: 1_000,
  /** Points of one pass-time table (`timing.table.prefill`, `timing.table.decode`). */
  table_points: 10_000,
  /** Bytes of a config file. */
  config_bytes: 4 * 1024 * 1024,
  /** Characters of one line of a trace or an event log. */
  line_chars: 8 * 1024 * 1024,
} as const;

/** Hash ids of configs and Mooncake traces are JSON integers a JavaScript number holds exactly: 0 to 2^53 − 1 (an agentic trace also reads 64-bit ids exactly, see agentic/trace.ts). */
export const MAX_HASH_ID = Number.MAX_SAFE_INTEGER;

/** "1,000,000" — limits are printed with thousands separators so they read at a glance. */
export function limitText(value: number): string {
  return value.toLocaleString('en-US');
}
