// The replay configuration's schema (zod): cluster roles with engine and host_offload settings,
// router settings, and the workload. Names follow Dynamo/AISimulate. Unknown fields are errors.
// The JSON Schema published for editors is generated from this file (npm run schema).
import { z } from 'zod';

const nonNegative = (what: string) => z.number({ error: `${what} must be a number` }).min(0, { error: `${what} must be ≥ 0` });
const positiveInt = (what: string) => z.number({ error: `${what} must be a number` }).int({ error: `${what} must be a whole number` }).positive({ error: `${what} must be > 0` });

export const FixedTimingSchema = z.strictObject({
  prefill_ms: z.number().positive({ error: 'prefill_ms must be > 0' }).describe('duration of a pass that computes any prefill chunk'),
  decode_ms: z.number().positive({ error: 'decode_ms must be > 0' }).describe('added when a pass contains any pure decode step'),
});

export const EngineSchema = z
  .strictObject({
    block_size: positiveInt('block_size').describe('tokens per KV block'),
    num_gpu_blocks: positiveInt('num_gpu_blocks').describe('G1 capacity per rank, in blocks'),
    max_num_seqs: positiveInt('max_num_seqs').default(256).describe('running-request cap'),
    max_num_batched_tokens: positiveInt('max_num_batched_tokens').default(8192).describe('token budget per pass'),
    enable_prefix_caching: z.boolean().default(true),
    kv_cache_bytes_per_token: positiveInt('kv_cache_bytes_per_token').optional().describe('needed when host_offload is set; block bytes = block_size × this'),
    timing: z.strictObject({ fixed: FixedTimingSchema }),
  })
  .describe('vLLM-like engine settings (TOPO-2)');

export const HostOffloadSchema = z
  .strictObject({
    num_host_blocks: positiveInt('num_host_blocks').describe('G2 capacity in blocks (per rank, or of the shared pool)'),
    scope: z.enum(['dp_rank_local', 'cluster_shared']).default('dp_rank_local'),
    d2h_bandwidth_gbps: nonNegative('d2h_bandwidth_gbps').default(32).describe('per rank, decimal GB/s; 0 = unlimited'),
    h2d_bandwidth_gbps: nonNegative('h2d_bandwidth_gbps').default(32).describe('per rank, decimal GB/s; 0 = unlimited'),
    latency_to_first_byte_ms: nonNegative('latency_to_first_byte_ms').default(0),
    shared_d2h_bandwidth_gbps: nonNegative('shared_d2h_bandwidth_gbps').default(80).describe('pool cap for cluster_shared'),
    shared_h2d_bandwidth_gbps: nonNegative('shared_h2d_bandwidth_gbps').default(80).describe('pool cap for cluster_shared'),
    kv_layout_id: z.string().default('default'),
    disk_offload: z
      .strictObject({ num_disk_blocks: positiveInt('num_disk_blocks') })
      .optional()
      .describe('a G3 (disk) tier below G2: not modelled; rejected for agentic G2 (AGX-6)'),
  })
  .describe('G2 host-memory KV cache (G2-1); omit to disable G2 for the role');

export const WorkerRoleSchema = z.strictObject({
  role: z.enum(['aggregated', 'prefill', 'decode']),
  backend: z.enum(['vllm', 'sglang', 'trtllm']).default('vllm').describe('engine backend; the model is vLLM-like; agentic G2 requires vllm (AGX-6)'),
  scaling_policy: z.string().min(1).optional().describe('an autoscaling policy (e.g. a planner); pools are static in kvqual'),
  speculative_decoding: z
    .strictObject({ method: z.string().min(1), num_speculative_tokens: positiveInt('num_speculative_tokens') })
    .optional()
    .describe('not modelled; rejected for agentic G2 (AGX-6)'),
  replicas: positiveInt('replicas').default(1),
  dp_size: positiveInt('dp_size').default(1).describe('attention data-parallel ranks per worker'),
  tensor_parallel_size: positiveInt('tensor_parallel_size').default(1),
  engine: EngineSchema,
  host_offload: HostOffloadSchema.optional(),
});

