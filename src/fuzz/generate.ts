// Generated workloads (fast-check arbitraries): whole replay configurations in the shape
// `kvqual replay` reads — aggregated or prefill/decode roles, replicas, dp ranks, private or shared
// G2 pools, bandwidths from 0 (unlimited) to tiny, tight G1/G2 capacities, lags equal to the gap
// between events, same-instant arrivals, explicit requests with shared prefixes, extends and
// Mooncake-style hash ids, or an agentic trace with failing plays and tool delays. Sizes stay
// small so thousands of cases run in seconds. Areas with a known engine defect can be left out
// (GeneratorOptions.exclude) so the rest can still be tested.
import fc from 'fast-check';
import { AGENTIC_SCHEMA, AGENTIC_VERSION } from '../agentic/trace';

/** A config as plain data, exactly what a YAML file would hold. */
export type RawConfig = Record<string, unknown>;

/** One generated case: the config, and the agentic trace it names (JSON lines), if any. */
export interface FuzzCase {
  config: RawConfig;
  /** The text of the file workload.agentic.trace names; null for explicit requests. */
  agentic_trace: string | null;
}

/** The file name a generated config gives its agentic trace (written next to the config). */
export const GENERATED_TRACE_NAME = 'trace.jsonl';

/**
 * Generator areas that can be left out, each one a known engine defect of issue 8 (re-enable an
 * area by removing it from KNOWN_DEFECT_AREAS once its fix has landed):
 * - restore-under-pressure: G2 restores on a rank whose G1 or running-request cap is tight
 *   (defect 1: a loaded restore is never admitted, or two restores wait for each other).
 * - unlimited-shared-bandwidth: a cluster_shared pool with bandwidth 0 (defect 3: crashes).
 * - failing-plays: agentic requests that can never fit, so their play fails (defect 5 and the
 *   skipped requests that carry no reason).
 * - tight-decode-ranks: decode ranks with little G1 or a small token budget (found by the fuzzer,
 *   not in the list: a handed-off request that can never fit, or is preempted, on its
 *   decode rank waits forever; transferred requests admitted for decode count no token against
 *   the pass budget).
 */
export const DEFECT_AREAS = ['restore-under-pressure', 'unlimited-shared-bandwidth', 'failing-plays', 'tight-decode-ranks'] as const;
export type DefectArea = (typeof DEFECT_AREAS)[number];

/** The areas the test suite leaves out today. Empty this list when the engine fixes have landed. */
export const KNOWN_DEFECT_AREAS: readonly DefectArea[] = [];

export interface GeneratorOptions {
  exclude: readonly DefectArea[];
}

export function parseDefectAreas(text: string): DefectArea[] {
  if (text.trim() === '' || text === 'none') return [];
  if (text === 'known') return [...KNOWN_DEFECT_AREAS];
  return text.split(',').map((name) => {
    const area = name.trim();
    if (!(DEFECT_AREAS as readonly string[]).includes(area)) throw new Error(`unknown generator area "${area}"; known areas: ${DEFECT_AREAS.join(', ')} (or "known", "none")`);
    return area as DefectArea;
  });
}

// ── The cluster ─────────────────────────────────────────────────────────────────────────────

/**
 * Decimal GB/s: unlimited (0), the smallest the schema accepts (a block of 1 MB takes 1 s at
 * 0.001), round ones, and two whose quotients are not
 * whole: 0.7, and 1.0000005, at which 2,000,000 bytes take 1,999,999.0000005 ns (2,000,000 by
 * TIME-2; floating point with a tolerance for dust gave 1,999,999, which the transfer-time invariant
 * now catches).
 */
const BANDWIDTHS_GBPS = [0, 0.001, 0.01, 0.1, 1, 32, 0.7, 1.0000005];

/**
 * A setting the config gives (one of `values`) or leaves out (null, one time in six): left out, the
 * spec's default applies, and the fuzzer's checks use that default as the spec states it
 * (invariants.ts, SPEC_DEFAULTS), not as the loader fills it in.
 */
function declared<T>(values: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: 5, arbitrary: values }, { weight: 1, arbitrary: fc.constant(null) });
}

/** Writes each setting of `settings` that is not left out (null) into `target`. */
function putDeclared(target: RawConfig, settings: Record<string, unknown>): RawConfig {
  for (const [key, value] of Object.entries(settings)) if (value !== null) target[key] = value;
  return target;
}
/** Pass durations and lags on a 0.25 ms grid, so they often coincide with arrival gaps. */
const PASS_MS = [0.25, 0.5, 1, 2];

