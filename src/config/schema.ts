// The replay configuration's schema (zod): cluster roles with engine and host_offload settings,
// router settings, and the workload. Names follow Dynamo/AISimulate. Unknown fields are errors.
// The JSON Schema published for editors is generated from this file (npm run schema).
// Every size has a documented upper limit (src/limits.ts) that real clusters and traces never
// reach, stated in the field's description, so that a small file cannot ask for unbounded work.
import { z } from 'zod';
import { LIMITS, limitText, MAX_HASH_ID } from '../limits';
import { msProblem } from '../time';

/** " (at most 1,024)": the limit as a description states it. */
const atMost = (max: number, unit = '') => `at most ${limitText(max)}${unit ? ` ${unit}` : ''} (a limit no real cluster or trace reaches)`;
const described = (text: string, max: number, unit = '') => (text ? `${text}; ${atMost(max, unit)}` : atMost(max, unit));
const aboveLimit = (what: string, max: number, unit = '') => (issue: { input?: unknown }) =>
  `${what} ${String(issue.input)} is above the limit of ${limitText(max)}${unit ? ` ${unit}` : ''}`;

/** A number; a missing one keeps zod's own message, which the loader words as "required, but missing". */
const number = (what: string) =>
  z.number({
    error: (issue) => (issue.input === undefined ? undefined : typeof issue.input === 'number' ? `${what} must be a finite number, not ${issue.input}` : `${what} must be a number`),
  });
const nonNegative = (what: string) => number(what).min(0, { error: `${what} must be ≥ 0` });
/** A router weight: from 0 to its limit (a larger one makes the candidates' costs infinite). */
const routerWeight = (what: string) => nonNegative(what).max(LIMITS.router_weight, { error: aboveLimit(what, LIMITS.router_weight) });
const positiveInt = (what: string) => number(what).int({ error: `${what} must be a whole number` }).positive({ error: `${what} must be > 0` });
/** A positive whole number up to `max` (the description says so). */
const boundedInt = (what: string, max: number, text: string, unit = '') => positiveInt(what).max(max, { error: aboveLimit(what, max, unit) }).describe(described(text, max, unit));
/** A bandwidth in decimal GB/s: 0 (unlimited) or from the minimum to the limit. */
const bandwidth = (what: string, text: string) =>
  nonNegative(what)
    .max(LIMITS.bandwidth_gbps, { error: aboveLimit(what, LIMITS.bandwidth_gbps, 'GB/s') })
    .refine((value) => value <= 0 || value >= LIMITS.min_bandwidth_gbps, { error: `${what} must be 0 (unlimited) or at least ${LIMITS.min_bandwidth_gbps} GB/s` })
    .describe(`${text}; 0 or from ${LIMITS.min_bandwidth_gbps} to ${limitText(LIMITS.bandwidth_gbps)} GB/s`);
/**
 * Milliseconds that convert exactly to whole nanoseconds (at most six decimals), from 0 (or above
 * it, when `positive`) to `max`.
 */
const milliseconds = (what: string, max: number, text: string, positive = false) => {
  const base = positive ? number(what).positive({ error: `${what} must be > 0` }) : nonNegative(what);
  return base
    .max(max, { error: aboveLimit(what, max, 'ms') })
    .superRefine((value, ctx) => {
      const problem = value >= 0 && value <= max ? msProblem(value, max) : null;
      if (problem !== null) ctx.addIssue({ code: 'custom', message: problem, input: value });
    })
    .describe(described(text ? `${text}; whole nanoseconds (up to 6 decimals)` : 'whole nanoseconds (up to 6 decimals)', max, 'ms'));
};
const tokens = (what: string, max: number, text: string) => boundedInt(what, max, text, 'tokens');

export const FixedTimingSchema = z.strictObject({
  prefill_ms: milliseconds('prefill_ms', LIMITS.step_ms, 'duration of a pass that computes any prefill chunk', true),
  decode_ms: milliseconds('decode_ms', LIMITS.step_ms, 'added when a pass contains any pure decode step', true),
});

