// A cluster replay (TOPO-1, TIME-3 end to end): engine ranks of one or more roles behind the
// KV-aware router, KV events flowing engine → lagged transport → router mirror, G2 pools
// (private per rank or one shared pool) with their transfers, and requests arriving over time.
import { InvariantError, Kernel, Phase } from '../kernel';
import { RandomStreams } from '../random';
import type { Nanos } from '../time';
import type { KvEvent, KvEventBatch, RankRef } from '../events/model';
import { releaseEvent as importedReleaseEvent } from '../events/model';
import { EventTransport } from '../events/transport';
import { Router, RouterSettings } from '../router/router';
import { EventStreamError } from '../router/mirror';
import { HostPool } from '../engine/hostPool';
import { EngineSettings, HostDomain, RankEngine, RankListener } from '../engine/rank';
import { PrivateLanes, SharedBandwidth, TransferEngine, TransferLog, transferNs } from '../engine/transfers';
import { SimRequest } from '../engine/request';
import type { Prompt } from '../prompt';
import { BlockIds } from '../collections/blockIds';
import type { RequestIdentity } from '../engine/request';
import { ValueCounts } from '../collections/valueCounts';
import { Int32Pool } from '../collections/typedArrays';
import { TableCeiling } from '../report/prefixHitRates';
import { WORDS_PER_BLOCK } from '../hash';
import type { TierIndex } from '../router/residency';
import { faultPlanted, plantedDriftNs } from '../fuzz/simulatorFaults';

// Read per event: copied into this module once (run through tsx or compiled, every read of an imported
// binding is a getter call, esbuild's live bindings).
const releaseEvent = importedReleaseEvent;

export type Role = 'aggregated' | 'prefill' | 'decode';
export type HostScope = 'dp_rank_local' | 'cluster_shared';

export interface HostOffloadSpec {
  num_host_blocks: number;
  scope: HostScope;
  d2h_bandwidth_gbps: number;
  h2d_bandwidth_gbps: number;
  latency_to_first_byte_ns: Nanos;
  shared_d2h_bandwidth_gbps: number;
  shared_h2d_bandwidth_gbps: number;
  kv_layout_id: string;
}

export interface RoleSpec {
  role: Role;
  replicas: number;
  dp_size: number;
  tensor_parallel_size: number;
  engine: EngineSettings;
  host_offload: HostOffloadSpec | null;
}

/** PD-1: how a prefill worker's KV reaches the decode worker. */
export interface KvTransferSpec {
  bandwidth_gbps: number;
  latency_ns: Nanos;
}

export interface ClusterSpec {
  seed: number;
  /** Needed when the cluster has prefill and decode roles. */
  kv_transfer?: KvTransferSpec;
  /** Fail with an InvariantError after this many kernel events (a livelock guard for generated cases); unlimited by default. */
  max_kernel_events?: number;
  /** Keep every delivered event batch (for --events-out, evidence and pictures); off by default, so memory grows with what was asked for. */
  keep_event_history?: boolean;
  /** Told of each event batch as the router receives it, before it is applied (streams `--events-out` without keeping the history). */
  on_delivered?: (batch: KvEventBatch, visible_ns: Nanos) => void;
  /** Step every decode pass through the kernel instead of batching runs of identical ones (same run either way; for tests that compare the two). */
  step_every_pass?: boolean;
  /** Engines' Stored events, and the router's load while a request is active, hold each block id they name instead of the request's run of ids with one count (same run either way; for tests that compare the two). */
  hold_each_block_id?: boolean;
  roles: RoleSpec[];
  router: Omit<RouterSettings, 'block_size'> & { kv_event_lag_ns: Nanos };
}

export interface RequestSpec {
  identity: RequestIdentity;
  arrival_ns: Nanos;
  prompt: Prompt;
  output_length: number;
  /** Send straight to this worker (dp rank 0), bypassing the router's choice. */
  target_worker?: number | null;
}