export const RouterSchema = z.strictObject({
  policy: z.enum(['kv', 'round_robin']).default('kv'),
  kv_event_lag_ms: nonNegative('kv_event_lag_ms').default(0).describe('a batch emitted at t is visible at exactly t + lag (LAG-1)'),
  overlap_score_credit: nonNegative('overlap_score_credit').default(1.0),
  host_cache_hit_weight: nonNegative('host_cache_hit_weight').default(0.75),
  prefill_load_scale: nonNegative('prefill_load_scale').default(1.0),
  router_temperature: nonNegative('router_temperature').default(0),
});

export const PromptPartSchema = z.union([
  z.strictObject({ prefix: z.string().min(1).describe('a name from workload.prefixes') }),
  z.strictObject({ tokens: positiveInt('tokens').describe('tokens unique to this request') }),
]);

export const RequestSchema = z.strictObject({
  id: z.string().min(1),
  arrival_ms: nonNegative('arrival_ms'),
  session: z.string().min(1).optional(),
  extends: z.string().min(1).optional().describe('an earlier request whose prompt and output this prompt continues'),
  prompt: z.array(PromptPartSchema).optional(),
  hash_ids: z.array(z.number().int().min(0)).optional().describe('Mooncake-style trace block ids, trace_block_size tokens each'),
  input_length: positiveInt('input_length').optional().describe('with hash_ids: total prompt tokens (the last id may be partial)'),
  output_length: z.number().int().min(0, { error: 'output_length must be ≥ 0' }),
  target_worker: z.number().int().min(0).optional().describe("send straight to this worker's dp rank 0, bypassing the router's choice (as Dynamo's backend_instance_id); the router still counts its load"),
});

export const AgenticWorkloadSchema = z
  .strictObject({
    trace: z.string().min(1).describe('an Agentic Mooncake v2 JSONL trace, relative to this config file'),
    lanes: positiveInt('lanes').default(1).describe('agentic_lanes: trajectories that run at once (AGX-3)'),
    assignment: z.enum(['stride', 'snapshot']).default('stride').describe('stride: play i → lane i mod lanes; snapshot: every lane replays every play'),
    iterations: positiveInt('iterations').default(1).describe('passes of each lane over its plays; later passes recycle plays with fresh identities (AGX-5)'),
  })
  .describe('an agentic workload (AGX-1..5)');

export const MooncakeWorkloadSchema = z
  .strictObject({
    trace: z.string().min(1).describe("a Mooncake FAST'25 request trace (JSON lines), relative to this config file"),
    max_requests: positiveInt('max_requests').optional().describe('take at most this many requests from the start'),
    time_scale: z.number().positive({ error: 'time_scale must be > 0' }).default(1).describe('multiply timestamps by this (0.5 = twice as fast)'),
  })
  .describe('a Mooncake request trace; hash ids are trace_block_size tokens each (512 in the published traces)');

export const WorkloadSchema = z.strictObject({
  trace_block_size: positiveInt('trace_block_size').default(512),
  prefixes: z.record(z.string(), positiveInt('prefix length')).default({}).describe('named prefixes and their token counts'),
  requests: z.array(RequestSchema).min(1, { error: 'the workload needs at least one request' }).optional(),
  agentic: AgenticWorkloadSchema.optional(),
  mooncake: MooncakeWorkloadSchema.optional(),
});

export const ReplayConfigSchema = z
  .strictObject({
    seed: z.number().int().default(1893),
    cluster: z.strictObject({
      workers: z.array(WorkerRoleSchema).min(1, { error: 'at least one worker role is needed' }),
      kv_transfer_bandwidth_gbps: z.number().positive({ error: 'kv_transfer_bandwidth_gbps must be > 0' }).optional().describe('prefill → decode KV handoff bandwidth (PD-1)'),
      kv_transfer_latency_ms: nonNegative('kv_transfer_latency_ms').default(0),
    }),
    router: RouterSchema.default(RouterSchema.parse({})),
    workload: WorkloadSchema,
  })
  .describe('kvqual replay configuration');

export type ReplayConfig = z.infer<typeof ReplayConfigSchema>;
export type WorkerRoleConfig = z.infer<typeof WorkerRoleSchema>;
export type RequestConfig = z.infer<typeof RequestSchema>;
export type AgenticWorkloadConfig = z.infer<typeof AgenticWorkloadSchema>;

/** The JSON Schema of the config file, for editors. */
export function replayConfigJsonSchema(): unknown {
  return z.toJSONSchema(ReplayConfigSchema, { io: 'input' });
}