const source = z.string().min(1).optional().describe('where the coefficients or points were measured or fitted (a benchmark, a paper, a tool run); the report then states fidelity "calibrated: <source>"');
/** A per-unit coefficient in milliseconds: exact down to a picosecond (at most 9 decimals). */
const coefficientMs = (what: string, text: string) =>
  nonNegative(what)
    .max(LIMITS.step_ms, { error: aboveLimit(what, LIMITS.step_ms, 'ms') })
    .refine((value) => Number.isInteger(Math.round(value * 1e9)) && Math.abs(value * 1e9 - Math.round(value * 1e9)) < 1e-3, { error: `${what} has more than 9 decimals (a picosecond is the finest step)` })
    .describe(`${text}; from 0 to ${limitText(LIMITS.step_ms)} ms, at most 9 decimals`);

export const LinearTimingSchema = z
  .strictObject({
    base_ms: coefficientMs('base_ms', 'ms added to every pass'),
    prefill_token_ms: coefficientMs('prefill_token_ms', 'ms per new prefill token the pass computes (tokens reused from G1 or G2 are not computed)'),
    decode_seq_ms: coefficientMs('decode_seq_ms', 'ms per sequence taking a decode step in the pass'),
    context_token_ms: coefficientMs('context_token_ms', 'ms per context token the pass attends: for a prefill chunk the tokens before it plus the chunk, for a decode step its input plus outputs so far'),
    source,
  })
  .describe('pass ms = base_ms + prefill_token_ms × new prefill tokens + decode_seq_ms × decode sequences + context_token_ms × context tokens, rounded up to a whole ns (the shape of a fitted step-time model)');

const tablePoint = (what: string, max: number, unit: string) => boundedInt(what, max, '', unit);
/** Measured points: prefill ms by new tokens, decode ms by batch size and mean context. */
export const TablePointsSchema = z.strictObject({
    prefill: z
      .array(z.strictObject({ tokens: tablePoint('tokens', LIMITS.max_num_batched_tokens, 'tokens'), ms: milliseconds('ms', LIMITS.step_ms, 'measured time of a prefill of that many new tokens', true) }))
      .min(1, { error: 'table.prefill needs at least one point' })
      .max(LIMITS.table_points, { error: aboveLimit('the number of table.prefill points', LIMITS.table_points) })
      .refine((points) => points.every((p, i) => i === 0 || p.tokens > points[i - 1].tokens), { error: 'table.prefill points must have strictly increasing tokens' })
      .describe(`measured prefill points, tokens strictly increasing; at most ${limitText(LIMITS.table_points)} points`),
    decode: z
      .array(
        z.strictObject({
          batch_size: tablePoint('batch_size', LIMITS.max_num_seqs, 'sequences'),
          context_tokens: tablePoint('context_tokens', LIMITS.prompt_tokens + LIMITS.output_tokens, 'tokens'),
          ms: milliseconds('ms', LIMITS.step_ms, 'measured time of a decode step of that batch at that mean context per sequence', true),
        }),
      )
      .min(1, { error: 'table.decode needs at least one point' })
      .max(LIMITS.table_points, { error: aboveLimit('the number of table.decode points', LIMITS.table_points) })
      .superRefine((points, ctx) => {
        const problem = decodeGridProblem(points);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem, input: points });
      })
      .describe(`measured decode points forming a full grid: every listed batch size with every listed context_tokens (mean context per sequence); at most ${limitText(LIMITS.table_points)} points`),
  });

export const TableTimingSchema = z
  .strictObject({
    prefill: TablePointsSchema.shape.prefill.optional(),
    decode: TablePointsSchema.shape.decode.optional(),
    csv: z
      .string()
      .min(1)
      .optional()
      .describe(`a CSV file of the points instead of prefill and decode, relative to this config file and inside its folder; header pass,new_tokens,batch_size,context_tokens,ms; rows "prefill,TOKENS,,,MS" or "decode,,BATCH,CONTEXT,MS"; at most ${limitText(LIMITS.config_bytes)} bytes`),
    source,
  })
  .superRefine((table, ctx) => {
    const inline = table.prefill !== undefined || table.decode !== undefined;
    if (table.csv !== undefined && inline) ctx.addIssue({ code: 'custom', message: 'give the points either inline (prefill and decode) or in a csv file, not both', input: table });
    else if (table.csv === undefined && (table.prefill === undefined || table.decode === undefined)) {
      ctx.addIssue({ code: 'custom', message: `give both prefill and decode points (missing ${table.prefill === undefined ? 'prefill' : 'decode'}), or a csv file`, input: table });
    }
  })
  .describe('measured pass times: a pass lasts prefill(new tokens) if it computes any prefill chunk, plus decode(batch size, mean context) if it has decode steps; piecewise-linear between points, extrapolated from the two end points, rounded up to a whole ns, at least 1 ns');

