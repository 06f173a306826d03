// Shared builders for the unit tests: block hashes written as small numbers, per-rank KV event
// feeds with correct event numbering, routers with hand-picked settings, and random streams whose
// draws the test chooses. Not a test file itself (no `.test.ts`), so the runner does not load it.
import type { BlockHash, HashedBlock } from '../../src/hash';
import type { KvEvent, KvEventBatch, RankRef, Tier } from '../../src/events/model';
import { RankEventStream } from '../../src/events/model';
import type { RandomStream } from '../../src/random';
import { RandomStreams } from '../../src/random';
import { DEFAULT_ROUTER_SETTINGS, RouteRequest, Router, RouterSettings } from '../../src/router/router';

/** Block hashes written as small numbers: hashes(1, 2, 3) → [1n, 2n, 3n]. */
export function hashes(...ids: number[]): BlockHash[] {
  return ids.map((id) => BigInt(id));
}

/** Hashes 1n..countn, the blocks of a request written as consecutive numbers. */
export function hashRange(first: number, last: number): BlockHash[] {
  const ids: number[] = [];
  for (let id = first; id <= last; id++) ids.push(id);
  return hashes(...ids);
}

/** Stored blocks for hashes; the router only reads block_hash, tokens_hash is any distinct value. */
export function storedBlocks(blockHashes: readonly BlockHash[]): HashedBlock[] {
  return blockHashes.map((block_hash) => ({ block_hash, tokens_hash: block_hash + 1000n }));
}

export function rankOf(worker_id: number, dp_rank = 0): RankRef {
  return { worker_id, dp_rank };
}

/** Events of several ranks, each numbered by its own stream (EVT-2), handed to a sink as made. */
export class EventFeed {
  private readonly streams = new Map<string, RankEventStream>();
  constructor(private readonly sink: (event: KvEvent) => void) {}

  store(rank: RankRef, tier: Tier, blockHashes: readonly BlockHash[]): KvEvent {
    return this.send(this.streamOf(rank).stored(tier, storedBlocks(blockHashes), null, null));
  }
  remove(rank: RankRef, tier: Tier, blockHashes: readonly BlockHash[]): KvEvent {
    return this.send(this.streamOf(rank).removed(tier, [...blockHashes]));
  }
  clear(rank: RankRef, tier: Tier): KvEvent {
    return this.send(this.streamOf(rank).cleared(tier));
  }
  /** Forgets a rank's numbering (its worker left; a returning worker starts again at 0). */
  restart(rank: RankRef): void {
    this.streams.delete(`${rank.worker_id}/${rank.dp_rank}`);
  }

  private send(event: KvEvent): KvEvent {
    this.sink(event);
    return event;
  }
  private streamOf(rank: RankRef): RankEventStream {
    const key = `${rank.worker_id}/${rank.dp_rank}`;
    let stream = this.streams.get(key);
    if (!stream) {
      stream = new RankEventStream(rank);
      this.streams.set(key, stream);
    }
    return stream;
  }
}

/** A one-event batch as the transport would deliver it. */
export function batchOf(event: KvEvent, emitted_ns = 0): KvEventBatch {
  return { worker_id: event.worker_id, dp_rank: event.dp_rank, emitted_ns, events: [event] };
}

/** A feed that applies each event to a router as its own batch. */
export function routerFeed(router: Router): EventFeed {
  return new EventFeed((event) => router.applyBatch(batchOf(event)));
}

/** A random stream that must not be used: any draw fails the test. */
export const NO_DRAWS: RandomStream = {
  next: () => {
    throw new Error('unexpected random draw');
  },
  below: () => {
    throw new Error('unexpected random draw');
  },
};

/** A random stream that returns the given uniform draws in order. */
export function scriptedDraws(...draws: number[]): RandomStream {
  const queue = [...draws];
  const next = (): number => {
    const draw = queue.shift();
    if (draw === undefined) throw new Error('scripted draws exhausted');
    return draw;
  };
  return { next, below: (bound) => Math.floor(next() * bound) };
}

/** The router's tie-break stream for a seed, as the replay names it. */
export function tieBreakStream(seed: number): RandomStream {
  return new RandomStreams(seed).stream('router.tie_break');
}

/** A router with 4-token blocks and default settings except the overrides, with workers 0..n-1. */
export function makeRouter(workers: number, overrides: Partial<RouterSettings> = {}, random: RandomStream = NO_DRAWS): Router {
  const router = new Router({ ...DEFAULT_ROUTER_SETTINGS, block_size: 4, kept_scores: 'all', ...overrides }, random);
  for (let worker = 0; worker < workers; worker++) router.addWorker(worker);
  return router;
}

let nextOrdinal = 0;

/** A request of `isl_tokens` tokens whose complete blocks have the given hashes. */
export function requestOf(request_id: string, blockHashes: readonly BlockHash[], isl_tokens: number): RouteRequest {
  return { request_id, ordinal: nextOrdinal++, isl_tokens, block_hashes: blockHashes };
}

/**
 * A replay config (YAML) of six requests on 2 aggregated workers with 4-token blocks, each a
 * 16-token shared prefix and a tail of its own: request i arrives at `arrival_step_ms`·i and its
 * tail is `tail_tokens(i)` tokens.
 */
export function sharedPrefixConfig(arrival_step_ms: number, tail_tokens: (i: number) => number): string {
  return [
    'seed: 7',
    'cluster:',
    '  workers:',
    '    - role: aggregated',
    '      replicas: 2',
    '      engine: { block_size: 4, num_gpu_blocks: 64, max_num_seqs: 8, max_num_batched_tokens: 256, kv_cache_bytes_per_token: 1000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }',
    'router: { kv_event_lag_ms: 1 }',
    'workload:',
    '  prefixes: { system: 16 }',
    '  requests:',
    ...Array.from({ length: 6 }, (_, i) => `    - { id: r${i}, arrival_ms: ${arrival_step_ms * i}, prompt: [{ prefix: system }, { tokens: ${tail_tokens(i)} }], output_length: 3 }`),
  ].join('\n');
}
