// The KV-aware router: keeps the strict residency mirror, scores candidates by overlap and load
// (SCORE-1..3), places requests and records each decision with its breakdown (SCORE-4), or
// cycles over ranks with the round_robin policy (SCORE-6).
import type { BlockHash } from '../hash';
import type { BlockId } from '../collections/blockIds';
import { BlockIds } from '../collections/blockIds';
import type { KvEventBatch, RankRef } from '../events/model';
import type { RandomStream } from '../random';
import type { Nanos } from '../time';
import { EventIdStart, ResidencyMirror } from './mirror';
import { LoadTracker } from './load';

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

export class Router {
  readonly mirror: ResidencyMirror;
  readonly load: LoadTracker;
  private candidates: Candidate[] = [];
  private nextRankIndex = 0;
  private roundRobinCursor = 0;

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
    return this.scoreIds(request, this.idsOf(request));
  }

  private idsOf(request: RouteRequest): ArrayLike<BlockId> {
    return request.block_ids ?? this.blockIds.lookupAll(request.block_hashes);
  }

  private scoreIds(request: RouteRequest, ids: ArrayLike<BlockId>): CandidateScore[] {
    const { device, host } = this.overlaps(ids);
    const hits = this.load.activeHits(ids, this.nextRankIndex);
    const B = this.settings.block_size;
    const hashedBlocks = blockCountOf(request);
    const unhashedBlocks = Math.ceil(request.isl_tokens / B) - hashedBlocks;
    return this.candidates.map((candidate, i) => {
      const credit = this.settings.overlap_score_credit * device[i] + this.settings.host_cache_hit_weight * host[i];
      const active_prefill_tokens = this.load.activePrefillTokens(candidate.index);
      const prefill_blocks = (active_prefill_tokens + request.isl_tokens) / B;
      const decode_blocks =
        this.load.activeBlocks(candidate.index) + (hashedBlocks - hits[candidate.index]) + unhashedBlocks;
      const load = this.settings.prefill_load_scale * Math.max(prefill_blocks - credit, 0);
      return {
        worker_id: candidate.ref.worker_id,
        dp_rank: candidate.ref.dp_rank,
        device_blocks: device[i],
        host_blocks: host[i],
        credit,
        active_prefill_tokens,
        prefill_blocks,
        decode_blocks,
        load,
        cost: load + decode_blocks,
      };
    });
  }

  /** Places a request: chooses a rank, records the decision and adds the request to its load. */
  place(request: RouteRequest, now: Nanos): Placement {
    if (this.candidates.length === 0) throw new Error(`no worker can take request ${request.request_id}: the router has no ranks`);
    const ids = this.idsOf(request);
    const scores = this.scoreIds(request, ids);
    const { chosen, tied } = this.choose(scores);
    const placement = this.record(request, now, scores, chosen, tied);
    this.commit(request, ids, this.candidates[chosen].index, scores[chosen]);
    return placement;
  }

  /** Adds a request to a given rank's load without scoring (a worker that is already busy). */
  assign(request: RouteRequest, ref: RankRef): void {
    const index = this.mirror.rankIndex(ref);
    if (index === undefined) throw new Error(`worker ${ref.worker_id} dp rank ${ref.dp_rank} is not registered with the router`);
    const ids = this.idsOf(request);
    const scores = this.scoreIds(request, ids);
    const position = this.candidates.findIndex((candidate) => candidate.index === index);
    this.commit(request, ids, index, scores[position]);
  }

  prefillComplete(request_id: string): void {
    this.load.prefillComplete(request_id);
  }
  requestFinished(request_id: string): void {
    this.load.free(request_id);
  }

  private commit(request: RouteRequest, ids: ArrayLike<BlockId>, rankIndex: number, score: CandidateScore): void {
    const B = this.settings.block_size;
    const cachedTokens = (score.device_blocks + score.host_blocks) * B;
    const uncomputed = Math.max(request.isl_tokens - cachedTokens, 0);
    const unhashed = Math.ceil(request.isl_tokens / B) - blockCountOf(request);
    this.load.add(request.request_id, rankIndex, uncomputed, request, ids, unhashed);
  }

  private choose(scores: CandidateScore[]): { chosen: number; tied: number } {
    if (this.settings.policy === 'round_robin') {
      const chosen = this.roundRobinCursor % scores.length;
      this.roundRobinCursor++;
      return { chosen, tied: 1 };
    }
    if (this.settings.router_temperature > 0) return { chosen: this.sampleSoftmax(scores), tied: 1 };
    let best = Infinity;
    for (const score of scores) best = Math.min(best, score.cost);
    const tiedPositions = scores.flatMap((score, i) => (score.cost === best ? [i] : []));
    if (tiedPositions.length === 1) return { chosen: tiedPositions[0], tied: 1 };
    return { chosen: tiedPositions[this.random.below(tiedPositions.length)], tied: tiedPositions.length };
  }

  /** SCORE-3: softmax over negated, range-normalised costs, drawn from the router's stream. */
  private sampleSoftmax(scores: CandidateScore[]): number {
    const costs = scores.map((score) => score.cost);
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

  private record(request: RouteRequest, now: Nanos, scores: CandidateScore[], chosen: number, tied: number): Placement {
    const effective = (score: CandidateScore) =>
      roundHalfAwayFromZero(score.device_blocks + this.settings.host_cache_hit_weight * score.host_blocks);
    const selected = scores[chosen];
    const selected_overlap_blocks = effective(selected);
    let best_available_overlap_blocks = 0;
    for (const score of scores) best_available_overlap_blocks = Math.max(best_available_overlap_blocks, effective(score));
    return {
      request_id: request.request_id,
      ordinal: request.ordinal,
      time_ns: now,
      policy: this.settings.policy,
      worker_id: selected.worker_id,
      dp_rank: selected.dp_rank,
      candidates: this.settings.kept_scores === 'all' ? scores : chosenAndRunnerUp(scores, chosen),
      device_blocks: selected.device_blocks,
      host_blocks: selected.host_blocks,
      selected_overlap_blocks,
      best_available_overlap_blocks,
      reported_overlap_tokens: selected_overlap_blocks * this.settings.block_size,
      tied_candidates: tied,
    };
  }

  /** SCORE-1: device prefix and the consecutive host run after it, per candidate. */
  private overlaps(ids: ArrayLike<BlockId>): { device: Int32Array; host: Int32Array } {
    const count = this.candidates.length;
    const device = new Int32Array(count);
    const host = new Int32Array(count);
    const state = new Uint8Array(count); // 0: in device prefix, 1: in host run, 2: stopped
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
    return { device, host };
  }
}

/** How many complete blocks a request's prompt has (its ids when it comes with them: its hashes are then made only if read). */
function blockCountOf(request: RouteRequest): number {
  return request.block_ids ? request.block_ids.length : request.block_hashes.length;
}

/**
 * The chosen candidate and the runner-up (the cheapest of the others, the first in (worker, dp
 * rank) order on equal cost), in (worker, dp rank) order.
 */
export function chosenAndRunnerUp(scores: CandidateScore[], chosen: number): CandidateScore[] {
  let runnerUp = -1;
  for (let i = 0; i < scores.length; i++) {
    if (i !== chosen && (runnerUp < 0 || scores[i].cost < scores[runnerUp].cost)) runnerUp = i;
  }
  if (runnerUp < 0) return [scores[chosen]];
  return runnerUp < chosen ? [scores[runnerUp], scores[chosen]] : [scores[chosen], scores[runnerUp]];
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