interface EngineDraw {
  num_gpu_blocks: number;
  max_num_seqs: number;
  max_num_batched_tokens: number;
  enable_prefix_caching: boolean;
  prefill_ms: number;
  decode_ms: number;
  /** The pass-time model: fixed (prefill_ms / decode_ms), linear or table (their shapes drawn below). */
  timing: TimingDraw;
}

/** Linear coefficients and table points on small grids, so pass ends still often meet arrivals; fractions of a ns exercise rounding up. */
type TimingDraw =
  | { model: 'fixed' }
  | { model: 'linear'; base_ms: number; prefill_token_ms: number; decode_seq_ms: number; context_token_ms: number }
  | { model: 'table'; prefill: { tokens: number; ms: number }[]; decode_batches: number[]; decode_contexts: number[]; decode_ms: number[] };

const timingDraw: fc.Arbitrary<TimingDraw> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ model: 'fixed' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      model: fc.constant('linear' as const),
      base_ms: fc.constantFrom(0, 0.25, 1),
      prefill_token_ms: fc.constantFrom(0, 0.01, 0.0000003),
      decode_seq_ms: fc.constantFrom(0, 0.1, 0.25),
      context_token_ms: fc.constantFrom(0, 0.001, 0.0000001),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      model: fc.constant('table' as const),
      prefill: fc.uniqueArray(fc.record({ tokens: fc.integer({ min: 1, max: 64 }), ms: fc.constantFrom(0.25, 0.5, 1, 2, 0.000001) }), { minLength: 1, maxLength: 3, selector: (p) => p.tokens }),
      decode_batches: fc.uniqueArray(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }),
      decode_contexts: fc.uniqueArray(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 2 }),
      decode_ms: fc.array(fc.constantFrom(0.25, 0.5, 1, 3), { minLength: 4, maxLength: 4 }),
    }),
  },
);

/** The config's `timing` of a drawn engine. */
function timingConfig(engine: EngineDraw): RawConfig {
  const timing = engine.timing;
  if (timing.model === 'fixed') return { fixed: { prefill_ms: engine.prefill_ms, decode_ms: engine.decode_ms } };
  if (timing.model === 'linear') {
    const { model: _, ...coefficients } = timing;
    return { linear: coefficients };
  }
  const prefill = [...timing.prefill].sort((a, b) => a.tokens - b.tokens);
  const decode = timing.decode_batches.flatMap((batch_size, i) =>
    timing.decode_contexts.map((context_tokens, j) => ({ batch_size, context_tokens, ms: timing.decode_ms[(i * 2 + j) % timing.decode_ms.length] })),
  );
  return { table: { prefill, decode, source: 'generated' } };
}

interface RoleDraw {
  replicas: number;
  dp_size: number;
  engine: EngineDraw;
  host: 'none' | 'private' | 'shared';
  /** Null: left out of the config (see declared). */
  d2h_bandwidth_gbps: number | null;
  h2d_bandwidth_gbps: number | null;
  latency_to_first_byte_ms: number | null;
}

const engineDraw: fc.Arbitrary<EngineDraw> = fc.record({
  num_gpu_blocks: fc.oneof(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 13, max: 64 })),
  max_num_seqs: fc.integer({ min: 1, max: 4 }),
  max_num_batched_tokens: fc.oneof(fc.integer({ min: 1, max: 16 }), fc.constantFrom(32, 64, 8192)),
  enable_prefix_caching: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  prefill_ms: fc.constantFrom(...PASS_MS),
  decode_ms: fc.constantFrom(...PASS_MS),
  timing: timingDraw,
});

const roleDraw: fc.Arbitrary<RoleDraw> = fc.record({
  replicas: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(2) }),
  dp_size: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(2) }),
  engine: engineDraw,
  host: fc.constantFrom('none', 'private', 'shared'),
  d2h_bandwidth_gbps: declared(fc.constantFrom(...BANDWIDTHS_GBPS)),
  h2d_bandwidth_gbps: declared(fc.constantFrom(...BANDWIDTHS_GBPS)),
  latency_to_first_byte_ms: declared(fc.constantFrom(0, 0.25, 1)),
});