export class ClusterSetupError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'ClusterSetupError';
  }
}

export interface SharedDomainReport {
  domain_id: string;
  capacity_blocks: number;
  resident_blocks: number;
  used_blocks: number;
  participants: { worker_id: number; dp_rank: number; role: Role }[];
}

/** A request that neither finished, failed nor was skipped when the run ran out of work: an invariant violation. */
export interface StuckRequest {
  request_id: string;
  status: string;
  worker_id: number | null;
  dp_rank: number | null;
  /** Where it is held, in words. */
  where: string;
  /** Its last sign of progress (dispatch, admission attempt or token). */
  last_progress_ns: Nanos;
}

export interface ClusterResult {
  requests: SimRequest[];
  /** Requests left unfinished although nothing was left to do (empty in a correct run). */
  stuck: StuckRequest[];
  end_ns: Nanos;
  transfers: TransferLog['records'];
  /** Delivered batches when history was kept (see ClusterSpec.keep_event_history). */
  batches: { batch: KvEventBatch; visible_ns: Nanos }[];
  batches_delivered: number;
  /** Inter-token gaps of the finished requests, counted per value. */
  itl_ns: ValueCounts;
  events_emitted: number;
  events_withheld: number;
  g2_domains: SharedDomainReport[];
  failure: EventStreamError | null;
  ranks: RankEngine[];
}

/** The shared-pool contract (G2-10): every participant agrees on these, or setup fails naming the field. */
const SHARED_CONTRACT: { name: string; read: (role: RoleSpec) => unknown }[] = [
  { name: 'host_offload.kv_layout_id', read: (r) => r.host_offload!.kv_layout_id },
  { name: 'tensor_parallel_size', read: (r) => r.tensor_parallel_size },
  { name: 'engine.block_size', read: (r) => r.engine.block_size },
  { name: 'block bytes (block_size × kv_cache_bytes_per_token)', read: (r) => r.engine.block_size * r.engine.kv_cache_bytes_per_token },
  { name: 'host_offload.num_host_blocks', read: (r) => r.host_offload!.num_host_blocks },
  { name: 'host_offload.shared_d2h_bandwidth_gbps', read: (r) => r.host_offload!.shared_d2h_bandwidth_gbps },
  { name: 'host_offload.shared_h2d_bandwidth_gbps', read: (r) => r.host_offload!.shared_h2d_bandwidth_gbps },
];

export function checkSharedContract(roles: readonly RoleSpec[]): void {
  const participants = roles.map((role, index) => ({ role, index })).filter(({ role }) => role.host_offload?.scope === 'cluster_shared');
  if (participants.length < 2) return;
  const [first, ...others] = participants;
  for (const other of others) {
    for (const term of SHARED_CONTRACT) {
      const expected = term.read(first.role);
      const actual = term.read(other.role);
      if (expected !== actual) {
        throw new ClusterSetupError(
          `cluster.workers[${other.index}]`,
          `shared G2 pool participants disagree on ${term.name}: ${JSON.stringify(actual)} here, ${JSON.stringify(expected)} on cluster.workers[${first.index}] (${first.role.role})`,
        );
      }
    }
  }
}

/** The roles a cluster may combine (PD-1) and the one block_size they all take. */
export function checkRoles(spec: ClusterSpec): void {
  checkDisaggregation(spec);
  checkOneBlockSize(spec);
}

/** PD-1: prefill roles need decode roles and a KV transfer setting; aggregated roles do not mix with them. */
function checkDisaggregation(spec: ClusterSpec): void {
  const has = (role: Role) => spec.roles.some((r) => r.role === role);
  if (!has('prefill') && !has('decode')) return;
  if (has('aggregated')) throw new ClusterSetupError('cluster.workers', 'aggregated workers cannot be mixed with prefill/decode workers');
  if (!has('prefill')) throw new ClusterSetupError('cluster.workers', 'decode workers need prefill workers in front of them');
  if (!has('decode')) throw new ClusterSetupError('cluster.workers', 'prefill workers need decode workers to hand their KV to (PD-1)');
  if (!spec.kv_transfer) throw new ClusterSetupError('cluster.kv_transfer_bandwidth_gbps', 'a prefill/decode cluster needs the KV transfer bandwidth');
}