/** Null when the decode points form a full grid of batch sizes × context tokens without duplicates. */
export function decodeGridProblem(points: readonly { batch_size: number; context_tokens: number }[]): string | null {
  const batches = [...new Set(points.map((p) => p.batch_size))];
  const contexts = [...new Set(points.map((p) => p.context_tokens))];
  const seen = new Set<string>();
  for (const p of points) {
    const key = `${p.batch_size}/${p.context_tokens}`;
    if (seen.has(key)) return `table.decode lists batch_size ${p.batch_size} with context_tokens ${p.context_tokens} twice`;
    seen.add(key);
  }
  if (seen.size !== batches.length * contexts.length) {
    for (const b of batches) for (const c of contexts) if (!seen.has(`${b}/${c}`)) return `table.decode is not a full grid: batch_size ${b} has no point at context_tokens ${c}`;
  }
  return null;
}

export const TimingSchema = z
  .strictObject({ fixed: FixedTimingSchema.optional(), linear: LinearTimingSchema.optional(), table: TableTimingSchema.optional() })
  .superRefine((timing, ctx) => {
    const given = (['fixed', 'linear', 'table'] as const).filter((model) => timing[model] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({ code: 'custom', message: given.length === 0 ? 'give one pass-time model: fixed, linear or table' : given.length === 2 ? `give one pass-time model, not both ${given.join(' and ')}` : 'give one pass-time model, not fixed, linear and table', input: timing });
    }
  })
  .describe('the pass-time model, exactly one of: fixed (functional), linear (fitted coefficients) or table (measured points)');

export const EngineSchema = z
  .strictObject({
    block_size: tokens('block_size', LIMITS.block_size, 'tokens per KV block'),
    num_gpu_blocks: boundedInt('num_gpu_blocks', LIMITS.num_gpu_blocks, 'G1 capacity per rank, in blocks'),
    max_num_seqs: boundedInt('max_num_seqs', LIMITS.max_num_seqs, 'running-request cap').default(256),
    max_num_batched_tokens: tokens('max_num_batched_tokens', LIMITS.max_num_batched_tokens, 'token budget per pass').default(8192),
    enable_prefix_caching: z.boolean().default(true),
    kv_cache_bytes_per_token: boundedInt('kv_cache_bytes_per_token', LIMITS.kv_cache_bytes_per_token, 'needed when host_offload is set; block bytes = block_size × this', 'bytes').optional(),
    timing: TimingSchema,
  })
  .describe('vLLM-like engine settings (TOPO-2)');

export const HostOffloadSchema = z
  .strictObject({
    num_host_blocks: boundedInt('num_host_blocks', LIMITS.num_host_blocks, 'G2 capacity in blocks (per rank, or of the shared pool)'),
    scope: z.enum(['dp_rank_local', 'cluster_shared']).default('dp_rank_local'),
    d2h_bandwidth_gbps: bandwidth('d2h_bandwidth_gbps', 'per rank, decimal GB/s; 0 = unlimited').default(32),
    h2d_bandwidth_gbps: bandwidth('h2d_bandwidth_gbps', 'per rank, decimal GB/s; 0 = unlimited').default(32),
    latency_to_first_byte_ms: milliseconds('latency_to_first_byte_ms', LIMITS.step_ms, '').default(0),
    shared_d2h_bandwidth_gbps: bandwidth('shared_d2h_bandwidth_gbps', 'pool cap for cluster_shared').default(80),
    shared_h2d_bandwidth_gbps: bandwidth('shared_h2d_bandwidth_gbps', 'pool cap for cluster_shared').default(80),
    kv_layout_id: z.string().default('default'),
    disk_offload: z
      .strictObject({ num_disk_blocks: boundedInt('num_disk_blocks', LIMITS.num_host_blocks, '') })
      .optional()
      .describe('a G3 (disk) tier below G2: not modelled; rejected for agentic G2 (AGX-6)'),
  })
  .describe('G2 host-memory KV cache (G2-1); omit to disable G2 for the role');

