// Turning a validated replay configuration into the simulator's inputs: role specs with times
// in exact nanoseconds, router settings, and request specs with their prompts.
import { msToNs } from '../time';
import type { ClusterSpec, RequestSpec, RoleSpec } from '../sim/cluster';
import { namedChunk, Prompt, tracePrompt } from '../prompt';
import type { TokenChunk } from '../hash';
import type { ReplayConfig, RequestConfig, TimingConfig } from './schema';
import type { PassTimeModel } from '../engine/passTime';
import { faultPlanted } from '../fuzz/simulatorFaults';

/** How role specs get their pass-time model: built from the config, or a stand-in for checks that never run a pass. */
export type PassTimeOf = (timing: TimingConfig, at: string) => PassTimeModel;

/** For setup checks that read no pass time (shared contract, disaggregation): a table still in its CSV file needs no reading. */
export const PASS_TIME_UNUSED: PassTimeOf = () => ({ model: 'fixed', prefill_ns: 1, decode_ns: 1 });

export function roleSpecs(config: ReplayConfig, passTimeOf: PassTimeOf = passTimeModel): RoleSpec[] {
  return config.cluster.workers.map((role, i) => {
    const at = `cluster.workers[${i}]`;
    const offload = role.host_offload;
    return {
      role: role.role,
      replicas: role.replicas,
      dp_size: role.dp_size,
      tensor_parallel_size: role.tensor_parallel_size,
      engine: {
        block_size: role.engine.block_size,
        num_gpu_blocks: role.engine.num_gpu_blocks,
        max_num_seqs: role.engine.max_num_seqs,
        max_num_batched_tokens: role.engine.max_num_batched_tokens,
        enable_prefix_caching: role.engine.enable_prefix_caching,
        kv_cache_bytes_per_token: role.engine.kv_cache_bytes_per_token ?? 0,
        pass_time: passTimeOf(role.engine.timing, `${at}.engine.timing`),
      },
      host_offload: offload
        ? {
            num_host_blocks: offload.num_host_blocks,
            scope: offload.scope,
            d2h_bandwidth_gbps: offload.d2h_bandwidth_gbps,
            h2d_bandwidth_gbps: offload.h2d_bandwidth_gbps,
            latency_to_first_byte_ns: msToNs(offload.latency_to_first_byte_ms, `${at}.host_offload.latency_to_first_byte_ms`),
            shared_d2h_bandwidth_gbps: offload.shared_d2h_bandwidth_gbps,
            shared_h2d_bandwidth_gbps: offload.shared_h2d_bandwidth_gbps,
            kv_layout_id: offload.kv_layout_id,
          }
        : null,
    };
  });
}

/** Milliseconds with at most 9 decimals (checked by the schema) as exact picoseconds. */
const msToPs = (ms: number): bigint => BigInt(Math.round(ms * 1e9));

/** The engine's pass-time model, with exact integer times. */
export function passTimeModel(timing: TimingConfig, at: string): PassTimeModel {
  if (timing.fixed) {
    return { model: 'fixed', prefill_ns: msToNs(timing.fixed.prefill_ms, `${at}.fixed.prefill_ms`), decode_ns: msToNs(timing.fixed.decode_ms, `${at}.fixed.decode_ms`) };
  }
  if (timing.linear) {
    const linear = timing.linear;
    return {
      model: 'linear',
      base_ps: msToPs(linear.base_ms),
      prefill_token_ps: msToPs(linear.prefill_token_ms),
      decode_sequence_ps: msToPs(linear.decode_seq_ms),
      context_token_ps: msToPs(linear.context_token_ms),
    };
  }
  const named = timing.table!;
  if (named.prefill === undefined || named.decode === undefined) throw new Error(`${at}.table.csv "${named.csv}" was not loaded (loadTimingTables reads it)`);
  const table = { prefill: named.prefill, decode: named.decode };
  const batches = [...new Set(table.decode.map((p) => p.batch_size))].sort((a, b) => a - b);
  const contexts = [...new Set(table.decode.map((p) => p.context_tokens))].sort((a, b) => a - b);
  const grid = batches.map(() => contexts.map(() => 0));
  table.decode.forEach((p, i) => (grid[batches.indexOf(p.batch_size)][contexts.indexOf(p.context_tokens)] = msToNs(p.ms, `${at}.table.decode[${i}].ms`)));
  return {
    model: 'table',
    prefill_tokens: table.prefill.map((p) => p.tokens),
    prefill_ns: table.prefill.map((p, i) => msToNs(p.ms, `${at}.table.prefill[${i}].ms`)),
    decode_batch_sizes: batches,
    decode_context_tokens: contexts,
    decode_ns: grid,
  };
}

