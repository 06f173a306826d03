// What an engine rank is given, shows and tells: its engine settings, the G2 side it stores to
// (HostDomain, and what a rank that sees a pool is to it), what a pass observer is shown as each
// pass starts (PassObservation), and what it tells the cluster of its requests (RequestListener;
// RankListener in rank.ts adds what names the rank).
import type { KvEvent, RankEventStream, RankRef } from '../events/model';
import type { Nanos } from '../time';
import type { SimRequest } from './request';
import type { HostPool } from './hostPool';
import type { TransferEngine } from './transfers';
import type { PassShape, PassTimeModel } from './passTime';

export interface EngineSettings {
  block_size: number;
  num_gpu_blocks: number;
  max_num_seqs: number;
  max_num_batched_tokens: number;
  enable_prefix_caching: boolean;
  /** Bytes of KV per token; block bytes = block_size × this. */
  kv_cache_bytes_per_token: number;
  /** How long a pass takes (fixed, linear or table; src/engine/passTime.ts). */
  pass_time: PassTimeModel;
}

/** A rank that sees a G2 pool: it hears of the pool's changes on its own event stream. */
export interface HostSubscriber {
  readonly rank: RankRef;
  readonly rank_index: number;
  readonly role: 'aggregated' | 'prefill' | 'decode';
  readonly events: RankEventStream;
  /** Emits events on its stream now. */
  emitNow(events: KvEvent[]): void;
  /** Asks for a pass to start now, if none is running (the pool changed). */
  kick(): void;
}

/** The G2 side of a rank: its pool (private or shared), the transfers that feed it, and who hears about it. */
export interface HostDomain {
  pool: HostPool;
  transfers: TransferEngine;
  /** Every rank that sees this pool (one for a private pool). */
  subscribers: HostSubscriber[];
}

/** What a rank holds and plans as a pass starts, for an optional observer (see RankEngine.passObserver). */
export interface PassObservation {
  time_ns: Nanos;
  /** Requests in the running queue, including those admitted for this pass. */
  running_requests: number;
  /** Tokens the pass computes: prefill chunk tokens, plus one per decode step. */
  scheduled_tokens: number;
  /** G1 blocks taken: held by requests or kept as cache entries. */
  g1_occupied_blocks: number;
  /** G2 entries of the rank's pool (resident or being stored); null without G2. */
  host_used_blocks: number | null;
  /** What the pass computes, and how long it lasts (fixed at its start). */
  shape: PassShape;
  duration_ns: Nanos;
}

/** What a rank tells the rest of the cluster of its requests (RankListener in rank.ts adds its events and preemptions). */
export interface RequestListener {
  prefillComplete(request: SimRequest): void;
  finished(request: SimRequest): void;
  /** A disaggregated request's prefill is done: its KV goes to a decode worker (PD-1). */
  handoff(request: SimRequest): void;
  /**
   * PD-1: a decode rank has reserved G1 room for a request's prompt; its KV moves from the prefill
   * worker, and `landed` is called when it has (in the transfer-completion phase).
   */
  pullKv(request: SimRequest, landed: () => void): void;
  /** PD-1: a request failed on its decode rank before its KV moved; the prefill worker lets its blocks go. */
  pullAbandoned(request: SimRequest): void;
}