/** Every role takes the block_size of the first: the router hashes and scores one size, and prefill hands KV to decode block for block. */
function checkOneBlockSize(spec: ClusterSpec): void {
  const why = spec.roles.some((role) => role.role !== 'aggregated')
    ? 'prefill and decode workers hand their KV over block for block (PD-1)'
    : 'the router scores every worker by the same blocks, and a request is hashed once, in blocks of one size (SCORE-2, HASH-1)';
  const first = spec.roles[0].engine.block_size;
  const other = spec.roles.findIndex((role) => role.engine.block_size !== first);
  if (other >= 0) {
    throw new ClusterSetupError(
      `cluster.workers[${other}].engine.block_size`,
      `${spec.roles[other].engine.block_size} differs from the ${first} of cluster.workers[0]: ${why}, so every role takes one block_size`,
    );
  }
}

/**
 * A request preempted this many times is spinning: readmitted and preempted again pass after pass
 * (passes of a nanosecond or so, while something slow holds the G1 blocks it needs). Such a run
 * settles, but can take billions of kernel events, and no request ends meanwhile; it is said once.
 */
export const SPIN_NOTICE_PREEMPTIONS = 10_000;

/** A request that is spinning (see SPIN_NOTICE_PREEMPTIONS): where, and by when. */
export interface SpinNotice extends RankRef {
  request_id: string;
  preemptions: number;
  time_ns: Nanos;
}

export class Cluster implements RankListener {
  readonly kernel = new Kernel();
  readonly random: RandomStreams;
  /** Places on aggregated or prefill ranks, KV-aware (SCORE-1..3). */
  readonly router: Router;
  /** PD-1: places disaggregated requests on decode ranks by load alone (credit 0); sees no events (EVT-4). */
  readonly decodeRouter: Router | null;
  readonly transport: EventTransport;
  readonly transferLog: TransferLog;
  readonly ranks: RankEngine[] = [];
  private readonly requests: SimRequest[] = [];
  private sharedDomain: HostDomain | null = null;
  /** Block hashes as small ids, shared by the engine ranks and the router's mirror of this run. */
  readonly blockIds = new BlockIds();
  /** Per-request block buffers, reused from requests that have ended. */
  private readonly requestBuffers = new Int32Pool();
  /** Which prompt blocks of the requests that arrived were seen before, for the infinite-cache ceiling (src/report/prefixHitRates.ts). */
  private readonly prefixCeiling = new TableCeiling(this.blockIds);
  private readonly finishedTokenGaps = new ValueCounts();
  private eventsEmitted = 0;
  private eventsWithheld = 0;
  private failure: EventStreamError | null = null;
  /** Called when a request finishes or fails client-side (for workload drivers). */
  onFinished: ((request: SimRequest) => void) | null = null;
  /** Told how many requests have ended of those submitted, as they end and every 65,536 kernel events (a progress display). */
  onProgress: ((ended: number, submitted: number, now_ns: Nanos) => void) | null = null;
  /** Told once per request, when it has been preempted SPIN_NOTICE_PREEMPTIONS times (see SpinNotice). */
  onSpinning: ((notice: SpinNotice) => void) | null = null;
  private ended = 0;
  /** Called when a request has been dispatched to a rank (for dispatch-triggered dependencies). */
  onDispatched: ((request: SimRequest) => void) | null = null;

  /** 0, or how much later the planted 'drift' fault starts this simulation's requests (src/fuzz/simulatorFaults.ts). */
  private readonly drift_ns = plantedDriftNs();