export const WorkerRoleSchema = z.strictObject({
  role: z.enum(['aggregated', 'prefill', 'decode']),
  backend: z.enum(['vllm', 'sglang', 'trtllm']).default('vllm').describe('engine backend; the model is vLLM-like; agentic G2 requires vllm (AGX-6)'),
  scaling_policy: z.string().min(1).optional().describe('an autoscaling policy (e.g. a planner); pools are static in kvqual'),
  speculative_decoding: z
    .strictObject({ method: z.string().min(1), num_speculative_tokens: boundedInt('num_speculative_tokens', LIMITS.max_num_seqs, '') })
    .optional()
    .describe('not modelled; rejected for agentic G2 (AGX-6)'),
  replicas: boundedInt('replicas', LIMITS.replicas, `workers of this role; replicas × dp_size over all roles at most ${limitText(LIMITS.ranks)}`).default(1),
  dp_size: boundedInt('dp_size', LIMITS.dp_size, 'attention data-parallel ranks per worker').default(1),
  tensor_parallel_size: boundedInt('tensor_parallel_size', LIMITS.tensor_parallel_size, '').default(1),
  engine: EngineSchema,
  host_offload: HostOffloadSchema.optional(),
});

export const RouterSchema = z.strictObject({
  policy: z.enum(['kv', 'round_robin']).default('kv'),
  kv_event_lag_ms: milliseconds('kv_event_lag_ms', LIMITS.step_ms, 'a batch emitted at t is visible at exactly t + lag (LAG-1)').default(0),
  overlap_score_credit: routerWeight('overlap_score_credit').default(1.0),
  host_cache_hit_weight: routerWeight('host_cache_hit_weight').default(0.75),
  prefill_load_scale: routerWeight('prefill_load_scale').default(1.0),
  router_temperature: routerWeight('router_temperature').default(0),
});

export const PromptPartSchema = z.union(
  [
    z.strictObject({ prefix: z.string().min(1).describe('a name from workload.prefixes') }),
    z.strictObject({ tokens: tokens('tokens', LIMITS.prompt_tokens, 'tokens unique to this request') }),
  ],
  { error: 'a prompt part is { prefix: NAME } or { tokens: N }' },
);

export const RequestSchema = z.strictObject({
  id: z.string().min(1),
  arrival_ms: milliseconds('arrival_ms', LIMITS.time_ms, ''),
  session: z.string().min(1).optional(),
  extends: z.string().min(1).optional().describe('an earlier request whose prompt and output this prompt continues'),
  prompt: z.array(PromptPartSchema).optional(),
  hash_ids: z
    .array(
      number('a hash id')
        .min(0, { error: 'a hash id must be ≥ 0' })
        .max(MAX_HASH_ID, { error: `a hash id must be at most 2^53 − 1 (${MAX_HASH_ID}), the largest kvqual keeps exact` })
        .int({ error: 'a hash id must be a whole number' }),
    )
    .optional()
    .describe(`Mooncake-style trace block ids, trace_block_size tokens each; whole numbers from 0 to 2^53 − 1 (${MAX_HASH_ID})`),
  input_length: tokens('input_length', LIMITS.prompt_tokens, 'with hash_ids: total prompt tokens (the last id may be partial)').optional(),
  output_length: number('output_length')
    .int({ error: 'output_length must be a whole number' })
    .min(0, { error: 'output_length must be ≥ 0' })
    .max(LIMITS.output_tokens, { error: aboveLimit('output_length', LIMITS.output_tokens, 'tokens') })
    .describe(described('output tokens', LIMITS.output_tokens, 'tokens')),
  target_worker: number('target_worker').int({ error: 'target_worker must be a whole number' }).min(0, { error: 'target_worker must be ≥ 0' }).optional().describe("send straight to this worker's dp rank 0, bypassing the router's choice (as Dynamo's backend_instance_id); the router still counts its load"),
});

export const AgenticWorkloadSchema = z
  .strictObject({
    trace: z.string().min(1).describe(`an Agentic Mooncake v2 JSONL trace, relative to this config file, inside the config's folder, the working folder or a --trace-root; lines of at most ${limitText(LIMITS.line_chars)} characters`),
    lanes: boundedInt('lanes', LIMITS.lanes, 'agentic_lanes: trajectories that run at once (AGX-3)').default(1),
    assignment: z.enum(['stride', 'snapshot']).default('stride').describe('stride: play i → lane i mod lanes; snapshot: every lane replays every play'),
    iterations: boundedInt('iterations', LIMITS.iterations, `passes of each lane over its plays; later passes recycle plays with fresh identities (AGX-5); requests × iterations (× lanes for snapshot) at most ${limitText(LIMITS.requests)}`).default(1),
  })
  .describe('an agentic workload (AGX-1..5)');