interface ClusterDraw {
  disaggregated: boolean;
  /** The first aggregated role, or prefill role when disaggregated, and an optional second one. */
  routed: RoleDraw;
  second_routed: RoleDraw | null;
  decode: RoleDraw;
  second_decode: RoleDraw | null;
  block_size: number;
  kv_cache_bytes_per_token: number;
  /** The shared pool's settings, common to every participant (G2-10). */
  shared_blocks: number;
  shared_d2h_bandwidth_gbps: number | null;
  shared_h2d_bandwidth_gbps: number | null;
  host_blocks: number;
  kv_transfer_bandwidth_gbps: number;
  kv_transfer_latency_ms: number;
}

const clusterDraw: fc.Arbitrary<ClusterDraw> = fc.record({
  disaggregated: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  // Optional second roles shrink away (to null) when a counterexample does not need them.
  routed: roleDraw,
  second_routed: fc.option(roleDraw, { nil: null, freq: 3 }),
  decode: roleDraw,
  second_decode: fc.option(roleDraw, { nil: null, freq: 2 }),
  block_size: fc.constantFrom(2, 4),
  kv_cache_bytes_per_token: fc.constantFrom(1, 1000, 250_000),
  shared_blocks: fc.integer({ min: 1, max: 32 }),
  shared_d2h_bandwidth_gbps: declared(fc.constantFrom(...BANDWIDTHS_GBPS)),
  shared_h2d_bandwidth_gbps: declared(fc.constantFrom(...BANDWIDTHS_GBPS)),
  host_blocks: fc.integer({ min: 1, max: 32 }),
  kv_transfer_bandwidth_gbps: fc.constantFrom(0.001, 0.01, 1, 32),
  kv_transfer_latency_ms: fc.constantFrom(0, 0.5),
});

// ── The router ──────────────────────────────────────────────────────────────────────────────

/** The lag: fixed, exactly a pass, or exactly the gap between two arrivals (resolved later). */
type LagDraw = { kind: 'fixed'; ms: number } | { kind: 'pass' } | { kind: 'gap'; first: number; second: number };

interface RouterDraw {
  policy: 'kv' | 'round_robin';
  lag: LagDraw;
  /** Null: left out of the config (see declared). */
  overlap_score_credit: number | null;
  host_cache_hit_weight: number | null;
  prefill_load_scale: number | null;
  router_temperature: number | null;
}

const routerDraw: fc.Arbitrary<RouterDraw> = fc.record({
  policy: fc.oneof({ weight: 4, arbitrary: fc.constant('kv' as const) }, { weight: 1, arbitrary: fc.constant('round_robin' as const) }),
  lag: fc.oneof(
    fc.record({ kind: fc.constant('fixed' as const), ms: fc.constantFrom(0, 0.25, 1, 5) }),
    fc.record({ kind: fc.constant('pass' as const) }),
    fc.record({ kind: fc.constant('gap' as const), first: fc.nat(7), second: fc.nat(7) }),
  ),
  overlap_score_credit: declared(fc.constantFrom(1, 0, 2)),
  host_cache_hit_weight: declared(fc.constantFrom(0.75, 1, 0)),
  prefill_load_scale: declared(fc.constantFrom(1, 0)),
  router_temperature: declared(fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(0.5) })),
});

// ── Explicit requests ───────────────────────────────────────────────────────────────────────

type PromptDraw =
  | { kind: 'parts'; prefix: number | null; tokens: number }
  | { kind: 'extends'; parent: number; tokens: number }
  | { kind: 'trace'; input_length: number; ids: number[]; shared_ids: number };

interface RequestDraw {
  /** Arrival on a 0.25 ms grid, or at the same instant as the request before. */
  arrival_quarters: number;
  same_instant: boolean;
  prompt: PromptDraw;
  output_length: number;
  session: number | null;
  target_worker: number | null;
}

/** Small trace ids (so prompts share blocks) and a few Mooncake-sized ones below 2^53. */
const traceId = fc.oneof({ weight: 6, arbitrary: fc.nat(6) }, { weight: 1, arbitrary: fc.constantFrom(2 ** 40 + 3, 2 ** 52 + 1, Number.MAX_SAFE_INTEGER) });

const requestDraw: fc.Arbitrary<RequestDraw> = fc.record({
  arrival_quarters: fc.oneof(fc.nat(8), fc.nat(80)),
  same_instant: fc.boolean(),
  prompt: fc.oneof(
    fc.record({ kind: fc.constant('parts' as const), prefix: fc.option(fc.nat(2), { nil: null }), tokens: fc.integer({ min: 1, max: 24 }) }),
    fc.record({ kind: fc.constant('extends' as const), parent: fc.nat(7), tokens: fc.integer({ min: 1, max: 12 }) }),
    fc.record({
      kind: fc.constant('trace' as const),
      input_length: fc.integer({ min: 1, max: 32 }),
      ids: fc.array(traceId, { minLength: 8, maxLength: 8 }),
      shared_ids: fc.nat(8),
    }),
  ),
  output_length: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 6 }) }, { weight: 1, arbitrary: fc.integer({ min: 7, max: 16 }) }),
  session: fc.option(fc.nat(2), { nil: null }),
  target_worker: fc.option(fc.nat(3), { nil: null, freq: 6 }),
});