  constructor(readonly spec: ClusterSpec) {
    if (spec.roles.length === 0) throw new ClusterSetupError('cluster.workers', 'at least one role is needed');
    checkSharedContract(spec.roles);
    this.random = new RandomStreams(spec.seed);
    this.transferLog = new TransferLog(this.kernel);
    const routed = spec.roles.filter((role) => role.role !== 'decode');
    checkRoles(spec);
    const block_size = (routed[0] ?? spec.roles[0]).engine.block_size;
    // Object.assign, not a spread followed by a new field (see runReplay).
    this.router = new Router(Object.assign({}, spec.router, { block_size }), this.random.stream('router.tie_break'), 'zero', this.blockIds);
    const decode = spec.roles.find((role) => role.role === 'decode');
    this.decodeRouter = decode
      ? new Router(
          Object.assign({}, spec.router, { policy: 'kv' as const, block_size: decode.engine.block_size, overlap_score_credit: 0, host_cache_hit_weight: 0, router_temperature: 0 }),
          this.random.stream('decode_router.tie_break'),
          'zero',
          this.blockIds,
        )
      : null;
    this.transport = new EventTransport(this.kernel, spec.router.kv_event_lag_ns, (batch) => this.deliver(batch), spec.keep_event_history ?? false, spec.on_delivered ?? null);
    this.buildRanks();
  }

  private buildRanks(): void {
    let worker_id = 0;
    for (const role of this.spec.roles) {
      for (let replica = 0; replica < role.replicas; replica++, worker_id++) {
        if (role.role !== 'decode') this.router.addWorker(worker_id, role.dp_size);
        else this.decodeRouter!.addWorker(worker_id, role.dp_size);
        for (let dp_rank = 0; dp_rank < role.dp_size; dp_rank++) {
          const rank = new RankEngine({ worker_id, dp_rank }, this.ranks.length, role.role, role.engine, this.kernel, this, this.blockIds);
          rank.host = this.hostDomainFor(role, rank);
          rank.batchDecodeRuns = !(this.spec.step_every_pass ?? false);
          rank.holdIdRuns = !(this.spec.hold_each_block_id ?? false);
          this.ranks.push(rank);
        }
      }
    }
  }

  private hostDomainFor(role: RoleSpec, rank: RankEngine): HostDomain | null {
    const offload = role.host_offload;
    if (!offload) return null;
    if (offload.scope === 'cluster_shared') {
      const split = faultPlanted('pool-split'); // planted fault (src/fuzz/simulatorFaults.ts): each rank a "shared" pool of its own
      if (!this.sharedDomain || split) {
        const transfers = new SharedBandwidth(this.kernel, this.transferLog, offload);
        this.sharedDomain = { pool: new HostPool(split ? `shared-${rank.rank_index}` : 'shared-0', offload.num_host_blocks, this.blockIds), transfers, subscribers: [] };
      }
      (this.sharedDomain.transfers as SharedBandwidth).join(rank.rank_index, offload);
      this.sharedDomain.subscribers.push(rank);
      return this.sharedDomain;
    }
    const lanes: TransferEngine = new PrivateLanes(this.kernel, this.transferLog, offload);
    const pool = new HostPool(`private-${rank.rank.worker_id}-${rank.rank.dp_rank}`, offload.num_host_blocks, this.blockIds);
    return { pool, transfers: lanes, subscribers: [rank] };
  }

  /** Schedules a request's arrival; the router places it in the arrival phase (TIME-3). */
  submit(spec: RequestSpec): SimRequest {
    const blockSize = this.router.settings.block_size;
    const request = new SimRequest(spec.identity, spec.prompt.length_tokens, spec.output_length);
    const arrival_ns = spec.arrival_ns + this.drift_ns;
    request.arrival_ns = arrival_ns;
    this.requests.push(request);
    const target = spec.target_worker ?? null;
    const prompt = spec.prompt;
    request.arrival_action = this.kernel.at(arrival_ns, Phase.Arrival, spec.identity.ordinal, () => {
      if (request.state !== 'created') return; // withdrawn before it arrived
      const words = prompt.computeBlockWords(blockSize);
      request.attachBlocks(words, this.blockIds, this.requestBuffers);
      request.ceiling_hit_blocks = this.prefixCeiling.hits(request.block_ids, words, WORDS_PER_BLOCK);
      if (target === null) this.place(request);
      else this.sendTo(request, target);
    });
    return request;
  }