/** What the report says about the pass times: "functional" (fixed), or where the model's numbers came from. */
export function fidelityOf(config: ReplayConfig): string {
  const labels = config.cluster.workers.map((role) => {
    const timing = role.engine.timing;
    if (timing.fixed) return 'functional';
    const [model, source] = timing.linear ? ['linear', timing.linear.source] : ['table', timing.table!.source];
    return source === undefined ? `uncalibrated ${model} model (no source named)` : `calibrated: ${source}`;
  });
  return [...new Set(labels)].join('; ');
}

export function clusterSpec(config: ReplayConfig, passTimeOf: PassTimeOf = passTimeModel): ClusterSpec {
  const { kv_event_lag_ms, ...router } = config.router;
  const bandwidth = config.cluster.kv_transfer_bandwidth_gbps;
  return {
    seed: config.seed,
    roles: roleSpecs(config, passTimeOf),
    router: Object.assign(router, { kv_event_lag_ns: msToNs(kv_event_lag_ms, 'router.kv_event_lag_ms') }), // not a spread and a new field: see runReplay
    kv_transfer: bandwidth === undefined ? undefined : { bandwidth_gbps: bandwidth, latency_ns: msToNs(config.cluster.kv_transfer_latency_ms, 'cluster.kv_transfer_latency_ms') },
  };
}

/** Chunks of a named prefix; the same name gives the same tokens everywhere (DSL and config). */
export function prefixChunk(name: string, length_tokens: number): TokenChunk {
  return namedChunk(name, length_tokens);
}

export function requestSpecs(config: ReplayConfig): RequestSpec[] {
  const prompts = new Map<string, { prompt: Prompt; output_length: number }>();
  return (config.workload.requests ?? []).map((request, ordinal) => {
    const prompt = promptOf(config, request, prompts);
    prompts.set(request.id, { prompt, output_length: request.output_length });
    return {
      identity: { request_id: request.id, ordinal, session_id: request.session ?? null, play_id: null, cache_id: null, lane: null },
      arrival_ns: msToNs(request.arrival_ms, `workload.requests[${ordinal}].arrival_ms`) + (faultPlanted('time') ? 1_000_000 : 0), // planted fault (src/fuzz/simulatorFaults.ts)
      prompt,
      output_length: request.output_length,
      target_worker: request.target_worker ?? null,
    };
  });
}

function promptOf(config: ReplayConfig, request: RequestConfig, earlier: Map<string, { prompt: Prompt; output_length: number }>): Prompt {
  if (request.hash_ids) return tracePrompt(request.hash_ids, request.input_length!, config.workload.trace_block_size);
  const chunks: TokenChunk[] = [];
  if (request.extends !== undefined) {
    const prior = earlier.get(request.extends)!;
    chunks.push(...prior.prompt.chunks);
    if (prior.output_length > 0) chunks.push(namedChunk(`output of ${request.extends}`, prior.output_length));
  }
  (request.prompt ?? []).forEach((part, j) => {
    if ('prefix' in part) chunks.push(prefixChunk(part.prefix, config.workload.prefixes[part.prefix]));
    else chunks.push(namedChunk(`own text of ${request.id}#${j}`, part.tokens));
  });
  return new Prompt(chunks);
}