// ── Agentic traces ──────────────────────────────────────────────────────────────────────────

interface NodeDraw {
  input_length: number;
  /** A request too large for any rank: it fails, and its play with it (AGX-2). */
  huge: boolean;
  output_length: number;
  tool: boolean;
  ids: number[];
  shared_ids: number;
  not_before_ms: number;
  dependency: { predecessor: number; trigger: 'dispatch' | 'completion'; delay_ms: number; relation: 'sequence' | 'spawn' | 'join' } | null;
}

interface AgenticDraw {
  trace_block_size: number;
  plays: NodeDraw[][];
  lanes: number;
  assignment: 'stride' | 'snapshot';
  iterations: number;
}

const nodeDraw: fc.Arbitrary<NodeDraw> = fc.record({
  input_length: fc.integer({ min: 1, max: 24 }),
  huge: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  output_length: fc.integer({ min: 0, max: 4 }),
  tool: fc.boolean(),
  ids: fc.array(traceId, { minLength: 8, maxLength: 8 }),
  shared_ids: fc.nat(8),
  not_before_ms: fc.constantFrom(0, 1, 5, 40),
  dependency: fc.option(
    fc.record({
      predecessor: fc.nat(3),
      trigger: fc.constantFrom('completion' as const, 'dispatch' as const),
      delay_ms: fc.constantFrom(0, 0.5, 1, 20),
      relation: fc.constantFrom('sequence' as const, 'spawn' as const, 'join' as const),
    }),
    { nil: null, freq: 3 },
  ),
});

const agenticDraw: fc.Arbitrary<AgenticDraw> = fc.record({
  trace_block_size: fc.constantFrom(2, 4),
  plays: fc.array(fc.array(nodeDraw, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  lanes: fc.integer({ min: 1, max: 3 }),
  assignment: fc.constantFrom('stride' as const, 'snapshot' as const),
  iterations: fc.integer({ min: 1, max: 2 }),
});

// ── The whole case ──────────────────────────────────────────────────────────────────────────

interface CaseDraw {
  seed: number;
  cluster: ClusterDraw;
  router: RouterDraw;
  workload: { kind: 'requests'; prefixes: number[]; trace_block_size: number; requests: RequestDraw[] } | { kind: 'agentic'; agentic: AgenticDraw };
}

const caseDraw: fc.Arbitrary<CaseDraw> = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  cluster: clusterDraw,
  router: routerDraw,
  workload: fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('requests' as const), prefixes: fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 3, maxLength: 3 }), trace_block_size: fc.constantFrom(2, 4, 8), requests: fc.array(requestDraw, { minLength: 1, maxLength: 10 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('agentic' as const), agentic: agenticDraw }) },
  ),
});

/** Whole generated cases; `exclude` leaves out areas with a known engine defect. */
export function fuzzCaseArbitrary(options: GeneratorOptions = { exclude: [] }): fc.Arbitrary<FuzzCase> {
  return caseDraw.map((draw) => buildCase(draw, new Set(options.exclude)));
}

const AMPLE_GPU_BLOCKS = 128;
const AMPLE_SEQS = 16;