  private routeRequest(request: SimRequest) {
    // The router reads the ids; the hashes are made only if something asks for them. It holds the
    // request's run of ids while the request is active (each id, when events hold each id too).
    return {
      request_id: request.request_id,
      ordinal: request.ordinal,
      isl_tokens: request.input_length,
      get block_hashes() {
        return request.hashes;
      },
      block_ids: request.block_ids,
      held_ids: this.spec.hold_each_block_id === true ? undefined : request.heldIds,
    };
  }

  private place(request: SimRequest): void {
    if (this.decodeRouter) request.stage = 'prefill';
    const placement = this.router.place(this.routeRequest(request), this.kernel.now);
    request.addPlacement(placement);
    this.dispatch(request, this.rankOf(placement.worker_id, placement.dp_rank));
  }

  /** A request addressed to a worker directly: no routing decision, but the router counts its load. */
  private sendTo(request: SimRequest, worker_id: number): void {
    if (this.decodeRouter) request.stage = 'prefill';
    const rank = this.rankOf(worker_id, 0);
    this.router.assign(this.routeRequest(request), rank.rank);
    this.dispatch(request, rank);
  }

  private dispatch(request: SimRequest, rank: RankEngine): void {
    request.truth_at_placement = rank.truthOverlap(request.block_ids);
    request.dispatch_ns = this.kernel.now;
    rank.enqueue(request);
    this.onDispatched?.(request);
  }

  /** A request a workload will never send (its play failed first): reported as skipped, with why. */
  recordSkipped(identity: RequestIdentity, input_length: number, output_length: number, reason: string): void {
    const request = new SimRequest(identity, input_length, output_length);
    request.arrival_ns = this.kernel.now;
    request.state = 'skipped';
    request.skip_reason = reason;
    this.requests.push(request);
  }

  /** Withdraws a submitted request whose arrival has not come yet (AGX-2): it is reported as skipped, with why. */
  withdraw(request: SimRequest, reason: string): boolean {
    if (request.state !== 'created') return false;
    request.state = 'skipped';
    request.skip_reason = reason;
    // Its arrival will not happen: it neither runs nor moves the clock (the run's virtual duration
    // ends with its last real work, not at the instant a skipped request was due), and like a
    // request skipped before it was released (recordSkipped) it is reported at the instant it was skipped.
    if (request.arrival_action >= 0) this.kernel.cancel(request.arrival_action);
    request.arrival_ns = this.kernel.now;
    return true;
  }

  rankOf(worker_id: number, dp_rank: number): RankEngine {
    const rank = this.ranks.find((r) => r.rank.worker_id === worker_id && r.rank.dp_rank === dp_rank);
    if (!rank) throw new Error(`no rank worker ${worker_id} dp rank ${dp_rank}`);
    return rank;
  }

  emit(rank: RankEngine, events: KvEvent[]): void {
    this.eventsEmitted += events.length;
    if (rank.role === 'decode') {
      this.eventsWithheld += events.length;
      for (const event of events) releaseEvent(event);
      return;
    }
    // A literal of the batch's own fields, not a spread of rank.rank: the spread took most of this call's time.
    const { worker_id, dp_rank } = rank.rank;
    this.transport.emit({ worker_id, dp_rank, emitted_ns: this.kernel.now, events });
  }

  /** The router applies a batch; then the events' hold on their block ids ends. */
  private deliver(batch: KvEventBatch): void {
    this.router.applyBatch(batch);
    for (const event of batch.events) releaseEvent(event);
  }

