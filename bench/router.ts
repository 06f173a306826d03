// Router throughput: placements per second on 16 ranks with 16-token blocks. Prompts are 32
// blocks and 8 tokens: one of 64 shared 24-block prefixes, then 8 blocks of their own. Residency
// comes only through the mirror, as KV events: each prefix starts in Device on one rank and in
// HostPinned on two others; a placed request's rank stores what it lacked, finished requests
// have their own blocks evicted, and every 16th placement offloads a prefix from Device to G2.
// At most 64 requests are in flight, so load stays bounded. The timed loop counts all of it.
import type { BlockHash, HashedBlock } from '../src/hash';
import { sequenceHash } from '../src/hash';
import type { KvEvent, RankRef } from '../src/events/model';
import { RankEventStream } from '../src/events/model';
import { RandomStreams } from '../src/random';
import { DEFAULT_ROUTER_SETTINGS, RouteRequest, Router } from '../src/router/router';
import type { Benchmark, PassResult } from './harness';
import { timePass } from './harness';

const RANKS = 16;
const BLOCK_SIZE_TOKENS = 16;
const PREFIXES = 64;
const PREFIX_BLOCKS = 24;
const OWN_BLOCKS = 8;
const PARTIAL_TOKENS = 8;
const PROMPT_TOKENS = (PREFIX_BLOCKS + OWN_BLOCKS) * BLOCK_SIZE_TOKENS + PARTIAL_TOKENS;
const PLACEMENTS = 20_000;
const IN_FLIGHT_LIMIT = 64;
const OFFLOAD_EVERY = 16;

/** A request of the run and the rank-independent facts the loop needs about it. */
interface PlannedRequest {
  request: RouteRequest;
  prefix: number;
  ownBlocks: HashedBlock[];
}

/** Sequence-hashed blocks continuing `parent`, with local hashes drawn from `localBase`. */
function chainBlocks(parent: BlockHash | null, localBase: bigint, count: number): HashedBlock[] {
  const blocks: HashedBlock[] = [];
  for (let i = 0; i < count; i++) {
    const tokens_hash = localBase + BigInt(i);
    parent = sequenceHash(parent, tokens_hash);
    blocks.push({ block_hash: parent, tokens_hash });
  }
  return blocks;
}

function planRequests(prefixBlocks: HashedBlock[][]): PlannedRequest[] {
  const order = new RandomStreams(1893).stream('bench.prefix');
  const planned: PlannedRequest[] = [];
  for (let i = 0; i < PLACEMENTS; i++) {
    const prefix = order.below(PREFIXES);
    const shared = prefixBlocks[prefix];
    const ownBlocks = chainBlocks(shared[PREFIX_BLOCKS - 1].block_hash, BigInt(1_000_000 + i * OWN_BLOCKS), OWN_BLOCKS);
    const block_hashes = [...shared, ...ownBlocks].map((block) => block.block_hash);
    planned.push({ request: { request_id: `r${i}`, ordinal: i, isl_tokens: PROMPT_TOKENS, block_hashes }, prefix, ownBlocks });
  }
  return planned;
}

/** The router, its ranks' event streams, and the moves a worker would make, sent as KV events. */
class RoutedCluster {
  readonly router = new Router({ ...DEFAULT_ROUTER_SETTINGS, block_size: BLOCK_SIZE_TOKENS }, new RandomStreams(1893).stream('router.tie_break'));
  private readonly streams: RankEventStream[] = [];
  /** Batch stamps only need to be distinct and increasing here; the router does not read them. */
  private nextStampNs = 0;

  constructor() {
    for (let worker = 0; worker < RANKS; worker++) {
      this.router.addWorker(worker);
      this.streams.push(new RankEventStream({ worker_id: worker, dp_rank: 0 }));
    }
  }

  /** Stores in Device the blocks the rank does not hold there yet. */
  storeMissingOnDevice(rank: number, blocks: HashedBlock[]): void {
    const missing = blocks.filter((block) => !this.router.mirror.device.has(rank, block.block_hash));
    if (missing.length > 0) this.send(rank, this.streams[rank].stored('Device', missing, null, null));
  }

  storeMissingOnHost(rank: number, blocks: HashedBlock[]): void {
    const missing = blocks.filter((block) => !this.router.mirror.host.has(rank, block.block_hash));
    if (missing.length > 0) this.send(rank, this.streams[rank].stored('HostPinned', missing, null, null));
  }

  evictFromDevice(rank: number, blocks: HashedBlock[]): void {
    const held = blocks.filter((block) => this.router.mirror.device.has(rank, block.block_hash)).map((block) => block.block_hash);
    if (held.length > 0) this.send(rank, this.streams[rank].removed('Device', held));
  }

  private send(rank: number, event: KvEvent): void {
    const ref: RankRef = this.streams[rank].rank;
    this.router.applyBatch({ ...ref, emitted_ns: this.nextStampNs++, events: [event] });
  }
}

/** Each prefix in Device on one rank and in HostPinned on two others. */
function seedResidency(cluster: RoutedCluster, prefixBlocks: HashedBlock[][]): void {
  prefixBlocks.forEach((blocks, prefix) => {
    cluster.storeMissingOnDevice(prefix % RANKS, blocks);
    cluster.storeMissingOnHost((prefix + 3) % RANKS, blocks);
    cluster.storeMissingOnHost((prefix + 7) % RANKS, blocks);
  });
}

function runPlacements(cluster: RoutedCluster, planned: PlannedRequest[], prefixBlocks: HashedBlock[][]): number {
  const router = cluster.router;
  const inFlight: { plan: PlannedRequest; rank: number }[] = [];
  for (let i = 0; i < planned.length; i++) {
    const plan = planned[i];
    const placement = router.place(plan.request, i);
    const rank = placement.worker_id;
    cluster.storeMissingOnDevice(rank, prefixBlocks[plan.prefix]);
    cluster.storeMissingOnDevice(rank, plan.ownBlocks);
    inFlight.push({ plan, rank });
    if (inFlight.length > IN_FLIGHT_LIMIT) finish(cluster, inFlight.shift()!);
    if (i % OFFLOAD_EVERY === 0) offloadPrefix(cluster, rank, prefixBlocks[(plan.prefix + 1) % PREFIXES]);
  }
  return planned.length;
}

function finish(cluster: RoutedCluster, done: { plan: PlannedRequest; rank: number }): void {
  cluster.router.prefillComplete(done.plan.request.request_id);
  cluster.router.requestFinished(done.plan.request.request_id);
  cluster.evictFromDevice(done.rank, done.plan.ownBlocks);
}

/** A rank moves a prefix from Device to G2 (or stores it in G2 if it never had it on Device). */
function offloadPrefix(cluster: RoutedCluster, rank: number, blocks: HashedBlock[]): void {
  cluster.storeMissingOnHost(rank, blocks);
  cluster.evictFromDevice(rank, blocks);
}

export function routerBenchmark(): Benchmark {
  const prefixBlocks = Array.from({ length: PREFIXES }, (_, prefix) => chainBlocks(null, BigInt(prefix * 1000), PREFIX_BLOCKS));
  const planned = planRequests(prefixBlocks);
  return {
    name: 'router',
    unit: 'placements',
    targetPerSecond: 20_000,
    runPass: (): PassResult => {
      const cluster = new RoutedCluster();
      seedResidency(cluster, prefixBlocks);
      return timePass(() => runPlacements(cluster, planned, prefixBlocks));
    },
  };
}