function buildCase(draw: CaseDraw, exclude: Set<DefectArea>): FuzzCase {
  const { cluster } = draw;
  const agentic = draw.workload.kind === 'agentic';
  const roles: RawConfig[] = [];
  const routed = [cluster.routed, ...(cluster.second_routed ? [cluster.second_routed] : [])];
  const decode = [cluster.decode, ...(cluster.second_decode ? [cluster.second_decode] : [])];
  roles.push(...routed.map((role) => roleConfig(role, cluster.disaggregated ? 'prefill' : 'aggregated', cluster, exclude, agentic)));
  if (cluster.disaggregated) roles.push(...decode.map((role) => roleConfig(role, 'decode', cluster, exclude, agentic)));
  if (agentic && roles.some((role) => role.host_offload !== undefined)) for (const role of roles) role.dp_size = 1; // AGX-6
  const routedWorkers = routed.reduce((total, role) => total + role.replicas, 0);
  const clusterConfig: RawConfig = { workers: roles };
  if (cluster.disaggregated) {
    clusterConfig.kv_transfer_bandwidth_gbps = cluster.kv_transfer_bandwidth_gbps;
    clusterConfig.kv_transfer_latency_ms = cluster.kv_transfer_latency_ms;
  }
  let workload: RawConfig;
  let agentic_trace: string | null = null;
  let arrivals: number[] = [];
  if (draw.workload.kind === 'requests') {
    const built = requestsWorkload(draw.workload, routedWorkers);
    workload = built.workload;
    arrivals = built.arrivals;
  } else {
    const smallestGpu = Math.min(...roles.map((role) => (role.engine as { num_gpu_blocks: number }).num_gpu_blocks));
    const built = agenticWorkload(draw.workload.agentic, cluster.block_size * smallestGpu, exclude.has('failing-plays'));
    workload = built.workload;
    agentic_trace = built.trace;
  }
  const router = draw.router;
  const firstPass = routed[0].engine.prefill_ms;
  const lag = router.lag;
  const kv_event_lag_ms =
    lag.kind === 'fixed' ? lag.ms : lag.kind === 'pass' ? firstPass : Math.abs((arrivals[lag.first % Math.max(arrivals.length, 1)] ?? 0) - (arrivals[lag.second % Math.max(arrivals.length, 1)] ?? 0));
  return {
    config: {
      seed: draw.seed,
      cluster: clusterConfig,
      router: putDeclared(
        { policy: router.policy, kv_event_lag_ms },
        {
          overlap_score_credit: router.overlap_score_credit,
          host_cache_hit_weight: router.host_cache_hit_weight,
          prefill_load_scale: router.prefill_load_scale,
          router_temperature: router.router_temperature,
        },
      ),
      workload,
    },
    agentic_trace,
  };
}

function roleConfig(draw: RoleDraw, role: 'aggregated' | 'prefill' | 'decode', cluster: ClusterDraw, exclude: Set<DefectArea>, agentic: boolean): RawConfig {
  const engine = draw.engine;
  const withHost = draw.host !== 'none';
  const ample = (withHost && exclude.has('restore-under-pressure')) || (role === 'decode' && exclude.has('tight-decode-ranks'));
  const config: RawConfig = {
    role,
    replicas: draw.replicas,
    dp_size: agentic && withHost ? 1 : draw.dp_size,
    engine: {
      block_size: cluster.block_size,
      num_gpu_blocks: ample ? Math.max(engine.num_gpu_blocks, AMPLE_GPU_BLOCKS) : engine.num_gpu_blocks,
      max_num_seqs: ample ? Math.max(engine.max_num_seqs, AMPLE_SEQS) : engine.max_num_seqs,
      max_num_batched_tokens: role === 'decode' && exclude.has('tight-decode-ranks') ? 8192 : engine.max_num_batched_tokens,
      enable_prefix_caching: engine.enable_prefix_caching,
      kv_cache_bytes_per_token: cluster.kv_cache_bytes_per_token,
      timing: timingConfig(engine),
    },
  };
  if (draw.host === 'private') {
    config.host_offload = putDeclared(
      { num_host_blocks: cluster.host_blocks, scope: 'dp_rank_local' },
      { d2h_bandwidth_gbps: draw.d2h_bandwidth_gbps, h2d_bandwidth_gbps: draw.h2d_bandwidth_gbps, latency_to_first_byte_ms: draw.latency_to_first_byte_ms },
    );
  } else if (draw.host === 'shared') {
    // (A setting left out takes its default, which is never unlimited.)
    const limited = (gbps: number | null) => (gbps === 0 && exclude.has('unlimited-shared-bandwidth') ? 1 : gbps);
    config.host_offload = putDeclared(
      { num_host_blocks: cluster.shared_blocks, scope: 'cluster_shared' },
      {
        d2h_bandwidth_gbps: limited(draw.d2h_bandwidth_gbps),
        h2d_bandwidth_gbps: limited(draw.h2d_bandwidth_gbps),
        latency_to_first_byte_ms: draw.latency_to_first_byte_ms,
        shared_d2h_bandwidth_gbps: limited(cluster.shared_d2h_bandwidth_gbps),
        shared_h2d_bandwidth_gbps: limited(cluster.shared_h2d_bandwidth_gbps),
      },
    );
  }
  return config;
}

const quartersToMs = (quarters: number) => quarters / 4;

