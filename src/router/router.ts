// The KV-aware router: keeps the strict residency mirror, scores candidates by overlap and load
// (SCORE-1..3), places requests and records each decision with its breakdown (SCORE-4), or
// cycles over ranks with the round_robin policy (SCORE-6).
import type { BlockHash } from '../hash';
import type { BlockId } from '../collections/blockIds';
import type { IdRun } from '../collections/idRun';
import { BlockIds } from '../collections/blockIds';
import type { KvEventBatch, RankRef } from '../events/model';
import type { RandomStream } from '../random';
import type { Nanos } from '../time';
import { EventIdStart, ResidencyMirror } from './mirror';
import { LoadTracker } from './load';
import { atScale, exactDecimal } from '../exactDecimal';
import * as simulatorFaults from '../fuzz/simulatorFaults';
// The planted-fault hook, read per placement, is copied into this module once: run through tsx,
// every read of an imported binding is a getter call (esbuild's live bindings).
const faultPlanted = simulatorFaults.faultPlanted;

export type RoutingPolicy = 'kv' | 'round_robin';

export interface RouterSettings {
  policy: RoutingPolicy;
  block_size: number;
  overlap_score_credit: number;
  host_cache_hit_weight: number;
  prefill_load_scale: number;
  router_temperature: number;
  /**
   * Which candidates a placement record keeps: every one (`all`, for cost tables) or the chosen
   * rank and the runner-up (`chosen_and_runner_up`, the default: a record then stays the same size
   * whatever the number of workers). The decision is the same either way.
   */
  kept_scores?: KeptScores;
}

export type KeptScores = 'all' | 'chosen_and_runner_up';

export const DEFAULT_ROUTER_SETTINGS: Omit<RouterSettings, 'block_size'> = {
  policy: 'kv',
  overlap_score_credit: 1.0,
  host_cache_hit_weight: 0.75,
  prefill_load_scale: 1.0,
  router_temperature: 0,
};

export interface RouteRequest {
  request_id: string;
  /** Stable identity for tie-breaks and ordering. */
  ordinal: number;
  isl_tokens: number;
  /** Sequence hashes of the prompt's complete blocks, in order. */
  block_hashes: readonly BlockHash[];
  /** Their ids in the router's BlockIds table, held by the caller (a cluster's requests); looked up when absent. */
  block_ids?: ArrayLike<BlockId>;
  /** The held run those ids are (a cluster's requests): the router holds it once while the request is active, instead of each id. */
  held_ids?: IdRun;
}

export interface CandidateScore extends RankRef {
  device_blocks: number;
  host_blocks: number;
  credit: number;
  active_prefill_tokens: number;
  prefill_blocks: number;
  decode_blocks: number;
  load: number;
  cost: number;
}

export interface Placement extends RankRef {
  request_id: string;
  ordinal: number;
  time_ns: Nanos;
  policy: RoutingPolicy;
  candidates: CandidateScore[];
  device_blocks: number;
  host_blocks: number;
  selected_overlap_blocks: number;
  best_available_overlap_blocks: number;
  reported_overlap_tokens: number;
  /** How many candidates shared the winning cost (1 = no tie), and the draw that broke it. */
  tied_candidates: number;
}

interface Candidate {
  ref: RankRef;
  index: number;
}

/** Rounds half away from zero (SCORE-4). */
export function roundHalfAwayFromZero(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}

/** Costs within this share of the lowest are compared exactly (see Router.exactCost): floating-point dust is far below it, a real difference far above. */
const NEAR_TIE = 1e-9;

export class Router {
  readonly mirror: ResidencyMirror;
  readonly load: LoadTracker;
  private candidates: Candidate[] = [];
  private readonly columns = new ScoreColumns();
  private nextRankIndex = 0;
  private roundRobinCursor = 0;
  /**
   * Told of each placement with the block ids it scored and how many KV events the mirror had
   * applied by then (an optional observer: the fuzzer checks the recorded overlaps against the
   * events themselves).
   */
  placementObserver: ((placement: Placement, ids: ArrayLike<BlockId>, applied_events: number) => void) | null = null;