export const MooncakeWorkloadSchema = z
  .strictObject({
    trace: z
      .string()
      .min(1)
      .describe(
        `a Mooncake FAST'25 request trace (JSON lines, timestamps in order), relative to this config file, inside the config's folder, the working folder or a --trace-root; lines of at most ${limitText(LIMITS.line_chars)} characters`,
      ),
    max_requests: boundedInt('max_requests', LIMITS.requests, 'take at most this many requests from the start').optional(),
    time_scale: number('time_scale')
      .positive({ error: 'time_scale must be > 0' })
      .max(LIMITS.time_scale, { error: aboveLimit('time_scale', LIMITS.time_scale) })
      .default(1)
      .describe(`multiply timestamps by this (0.5 = twice as fast); ${atMost(LIMITS.time_scale)}`),
  })
  .describe('a Mooncake request trace; hash ids are trace_block_size tokens each (512 in the published traces)');

export const WorkloadSchema = z.strictObject({
  trace_block_size: tokens('trace_block_size', LIMITS.block_size, 'tokens per trace hash id').default(512),
  prefixes: z.record(z.string(), tokens('prefix length', LIMITS.prompt_tokens, '')).default({}).describe('named prefixes and their token counts'),
  requests: z
    .array(RequestSchema)
    .min(1, { error: 'the workload needs at least one request' })
    .max(LIMITS.requests, { error: aboveLimit('the number of requests', LIMITS.requests) })
    .optional()
    .describe(described('explicit requests', LIMITS.requests, 'requests')),
  agentic: AgenticWorkloadSchema.optional(),
  mooncake: MooncakeWorkloadSchema.optional(),
});

export const ReplayConfigSchema = z
  .strictObject({
    seed: number('seed').int({ error: 'seed must be a whole number from −(2^53 − 1) to 2^53 − 1' }).default(1893),
    cluster: z.strictObject({
      workers: z.array(WorkerRoleSchema).min(1, { error: 'at least one worker role is needed' }),
      kv_transfer_bandwidth_gbps: number('kv_transfer_bandwidth_gbps')
        .min(LIMITS.min_bandwidth_gbps, { error: `kv_transfer_bandwidth_gbps must be at least ${LIMITS.min_bandwidth_gbps} GB/s` })
        .max(LIMITS.bandwidth_gbps, { error: aboveLimit('kv_transfer_bandwidth_gbps', LIMITS.bandwidth_gbps, 'GB/s') })
        .optional()
        .describe(`prefill → decode KV handoff bandwidth (PD-1); from ${LIMITS.min_bandwidth_gbps} to ${limitText(LIMITS.bandwidth_gbps)} GB/s`),
      kv_transfer_latency_ms: milliseconds('kv_transfer_latency_ms', LIMITS.step_ms, '').default(0),
    }),
    router: RouterSchema.default(RouterSchema.parse({})),
    workload: WorkloadSchema,
    slo: z
      .strictObject({
        ttft_ms: milliseconds('slo.ttft_ms', LIMITS.time_ms, 'time to first token at most this', true).optional(),
        tpot_ms: milliseconds('slo.tpot_ms', LIMITS.time_ms, 'time per output token after the first at most this', true).optional(),
        e2e_ms: milliseconds('slo.e2e_ms', LIMITS.time_ms, 'end-to-end latency at most this', true).optional(),
      })
      .optional()
      .describe('service-level objectives: the report counts the finished requests meeting every one given (goodput)'),
  })
  .describe('kvqual replay configuration');

export type ReplayConfig = z.infer<typeof ReplayConfigSchema>;
export type TimingConfig = z.infer<typeof TimingSchema>;
export type WorkerRoleConfig = z.infer<typeof WorkerRoleSchema>;
export type RequestConfig = z.infer<typeof RequestSchema>;
export type AgenticWorkloadConfig = z.infer<typeof AgenticWorkloadSchema>;

/** The JSON Schema of the config file, for editors. */
export function replayConfigJsonSchema(): unknown {
  return z.toJSONSchema(ReplayConfigSchema, { io: 'input' });
}
