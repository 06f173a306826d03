// The engine-level part of a scenario: the cluster table, the conversations and requests the
// scenario sends, turned into the same configuration `kvqual replay` reads, and the reports of
// the runs. Steps fill it in; src/ validates, simulates and reports.
import { ConfigError, validateReplayConfig } from '../../src/config/load';
import type { Cluster } from '../../src/sim/cluster';
import type { ReplayConfig } from '../../src/config/schema';
import { assertEveryRequestEnded, runReplay, ReplayInputs, ReplayOutcome } from '../../src/replay';
import { parseAgenticTrace } from '../../src/agentic/trace';
import { parseDurationNs } from '../../src/time';
import type { ClusterSetup } from './setup';
import type { PassShape } from '../../src/engine/passTime';

type Raw = Record<string, unknown>;

export interface HostMemory {
  scope: 'none' | 'dp_rank_local' | 'cluster_shared';
  blocks: number;
}

const nsToMs = (ns: number) => ns / 1_000_000;

/** The extra request the perturbation test double (perturb.ts) adds to a perturbed configuration. */
export const PROBE_REQUEST = { id: 'perturbation-probe', arrival_ms: 0, prompt: [{ tokens: 1 }], output_length: 1 } as const;

function number(text: string, what: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)/.exec(text);
  if (!match) throw new Error(`${what}: "${text}" is not a number`);
  return Number(match[1]);
}

function onOrOff(text: string, what: string): boolean {
  const value = text.trim();
  if (value !== 'on' && value !== 'off') throw new Error(`${what}: "${text}": write on or off`);
  return value === 'on';
}

/** Parses "none", "private, 16 blocks" or "shared, 16 blocks". */
export function parseHostMemory(text: string): HostMemory {
  const value = text.trim();
  if (value === 'none') return { scope: 'none', blocks: 0 };
  const match = /^(private|shared), (\d+) blocks?$/.exec(value);
  if (!match) throw new Error(`host memory "${text}": write none, "private, N blocks" or "shared, N blocks"`);
  return { scope: match[1] === 'private' ? 'dp_rank_local' : 'cluster_shared', blocks: Number(match[2]) };
}

/** A fixed pass time set after the passes were given a measured table or a linear model: one or the other. */
function timedOtherwise(setting: string): Raw {
  return new Proxy({}, { set: () => { throw new Error(`"${setting}" sets a fixed pass time, but the workers already time their passes by a measured table or a linear model: give one or the other`); } });
}

/** One pass of a run, as it started. */
export interface PassRecord extends PassShape {
  worker_id: number;
  start_ns: number;
  duration_ns: number;
}

/** Rows of a measured pass-time table: `| pass | new tokens | sequences | context tokens | time |`. */
export function passTimeTable(rows: Record<string, string>[]): Raw {
  const prefill: Raw[] = [];
  const decode: Raw[] = [];
  for (const row of rows) {
    const ms = nsToMs(parseDurationNs(row.time));
    if (row.pass === 'prefill') prefill.push({ tokens: number(row['new tokens'], 'new tokens'), ms });
    else if (row.pass === 'decode') decode.push({ batch_size: number(row.sequences, 'sequences'), context_tokens: number(row['context tokens'], 'context tokens'), ms });
    else throw new Error(`pass "${row.pass}": write prefill or decode`);
  }
  return { table: { prefill, decode } };
}