  constructor(
    readonly settings: RouterSettings,
    private readonly random: RandomStream,
    eventIdStart: EventIdStart = 'zero',
    /** The run's block id table, shared with the engines of a cluster (own table otherwise). */
    readonly blockIds = new BlockIds(),
  ) {
    validateSettings(settings);
    this.mirror = new ResidencyMirror(eventIdStart, blockIds);
    this.load = new LoadTracker(blockIds);
  }

  /** Candidate ranks in (worker_id, dp_rank) order. */
  get ranks(): readonly RankRef[] {
    return this.candidates.map((candidate) => candidate.ref);
  }

  addWorker(worker_id: number, dp_size = 1): void {
    if (this.candidates.some((candidate) => candidate.ref.worker_id === worker_id)) {
      throw new Error(`worker ${worker_id} is already registered with the router`);
    }
    for (let dp_rank = 0; dp_rank < dp_size; dp_rank++) {
      const index = this.nextRankIndex++;
      const ref = { worker_id, dp_rank };
      this.mirror.addRank(ref, index);
      this.candidates.push({ ref, index });
    }
    this.candidates.sort((a, b) => a.ref.worker_id - b.ref.worker_id || a.ref.dp_rank - b.ref.dp_rank);
  }

  /** Removes a worker: its ranks stop being candidates and their mirror is dropped (MIR-3). */
  removeWorker(worker_id: number): void {
    for (const candidate of this.candidates) {
      if (candidate.ref.worker_id !== worker_id) continue;
      this.mirror.dropRank(candidate.index);
      this.load.dropRank(candidate.index);
    }
    this.candidates = this.candidates.filter((candidate) => candidate.ref.worker_id !== worker_id);
  }

  /** Applies a visible batch to the mirror; an impossible stream throws EventStreamError. */
  applyBatch(batch: KvEventBatch): void {
    for (const event of batch.events) this.mirror.apply(event);
  }

  /** Scores every candidate for a request without placing it. */
  score(request: RouteRequest): CandidateScore[] {
    const columns = this.scoreIds(request, this.idsOf(request));
    return this.candidates.map((_, i) => this.scoreAt(columns, i));
  }

  private idsOf(request: RouteRequest): ArrayLike<BlockId> {
    return request.block_ids ?? this.blockIds.lookupAll(request.block_hashes);
  }

  /** Every candidate's score (position i: this.candidates[i]) in the reused columns; an object is made only for a score that is kept. */
  private scoreIds(request: RouteRequest, ids: ArrayLike<BlockId>): ScoreColumns {
    const columns = this.columns.fit(this.candidates.length, this.nextRankIndex);
    this.overlaps(ids, columns);
    const hits = this.load.activeHits(ids, columns.hits);
    const B = this.settings.block_size;
    // Complete blocks only, as Dynamo's router tracks them: a partial last block adds prefill tokens, not a block.
    const requestBlocks = blockCountOf(request);
    for (let i = 0; i < this.candidates.length; i++) {
      const index = this.candidates[i].index;
      const credit = this.settings.overlap_score_credit * columns.device[i] + this.settings.host_cache_hit_weight * columns.host[i];
      const active_prefill_tokens = this.load.activePrefillTokens(index);
      const prefill_blocks = (active_prefill_tokens + request.isl_tokens) / B;
      const decode_blocks = this.load.activeBlocks(index) + (requestBlocks - hits[index]);
      const load = this.settings.prefill_load_scale * Math.max(prefill_blocks - credit, 0);
      columns.credit[i] = credit;
      columns.active_prefill_tokens[i] = active_prefill_tokens;
      columns.prefill_blocks[i] = prefill_blocks;
      columns.decode_blocks[i] = decode_blocks;
      columns.load[i] = load;
      columns.cost[i] = load + decode_blocks;
    }
    return columns;
  }

  /** The score of the candidate at a position, as a record. */
  private scoreAt(columns: ScoreColumns, i: number): CandidateScore {
    const ref = this.candidates[i].ref;
    return {
      worker_id: ref.worker_id,
      dp_rank: ref.dp_rank,
      device_blocks: columns.device[i],
      host_blocks: columns.host[i],
      credit: columns.credit[i],
      active_prefill_tokens: columns.active_prefill_tokens[i],
      prefill_blocks: columns.prefill_blocks[i],
      decode_blocks: columns.decode_blocks[i],
      load: columns.load[i],
      cost: columns.cost[i],
    };
  }