function requestsWorkload(
  draw: { prefixes: number[]; trace_block_size: number; requests: RequestDraw[] },
  routedWorkers: number,
): { workload: RawConfig; arrivals: number[] } {
  const prefixes: Record<string, number> = {};
  const requests: RawConfig[] = [];
  const arrivals: number[] = [];
  const traceIds: number[][] = [];
  draw.requests.forEach((request, i) => {
    const id = `r${i}`;
    const drawn_ms = request.same_instant && i > 0 ? arrivals[i - 1] : quartersToMs(request.arrival_quarters);
    const prompt = request.prompt;
    // A prompt continues a turn already sent: never before the request it extends arrives.
    const arrival_ms = prompt.kind === 'extends' && i > 0 ? Math.max(drawn_ms, arrivals[prompt.parent % i]) : drawn_ms;
    arrivals.push(arrival_ms);
    const raw: RawConfig = { id, arrival_ms };
    if (prompt.kind === 'extends' && i > 0) {
      raw.extends = `r${prompt.parent % i}`;
      raw.prompt = [{ tokens: prompt.tokens }];
      traceIds.push([]);
    } else if (prompt.kind === 'trace') {
      const count = Math.ceil(prompt.input_length / draw.trace_block_size);
      // Share the first ids with the previous trace request, so Mooncake prompts overlap.
      let previous: number[] = [];
      for (const earlier of traceIds) if (earlier.length > 0) previous = earlier;
      const ids: number[] = [];
      for (let j = 0; j < count; j++) ids.push(j < Math.min(prompt.shared_ids, previous.length) ? previous[j] : (j < prompt.ids.length ? prompt.ids[j] : 1000 + j));
      raw.hash_ids = ids;
      raw.input_length = prompt.input_length;
      traceIds.push(ids);
    } else {
      const tokens = prompt.tokens;
      const parts: RawConfig[] = [];
      const prefix = prompt.kind === 'parts' ? prompt.prefix : null;
      if (prefix !== null) {
        const name = `prefix ${prefix}`;
        prefixes[name] = draw.prefixes[prefix];
        parts.push({ prefix: name });
      }
      parts.push({ tokens });
      raw.prompt = parts;
      traceIds.push([]);
    }
    raw.output_length = request.output_length;
    if (request.session !== null) raw.session = `s${request.session}`;
    if (request.target_worker !== null && request.target_worker < routedWorkers) raw.target_worker = request.target_worker;
    requests.push(raw);
  });
  return { workload: { trace_block_size: draw.trace_block_size, prefixes, requests }, arrivals };
}

function agenticWorkload(draw: AgenticDraw, smallestGpuTokens: number, noFailures: boolean): { workload: RawConfig; trace: string } {
  const B = draw.trace_block_size;
  const lines = [JSON.stringify({ schema: AGENTIC_SCHEMA, version: AGENTIC_VERSION, block_size: B })];
  draw.plays.forEach((nodes, p) => {
    const play_id = `play${p}`;
    const idsOf: number[][] = [];
    nodes.forEach((node, n) => {
      let input_length = node.huge && !noFailures ? smallestGpuTokens + 1 : node.input_length;
      // Without failures, every request fits on every rank: input + output − 1 tokens of KV.
      if (noFailures) input_length = Math.max(1, Math.min(input_length, smallestGpuTokens - Math.max(node.output_length - 1, 0)));
      const count = Math.ceil(input_length / B);
      const previous = idsOf[n - 1] ?? [];
      const ids: number[] = [];
      for (let j = 0; j < count; j++) ids.push(j < Math.min(node.shared_ids, previous.length) ? previous[j] : (j < node.ids.length ? node.ids[j] : 1000 + j));
      idsOf.push(ids);
      const dependencies = node.dependency !== null && n > 0 ? [{ predecessor: `${play_id}-n${node.dependency.predecessor % n}`, trigger: node.dependency.trigger, delay_ms: node.dependency.delay_ms, relation: node.dependency.relation }] : [];
      lines.push(
        JSON.stringify({
          request_id: `${play_id}-n${n}`,
          play_id,
          session_id: node.tool ? 'tool' : 'main',
          input_length,
          output_length: node.output_length,
          hash_ids: ids,
          not_before_ms: node.not_before_ms,
          dependencies,
        }),
      );
    });
  });
  return {
    workload: { agentic: { trace: GENERATED_TRACE_NAME, lanes: draw.lanes, assignment: draw.assignment, iterations: draw.iterations } },
    trace: `${lines.join('\n')}\n`,
  };
}
