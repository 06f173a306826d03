// Trace-level qualification runs (the SLO scenarios, features/slo/): a published Mooncake trace, its
// first N requests, on W aggregated workers of a named serving profile, built into the config
// `kvqual replay` reads and replayed. A serving profile is the engine, host cache and pass-time
// settings of one worker (docs/glossary.md prints each); the router policy and a time scale (how
// much faster than recorded the trace's requests arrive) vary per run.
import * as path from 'node:path';
import { validateReplayConfig } from '../config/load';
import type { ReplayConfig } from '../config/schema';
import { parseMooncakeLines } from '../config/mooncake';
import { fileLines } from '../inputFiles';
import { runReplay, type ReplayOutcome } from '../replay';

/** The published traces a scenario may name, by the word it uses. */
export const TRACES: Record<string, string> = {
  conversation: 'conversation_trace.jsonl',
  synthetic: 'synthetic_trace.jsonl',
};

/**
 * The serving profiles: one aggregated worker's settings as config fields. "reference" is the
 * worker of examples/configs/mooncake-conversation-linear.yaml (32 running requests, 16,384 tokens
 * a pass, the illustrative linear pass-time model) with 512-token blocks, the traces' own: 1,024
 * GPU blocks and 4,096 host blocks hold as many tokens as its 8,192 and 32,768 of 64, and a run
 * hashes and caches an eighth as many blocks (a scenario of 500 requests runs in under a second).
 */
export const SERVING_PROFILES: Record<string, { engine: Record<string, unknown>; host_offload: Record<string, unknown> }> = {
  reference: {
    engine: {
      block_size: 512,
      num_gpu_blocks: 1024,
      max_num_seqs: 32,
      max_num_batched_tokens: 16384,
      kv_cache_bytes_per_token: 131072,
      timing: { linear: { base_ms: 5, prefill_token_ms: 0.02, decode_seq_ms: 0.3, context_token_ms: 0.00002 } },
    },
    host_offload: { num_host_blocks: 4096, d2h_bandwidth_gbps: 32, h2d_bandwidth_gbps: 32 },
  },
};

/** What a trace-level run replays: which trace, how much of it, on how many workers of which profile. */
export interface TraceRunSetup {
  trace: string;
  requests: number;
  workers: number;
  profile: string;
  /** Multiplies the trace's timestamps (0.5: requests arrive twice as fast); 1 by default. */
  time_scale: number;
  seed: number;
}

export type RouterPolicy = 'kv' | 'round_robin';

/** A setup's problem in words (an unknown trace or profile), or null. */
export function setupProblem(setup: Pick<TraceRunSetup, 'trace' | 'profile'>): string | null {
  if (!Object.hasOwn(TRACES, setup.trace)) return `no Mooncake trace is called "${setup.trace}"; the traces are ${Object.keys(TRACES).join(' and ')}`;
  if (!Object.hasOwn(SERVING_PROFILES, setup.profile)) return `no serving profile is called "${setup.profile}"; the profiles are ${Object.keys(SERVING_PROFILES).join(', ')}`;
  return null;
}

/** The replay config of a setup under a router policy (validated as `kvqual replay` validates it). */
export function traceRunConfig(setup: TraceRunSetup, policy: RouterPolicy, traceFile: string): ReplayConfig {
  const problem = setupProblem(setup);
  if (problem !== null) throw new Error(problem);
  const profile = SERVING_PROFILES[setup.profile];
  return validateReplayConfig(
    {
      seed: setup.seed,
      cluster: { workers: [{ role: 'aggregated', replicas: setup.workers, engine: structuredClone(profile.engine), host_offload: structuredClone(profile.host_offload) }] },
      router: { policy, kv_event_lag_ms: 1 },
      workload: { trace_block_size: 512, mooncake: { trace: traceFile, max_requests: setup.requests, time_scale: setup.time_scale } },
    },
    `the ${setup.trace} trace on ${setup.workers} workers of the ${setup.profile} serving profile`,
  );
}

/** Replays a setup under a router policy, reading the first requests of the trace from `traceFile`. */
export function runTrace(setup: TraceRunSetup, policy: RouterPolicy, traceFile: string): ReplayOutcome {
  const config = traceRunConfig(setup, policy, traceFile);
  const shown = path.basename(traceFile);
  const mooncake = config.workload.mooncake!;
  const mooncake_requests = parseMooncakeLines(fileLines(traceFile, shown, shown), shown, {
    trace_block_size: config.workload.trace_block_size,
    max_requests: mooncake.max_requests ?? null,
    time_scale: mooncake.time_scale,
    first_ordinal: 0,
  });
  return runReplay(config, { mooncake_requests });
}