  /** Places a request: chooses a rank, records the decision and adds the request to its load. */
  place(request: RouteRequest, now: Nanos): Placement {
    if (this.candidates.length === 0) throw new Error(`no worker can take request ${request.request_id}: the router has no ranks`);
    const ids = this.idsOf(request);
    const columns = this.scoreIds(request, ids);
    const choice = this.choose(columns, request.isl_tokens);
    const tied = choice.tied;
    const chosen = faultPlanted('placement') ? (choice.chosen + 1) % this.candidates.length : choice.chosen; // planted fault (src/fuzz/simulatorFaults.ts)
    const placement = this.record(request, now, columns, chosen, tied);
    if (this.placementObserver !== null) this.placementObserver(placement, ids, this.mirror.appliedEvents);
    this.commit(request, ids, this.candidates[chosen].index, columns, chosen);
    return placement;
  }

  /** Adds a request to a given rank's load without scoring (a worker that is already busy). */
  assign(request: RouteRequest, ref: RankRef): void {
    const index = this.mirror.rankIndex(ref);
    if (index === undefined) throw new Error(`worker ${ref.worker_id} dp rank ${ref.dp_rank} is not registered with the router`);
    const ids = this.idsOf(request);
    const columns = this.scoreIds(request, ids);
    const position = this.candidates.findIndex((candidate) => candidate.index === index);
    this.commit(request, ids, index, columns, position);
  }

  prefillComplete(request_id: string): void {
    this.load.prefillComplete(request_id);
  }
  requestFinished(request_id: string): void {
    this.load.free(request_id);
  }

  private commit(request: RouteRequest, ids: ArrayLike<BlockId>, rankIndex: number, columns: ScoreColumns, position: number): void {
    const B = this.settings.block_size;
    const cachedTokens = (columns.device[position] + columns.host[position]) * B;
    const uncomputed = Math.max(request.isl_tokens - cachedTokens, 0);
    this.load.add(request.request_id, rankIndex, uncomputed, request, ids);
  }

  private choose(columns: ScoreColumns, isl_tokens: number): { chosen: number; tied: number } {
    const count = this.candidates.length;
    if (this.settings.policy === 'round_robin') {
      const chosen = this.roundRobinCursor % count;
      this.roundRobinCursor++;
      return { chosen, tied: 1 };
    }
    const costs = columns.cost;
    if (this.settings.router_temperature > 0) return { chosen: this.sampleSoftmax(Array.from(costs.subarray(0, count))), tied: 1 };
    let best = Infinity;
    let tied = 0;
    let first = -1;
    let near = 0;
    for (let i = 0; i < count; i++) {
      const cost = costs[i];
      if (first < 0 || cost < best) {
        best = cost;
        first = i;
        tied = 1;
      } else if (cost === best) tied++;
    }
    const margin = NEAR_TIE * Math.max(1, Math.abs(best));
    for (let i = 0; i < count; i++) if (costs[i] - best <= margin) near++;
    // Costs a hair apart may be equal and only computed differently (7/3 as 7/3 − 1 + 1 and as
    // 4/3 + 1): their exact costs decide which are lowest and which tie.
    if (near > tied) return this.chooseExactly(columns, isl_tokens, best + margin);
    if (tied === 1) return { chosen: first, tied: 1 };
    return { chosen: this.draw(tied, (i) => costs[i] === best), tied };
  }

  /** The position of the draw's pick among `tied` positions that `isTied` accepts, in candidate order (SCORE-3). */
  private draw(tied: number, isTied: (position: number) => boolean): number {
    let pick = faultPlanted('tie-draw') ? 0 : this.random.below(tied); // planted fault (src/fuzz/simulatorFaults.ts)
    for (let i = 0; ; i++) {
      if (isTied(i) && pick-- === 0) return i;
    }
  }