export class EngineScenario {
  workers = 0;
  readonly engine: Raw = { block_size: 4, num_gpu_blocks: 64, max_num_seqs: 8, max_num_batched_tokens: 256, kv_cache_bytes_per_token: 250_000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } };
  host: HostMemory = { scope: 'none', blocks: 0 };
  /** Disaggregated: the decode workers' host memory (`host memory` is the prefill workers'). */
  decodeHost: HostMemory = { scope: 'none', blocks: 0 };
  /** Disaggregated: the decode workers' GPU blocks per rank, when a scenario sets them apart (else `GPU blocks per rank`). */
  decodeGpuBlocks: number | null = null;
  readonly hostSettings: Raw = {};
  /** Extra role entries (e.g. a second group of workers), already in config form. */
  readonly extraRoles: Raw[] = [];
  readonly prefixes: Record<string, number> = {};
  readonly requests: Raw[] = [];
  private readonly lastOfSession = new Map<string, string>();
  private readonly turnsOfSession = new Map<string, number>();
  /** The requests the scenario's `When` sent (the ones `Then` talks about). */
  focus: string[] = [];
  outcomes: ReplayOutcome[] = [];
  /** An agentic trace (Agentic Mooncake v2 text) and how lanes replay it; replaces the explicit requests. */
  agenticTrace: string | null = null;
  /** The same trace as AISimulate writes it, for a scenario that runs both. */
  agenticTraceAsAisimulate: string | null = null;
  agentic: Raw | null = null;
  /** Disaggregated: prefill workers (this.workers) and this many decode workers. */
  decodeWorkers = 0;
  /** The prefill-to-decode KV handoff's bandwidth (PD-1), GB/s, when a scenario sets it (else 1). */
  kvHandoffBandwidthGbps: number | null = null;
  /** The handoff's latency before its first byte, ms, when a scenario sets it (else 0.5). */
  kvHandoffLatencyMs: number | null = null;
  /** The perturbation test double: one extra request, so the run's digest changes. */
  perturbed = false;
  /** Changes applied to the role entries before validation (guard cases). */
  readonly roleChanges: ((role: Raw) => void)[] = [];
  /** A cluster set up without running (contract checks), or the error its setup gave. */
  cluster: Cluster | null = null;
  setupError: ConfigError | null = null;

  constructor(private readonly setup: ClusterSetup) {}

  get blockSize(): number {
    return this.engine.block_size as number;
  }

  get outcome(): ReplayOutcome {
    const last = this.outcomes.at(-1);
    if (!last) throw new Error("this step checks a run, and nothing has run yet: a When such as 'When the replay runs' runs the cluster first");
    return last;
  }

  /** Applies one row of the cluster table. */
  applySetting(name: string, value: string): void {
    const setters = this.settingSetters(name, value);
    const set = setters[name];
    if (!set) throw new Error(`unknown cluster setting "${name}"; known settings: ${Object.keys(setters).join(', ')}`);
    set();
  }

  /** The names a cluster settings table accepts (docs/steps.md lists them). */
  settingNames(): string[] {
    return Object.keys(this.settingSetters('', ''));
  }

  private settingSetters(name: string, value: string): Record<string, () => void> {
    const fixed = (this.engine.timing as { fixed?: Raw }).fixed ?? timedOtherwise(name);
    return {
      'block size': () => (this.engine.block_size = number(value, name)),
      'GPU blocks per rank': () => (this.engine.num_gpu_blocks = number(value, name)),
      'running requests per rank': () => (this.engine.max_num_seqs = number(value, name)),
      'tokens per pass': () => (this.engine.max_num_batched_tokens = number(value, name)),
      'KV bytes per token': () => (this.engine.kv_cache_bytes_per_token = number(value, name)),
      'prefill pass': () => (fixed.prefill_ms = nsToMs(parseDurationNs(value))),
      'decode pass': () => (fixed.decode_ms = nsToMs(parseDurationNs(value))),
      'host memory': () => (this.host = parseHostMemory(value)),
      'host memory of decode workers': () => (this.decodeHost = parseHostMemory(value)),
      'GPU blocks per decode rank': () => (this.decodeGpuBlocks = number(value, name)),
      'host bandwidth per rank': () => {
        this.hostSettings.d2h_bandwidth_gbps = number(value, name);
        this.hostSettings.h2d_bandwidth_gbps = number(value, name);
      },
      'D2H bandwidth per rank': () => (this.hostSettings.d2h_bandwidth_gbps = number(value, name)),
      'H2D bandwidth per rank': () => (this.hostSettings.h2d_bandwidth_gbps = number(value, name)),
      'shared pool bandwidth': () => {
        this.hostSettings.shared_d2h_bandwidth_gbps = number(value, name);
        this.hostSettings.shared_h2d_bandwidth_gbps = number(value, name);
      },
      'time to first byte': () => (this.hostSettings.latency_to_first_byte_ms = nsToMs(parseDurationNs(value))),
      'KV handoff bandwidth': () => (this.kvHandoffBandwidthGbps = number(value, name)),
      'KV handoff latency': () => (this.kvHandoffLatencyMs = nsToMs(parseDurationNs(value))),
      'KV event lag': () => (this.setup.lag_ns = parseDurationNs(value)),
      'host block weight': () => (this.setup.router.host_cache_hit_weight = number(value, name)),
      'prefix caching': () => (this.engine.enable_prefix_caching = onOrOff(value, name)),
    };
  }

  /** A request; `session` continues that conversation when `continues` is true. */
  addRequest(request: { session: string | null; arrival_ns: number; own_tokens: number; shared_part?: string; output_length: number; worker?: number; continues: boolean }): string {
    const turn = request.session === null ? this.requests.length + 1 : (this.turnsOfSession.get(request.session) ?? 0) + 1;
    const id = request.session === null ? `req${turn}` : `${request.session}${turn}`;
    const raw: Raw = { id, arrival_ms: nsToMs(request.arrival_ns), output_length: request.output_length };
    if (request.session !== null) {
      raw.session = request.session;
      this.turnsOfSession.set(request.session, turn);
    }
    if (request.continues) {
      const prior = request.session === null ? undefined : this.lastOfSession.get(request.session);
      if (!prior) throw new Error(`conversation "${request.session}" has not started: start it first with a Given such as 'Given conversation "${request.session}" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens'`);
      raw.extends = prior;
    }
    const parts: Raw[] = [];
    if (request.shared_part !== undefined) parts.push({ prefix: request.shared_part });
    if (request.own_tokens > 0) parts.push({ tokens: request.own_tokens });
    raw.prompt = parts;
    if (request.worker !== undefined) raw.target_worker = request.worker;
    this.requests.push(raw);
    if (request.session !== null && !request.continues) this.lastOfSession.set(request.session, id);
    return id;
  }

  /** Sends a conversation's first prompt again, unchanged, as a new routed request. */
  repeatFirst(session: string, arrival_ns: number): string {
    const first = this.requests.find((request) => request.session === session && request.extends === undefined);
    if (!first) throw new Error(`conversation "${session}" has not started: start it first with a Given such as 'Given conversation "${session}" starts at 0 ms with a 9-token prompt and 2 output tokens'`);
    const turn = (this.turnsOfSession.get(session) ?? 0) + 1;
    this.turnsOfSession.set(session, turn);
    const id = `${session}${turn}`;
    const shared = `first prompt of ${session}`;
    const parts = first.prompt as Raw[];
    if (!(shared in this.prefixes)) {
      this.prefixes[shared] = parts.reduce((total, part) => total + ((part.tokens as number) ?? 0), 0);
      first.prompt = [{ prefix: shared }];
    }
    this.requests.push({ id, session, arrival_ms: nsToMs(arrival_ns), output_length: first.output_length, prompt: [{ prefix: shared }] });
    return id;
  }

  /** The configuration the scenario describes, as `kvqual replay` would read it (before validation). */
  rawConfig(seed: number): Raw {
    const roles: Raw[] = [this.role()];
    if (this.decodeWorkers > 0) roles.push(this.decodeRole());
    else if (this.decodeHost.scope !== 'none') throw new Error('host memory of decode workers: the cluster has no decode workers (describe a disaggregated cluster)');
    else if (this.decodeGpuBlocks !== null) throw new Error('GPU blocks per decode rank: the cluster has no decode workers (describe a disaggregated cluster)');
    else if (this.kvHandoffBandwidthGbps !== null) throw new Error('KV handoff bandwidth: the cluster has no decode workers (describe a disaggregated cluster)');
    else if (this.kvHandoffLatencyMs !== null) throw new Error('KV handoff latency: the cluster has no decode workers (describe a disaggregated cluster)');
    const workers = [...roles, ...this.extraRoles];
    for (const change of this.roleChanges) for (const role of workers) change(role);
    const cluster: Raw = { workers };
    if (this.decodeWorkers > 0) Object.assign(cluster, { kv_transfer_bandwidth_gbps: this.kvHandoffBandwidthGbps ?? 1, kv_transfer_latency_ms: this.kvHandoffLatencyMs ?? 0.5 });
    // An agentic workload takes its probe after validation (see config()): a config file may not mix the two.
    const probe: Raw[] = this.perturbed && !this.agentic ? [structuredClone(PROBE_REQUEST) as Raw] : [];
    const workload: Raw = this.agentic ? { agentic: { trace: 'scenario trace', ...this.agentic } } : { prefixes: this.prefixes, requests: [...this.requests, ...probe] };
    return {
      seed,
      cluster,
      router: {
        policy: this.setup.router.policy,
        kv_event_lag_ms: nsToMs(this.setup.lag_ns),
        overlap_score_credit: this.setup.router.overlap_score_credit,
        host_cache_hit_weight: this.setup.router.host_cache_hit_weight,
        prefill_load_scale: this.setup.router.prefill_load_scale,
        router_temperature: this.setup.router.router_temperature,
      },
      workload,
      ...(this.slo === null ? {} : { slo: { ...this.slo } }),
    };
  }

  role(): Raw {
    if (this.workers === 0) throw new Error("this step needs an engine-level cluster, and none was described: begin with 'Given a cluster of 2 aggregated workers with these settings:' and a settings table");
    const role: Raw = { role: this.decodeWorkers > 0 ? 'prefill' : 'aggregated', replicas: this.workers, engine: structuredClone(this.engine) };
    this.offloadTo(role, this.host);
    return role;
  }

  /** A role's host_offload from a `host memory` value and the host settings rows (none: no host_offload). */
  private offloadTo(role: Raw, memory: HostMemory): void {
    if (memory.scope !== 'none') role.host_offload = { num_host_blocks: memory.blocks, scope: memory.scope, ...this.hostSettings };
  }

  private decodeRole(): Raw {
    const role: Raw = { role: 'decode', replicas: this.decodeWorkers, engine: structuredClone(this.engine) };
    if (this.decodeGpuBlocks !== null) (role.engine as Raw).num_gpu_blocks = this.decodeGpuBlocks;
    this.offloadTo(role, this.decodeHost);
    return role;
  }

  /** The last configuration the scenario validated (set up, rejected or run), for its evidence. */
  lastConfig: Raw | null = null;

  get configured(): boolean {
    return this.lastConfig !== null;
  }

  config(seed: number, change?: (raw: Raw) => void): ReplayConfig {
    const raw = structuredClone(this.rawConfig(seed));
    change?.(raw);
    this.lastConfig = raw;
    if (!this.perturbed || !this.agentic) return validateReplayConfig(raw, 'scenario cluster');
    // The perturbation test double beside an agentic trace: the probe is submitted before the
    // lanes start (src/replay.ts runs explicit requests and an agentic trace together).
    this.lastConfig = { ...raw, perturbation_probe: structuredClone(PROBE_REQUEST) };
    const config = validateReplayConfig(raw, 'scenario cluster');
    const probe = validateReplayConfig({ ...raw, workload: { requests: [structuredClone(PROBE_REQUEST)] } }, 'perturbation probe').workload.requests!;
    return { ...config, workload: { ...config.workload, requests: [...(config.workload.requests ?? []), ...probe] } };
  }

  /** The same scenario with only the first of the focus requests (the solo baseline). */
  soloOutcome(seed: number): ReplayOutcome {
    if (this.agenticTrace !== null || this.focus.length === 0) {
      throw new Error("this step compares with a run of the resume alone, and the scenario sent no resume: send it with a When such as 'When conversation \"A\" resumes at 20 ms with 4 more tokens'");
    }
    const others = new Set(this.focus.slice(1));
    const outcome = runReplay(
      this.config(seed, (raw) => {
        const workload = raw.workload as { requests: Raw[] };
        workload.requests = workload.requests.filter((request) => !others.has(request.id as string));
      }),
      this.inputs(),
    );
    assertEveryRequestEnded(outcome.result);
    this.soloBaseline = outcome;
    return outcome;
  }

  /** The solo baseline a comparison ran, if any (its figure shows it beside the scenario's run). */
  soloBaseline: ReplayOutcome | null = null;

  /** The parsed agentic trace, when the scenario has one. */
  inputs(): ReplayInputs {
    // Evidence and figures show every batch; steps may read every candidate's breakdown.
    const history = { keep_event_history: true, kept_scores: 'all' as const };
    if (this.agentic !== null && this.agenticTrace === null) throw new Error("the lanes replay an agentic trace, and none was given: give it with 'Given an agentic trace with 4-token trace blocks:' and its table");
    return this.agenticTrace === null ? history : { ...history, agentic_trace: parseAgenticTrace(this.agenticTrace, 'scenario trace') };
  }

  /** Service-level objectives (config `slo`), when the scenario sets them. */
  slo: Record<string, number> | null = null;

  /** Every pass of the last run, as it started: its worker, start, shape and duration (pass-time claims read them). */
  passes: PassRecord[] = [];

  run(seed: number, change?: (raw: Raw) => void): ReplayOutcome {
    const passes: PassRecord[] = [];
    const observe = (cluster: Cluster) => {
      for (const rank of cluster.ranks) rank.passObserver = (engine, pass) => passes.push({ worker_id: engine.rank.worker_id, start_ns: pass.time_ns, duration_ns: pass.duration_ns, ...pass.shape });
    };
    const outcome = runReplay(this.config(seed, change), { ...this.inputs(), observe });
    this.passes = passes;
    assertEveryRequestEnded(outcome.result);
    this.outcomes.push(outcome);
    return outcome;
  }
}