  /**
   * PD-1: at its first token a request's decode worker is chosen by load, in the dispatch phase of
   * that instant (TIME-3 phase 5, the placement that the prefill-complete feedback of phase 2
   * releases), as Dynamo routes the decode stage when the prefill returns and AISimulate chooses the
   * decode rank before the transfer: the request is that worker's load from then on. It joins the
   * decode rank's queue at once; its KV moves when that rank has reserved G1 room for it (pullKv, as
   * vLLM's decode side allocates blocks before it pulls), and the prefill rank holds the request's
   * G1 blocks until the KV has landed.
   */
  handoff(request: SimRequest): void {
    this.router.requestFinished(request.request_id);
    this.kernel.at(this.kernel.now, Phase.Dispatch, request.ordinal, () => this.placeDecode(request));
  }

  private placeDecode(request: SimRequest): void {
    const placement = this.decodeRouter!.place(this.routeRequest(request), this.kernel.now);
    // Its prompt was computed on the prefill worker: on the decode rank it is load by its blocks
    // only, never prompt tokens still to prefill (SCORE-2 counts uncomputed tokens; Dynamo's decode
    // router has no prefill term).
    this.decodeRouter!.prefillComplete(request.request_id);
    request.decode_routing = placement;
    this.rankOf(placement.worker_id, placement.dp_rank).enqueueDecode(request);
  }

  pullKv(request: SimRequest, landed: () => void): void {
    const prefillRank = this.ranks[request.rank_index];
    const transfer = this.spec.kv_transfer!;
    const blocks = Math.ceil(request.input_length / prefillRank.settings.block_size);
    const bytes = blocks * prefillRank.block_bytes;
    const duration = transfer.latency_ns + transferNs(bytes, transfer.bandwidth_gbps);
    request.kv_transfer_ns = duration;
    const record = this.transferLog.open(
      { direction: 'p2d', rank_index: prefillRank.rank_index, ...prefillRank.rank, bytes, blocks, request_id: request.request_id, onComplete: () => {} },
      this.kernel.now,
    );
    this.transferLog.complete(record, this.kernel.now + duration, () => {
      prefillRank.handoffDone(request);
      landed();
    });
  }

  pullAbandoned(request: SimRequest): void {
    this.ranks[request.rank_index].handoffDone(request);
  }

  preempted(rank: RankEngine, request: SimRequest): void {
    if (request.preemptions === SPIN_NOTICE_PREEMPTIONS) this.onSpinning?.({ request_id: request.request_id, ...rank.rank, preemptions: request.preemptions, time_ns: this.kernel.now });
  }

  prefillComplete(request: SimRequest): void {
    this.router.prefillComplete(request.request_id);
  }

  finished(request: SimRequest): void {
    this.router.requestFinished(request.request_id);
    this.decodeRouter?.requestFinished(request.request_id);
    request.releaseBlocks();
    if (request.state === 'finished' && request.token_gaps_ns !== null) this.finishedTokenGaps.addCounts(request.token_gaps_ns);
    request.token_gaps_ns = null;
    this.onFinished?.(request);
    this.ended++;
    this.onProgress?.(this.ended, this.requests.length, this.kernel.now);
  }

  /** Runs until nothing is left to do; an impossible event stream stops the run and is reported. */
  run(): ClusterResult {
    // A progress display also hears of the virtual time every so many kernel events, not only as requests end.
    const progress = this.onProgress;
    if (progress !== null) this.kernel.onTick = () => progress(this.ended, this.requests.length, this.kernel.now);
    try {
      this.kernel.run(Number.MAX_SAFE_INTEGER, this.spec.max_kernel_events);
    } catch (error) {
      if (!(error instanceof EventStreamError)) throw error;
      this.failure = error;
    }
    if (this.failure === null) this.checkMirrorMatchesEngines();
    const requests = [...this.requests].sort((a, b) => a.ordinal - b.ordinal);
    return {
      requests,
      stuck: this.failure === null ? this.stuckRequests(requests) : [],
      end_ns: this.kernel.now,
      transfers: this.transferLog.records,
      batches: this.transport.delivered,
      batches_delivered: this.transport.deliveredBatches,
      itl_ns: this.finishedTokenGaps,
      events_emitted: this.eventsEmitted,
      events_withheld: this.eventsWithheld,
      g2_domains: this.sharedDomainReport(),
      failure: this.failure,
      ranks: this.ranks,
    };
  }