  /** choose among the candidates whose cost is at most `upTo`, by their exact costs (see exactCost). */
  private chooseExactly(columns: ScoreColumns, isl_tokens: number, upTo: number): { chosen: number; tied: number } {
    const exact: (bigint | null)[] = [];
    let lowest: bigint | null = null;
    for (let i = 0; i < this.candidates.length; i++) {
      const key = columns.cost[i] <= upTo ? this.exactCost(columns, i, isl_tokens) : null;
      exact.push(key);
      if (key !== null && (lowest === null || key < lowest)) lowest = key;
    }
    const isTied = (i: number) => exact[i] === lowest;
    const tied = exact.filter((key) => key === lowest).length;
    return { chosen: tied === 1 ? exact.indexOf(lowest) : this.draw(tied, isTied), tied };
  }

  /**
   * A candidate's cost (SCORE-1/2) in exact integers, scaled by B × 10^(decimals of the weights):
   * the same order and the same ties as the cost itself, with no floating-point dust.
   */
  private exactCost(columns: ScoreColumns, i: number, isl_tokens: number): bigint {
    const { overlap_score_credit, host_cache_hit_weight, prefill_load_scale, block_size } = this.settings;
    const credit = exactDecimal(overlap_score_credit);
    const weight = exactDecimal(host_cache_hit_weight);
    const scale = exactDecimal(prefill_load_scale);
    const decimals = Math.max(credit.scale, weight.scale);
    const B = BigInt(block_size);
    const creditTimesB = B * (atScale(credit, decimals) * BigInt(columns.device[i]) + atScale(weight, decimals) * BigInt(columns.host[i]));
    const prefill = BigInt(columns.active_prefill_tokens[i] + isl_tokens) * 10n ** BigInt(decimals) - creditTimesB;
    const load = scale.digits * (prefill > 0n ? prefill : 0n);
    return load + BigInt(columns.decode_blocks[i]) * B * 10n ** BigInt(decimals + scale.scale);
  }

  /** SCORE-3: softmax over negated, range-normalised costs, drawn from the router's stream. */
  private sampleSoftmax(costs: number[]): number {
    const min = Math.min(...costs);
    const range = Math.max(...costs) - min;
    const weights = costs.map((cost) => Math.exp(-(range === 0 ? 0 : (cost - min) / range) / this.settings.router_temperature));
    const total = weights.reduce((sum, weight) => sum + weight, 0);
    let draw = this.random.next() * total;
    for (let i = 0; i < weights.length; i++) {
      draw -= weights[i];
      if (draw < 0) return i;
    }
    return weights.length - 1;
  }

  private record(request: RouteRequest, now: Nanos, columns: ScoreColumns, chosen: number, tied: number): Placement {
    const weight = this.settings.host_cache_hit_weight;
    const effective = (i: number) => roundHalfAwayFromZero(columns.device[i] + weight * columns.host[i]);
    const selected = this.scoreAt(columns, chosen);
    const selected_overlap_blocks = effective(chosen);
    let best_available_overlap_blocks = 0;
    for (let i = 0; i < this.candidates.length; i++) best_available_overlap_blocks = Math.max(best_available_overlap_blocks, effective(i));
    return {
      request_id: request.request_id,
      ordinal: request.ordinal,
      time_ns: now,
      policy: this.settings.policy,
      worker_id: selected.worker_id,
      dp_rank: selected.dp_rank,
      candidates: this.keptScores(columns, chosen, selected),
      device_blocks: selected.device_blocks,
      host_blocks: selected.host_blocks,
      selected_overlap_blocks,
      best_available_overlap_blocks,
      reported_overlap_tokens: selected_overlap_blocks * this.settings.block_size,
      tied_candidates: tied,
    };
  }

  /** The scores a placement record keeps: every one (kept_scores `all`), or the chosen one and the runner-up (see runnerUpOf), in candidate order. */
  private keptScores(columns: ScoreColumns, chosen: number, selected: CandidateScore): CandidateScore[] {
    if (this.settings.kept_scores === 'all') return this.candidates.map((_, i) => (i === chosen ? selected : this.scoreAt(columns, i)));
    const runnerUp = runnerUpOf(columns.cost, this.candidates.length, chosen);
    if (runnerUp < 0) return [selected];
    const second = this.scoreAt(columns, runnerUp);
    return runnerUp < chosen ? [second, selected] : [selected, second];
  }

  /** SCORE-1: device prefix and the consecutive host run after it, per candidate, into the columns. */
  private overlaps(ids: ArrayLike<BlockId>, columns: ScoreColumns): void {
    const count = this.candidates.length;
    const { device, host, state } = columns; // state: 0 in device prefix, 1 in host run, 2 stopped
    const { device: deviceIndex, host: hostIndex } = this.mirror;
    let alive = count;
    for (let block = 0; block < ids.length; block++) {
      const id = ids[block];
      if (deviceIndex.unheldId(id) && hostIndex.unheldId(id)) break;
      for (let i = 0; i < count; i++) {
        if (state[i] === 2) continue;
        const rank = this.candidates[i].index;
        if (state[i] === 0 && deviceIndex.holdsId(rank, id)) device[i]++;
        else if (hostIndex.holdsId(rank, id)) {
          state[i] = 1;
          host[i]++;
        } else {
          state[i] = 2;
          alive--;
        }
      }
      if (alive === 0) break;
    }
  }
}

/** How many complete blocks a request's prompt has (its ids when it comes with them: its hashes are then made only if read). */
function blockCountOf(request: RouteRequest): number {
  return request.block_ids ? request.block_ids.length : request.block_hashes.length;
}

/** The runner-up's position: the cheapest of the others, the first in (worker, dp rank) order on equal cost; -1 when there is no other. */
function runnerUpOf(costs: Float64Array, count: number, chosen: number): number {
  let runnerUp = -1;
  for (let i = 0; i < count; i++) {
    if (i !== chosen && (runnerUp < 0 || costs[i] < costs[runnerUp])) runnerUp = i;
  }
  return runnerUp;
}

/** Every candidate's score for one placement, one column per field (position: candidate order), reused. */
class ScoreColumns {
  device = new Int32Array(0);
  host = new Int32Array(0);
  /** Per candidate, in the overlap walk: 0 in the device prefix, 1 in the host run, 2 stopped. */
  state = new Uint8Array(0);
  credit = new Float64Array(0);
  active_prefill_tokens = new Float64Array(0);
  prefill_blocks = new Float64Array(0);
  decode_blocks = new Float64Array(0);
  load = new Float64Array(0);
  cost = new Float64Array(0);
  /** Active-block hits per rank index (not per position). */
  hits = new Int32Array(0);

  /** Sized for `candidates` positions and `ranks` rank indexes, with the overlap counts and hits zeroed. */
  fit(candidates: number, ranks: number): this {
    if (this.cost.length !== candidates) {
      this.device = new Int32Array(candidates);
      this.host = new Int32Array(candidates);
      this.state = new Uint8Array(candidates);
      for (const field of ['credit', 'active_prefill_tokens', 'prefill_blocks', 'decode_blocks', 'load', 'cost'] as const) this[field] = new Float64Array(candidates);
    }
    if (this.hits.length !== ranks) this.hits = new Int32Array(ranks);
    this.device.fill(0);
    this.host.fill(0);
    this.state.fill(0);
    this.hits.fill(0);
    return this;
  }
}

export function validateSettings(settings: RouterSettings): void {
  const checks: [keyof RouterSettings, boolean][] = [
    ['block_size', Number.isInteger(settings.block_size) && settings.block_size > 0],
    ['overlap_score_credit', Number.isFinite(settings.overlap_score_credit) && settings.overlap_score_credit >= 0],
    ['host_cache_hit_weight', Number.isFinite(settings.host_cache_hit_weight) && settings.host_cache_hit_weight >= 0],
    ['prefill_load_scale', Number.isFinite(settings.prefill_load_scale) && settings.prefill_load_scale >= 0],
    ['router_temperature', Number.isFinite(settings.router_temperature) && settings.router_temperature >= 0],
    ['policy', settings.policy === 'kv' || settings.policy === 'round_robin'],
    ['kept_scores', settings.kept_scores === undefined || settings.kept_scores === 'all' || settings.kept_scores === 'chosen_and_runner_up'],
  ];
  for (const [field, ok] of checks) {
    if (!ok) throw new RangeError(`router setting ${field} = ${String(settings[field])} is not valid`);
  }
}