  /** Every request must end finished, failed or skipped; any other state once the queue is empty is a stall. */
  private stuckRequests(requests: readonly SimRequest[]): StuckRequest[] {
    const stuck: StuckRequest[] = [];
    for (const request of requests) {
      if (request.state === 'finished' || request.state === 'failed' || request.state === 'skipped') continue;
      const rank = request.rank_index >= 0 ? this.ranks[request.rank_index] : null;
      const decodeRank = request.decode_worker_id === null ? null : this.rankOf(request.decode_worker_id, request.decode_dp_rank ?? 0);
      const holder = request.stage === 'decode' ? decodeRank : rank;
      const attempts = request.admission_history;
      const progress = [request.arrival_ns, request.dispatch_ns ?? 0, request.last_token_ns ?? 0, attempts.length > 0 ? attempts[attempts.length - 1].time_ns : 0];
      stuck.push({
        request_id: request.request_id,
        status: request.state,
        worker_id: holder?.rank.worker_id ?? null,
        dp_rank: holder?.rank.dp_rank ?? null,
        where: holder ? `${holder.whereIs(request)} of worker ${holder.rank.worker_id} dp rank ${holder.rank.dp_rank}` : `in state ${request.state}, on no rank`,
        last_progress_ns: Math.max(...progress),
      });
    }
    return stuck;
  }

  /**
   * Invariant: once every batch has been delivered, the router's mirror of each routed rank holds
   * exactly what that rank's G1 and G2 hold. A difference means an event was lost or invented.
   */
  private checkMirrorMatchesEngines(): void {
    const mirror = this.router.mirror;
    const rankCount = this.ranks.length;
    mirror.device.checkCounts(rankCount);
    mirror.host.checkCounts(rankCount);
    for (const rank of this.ranks) {
      if (rank.role === 'decode') continue;
      const index = mirror.rankIndex(rank.rank);
      if (index === undefined) continue;
      // One rank's engine ids at a time, each looked up in the mirror: the mirror holds the same
      // blocks when it holds as many and every one of the engine's.
      const views: [string, TierIndex, () => Int32Array][] = [
        ['Device', mirror.device, () => rank.g1.sortedIds()],
        ['HostPinned', mirror.host, () => rank.host?.pool.residentSortedIds() ?? new Int32Array(0)],
      ];
      for (const [tier, routerView, engineIds] of views) {
        const engineTruth = engineIds();
        const routerHolds = routerView.count(index);
        if (routerHolds !== engineTruth.length || engineTruth.some((id) => !routerView.holdsId(index, id))) {
          throw new InvariantError(
            `router mirror of worker ${rank.rank.worker_id} dp rank ${rank.rank.dp_rank} (${tier}) holds ${routerHolds} blocks but the engine holds ${engineTruth.length} after every event was delivered` +
              (routerHolds === engineTruth.length ? ' (different blocks)' : ''),
          );
        }
      }
    }
  }

  private sharedDomainReport(): SharedDomainReport[] {
    const domain = this.sharedDomain;
    if (!domain) return [];
    return [
      {
        domain_id: domain.pool.domain_id,
        capacity_blocks: domain.pool.capacity_blocks,
        resident_blocks: domain.pool.residentBlocks,
        used_blocks: domain.pool.usedBlocks,
        participants: domain.subscribers.map((rank) => ({ worker_id: rank.rank.worker_id, dp_rank: rank.rank.dp_rank, role: rank.role })),
      },
    ];
  }
}
