// Unit tests written from the mutants that survived a targeted mutation run of the engine's cache
// code (`npm run mutation -- --mutate 'src/engine/hostPool.ts,src/engine/deviceCache.ts,
// src/engine/transfers.ts'`): behaviour of the transfer lanes, the shared pool's bandwidth, the G1
// cache and the G2 pool that no other test or scenario pinned down. Each assertion goes through
// the public methods only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kernel } from '../../src/kernel';
import { InvariantError } from '../../src/kernel';
import { SharedBandwidth, TransferLog, type Direction } from '../../src/engine/transfers';
import { DeviceCache } from '../../src/engine/deviceCache';
import { HostPool } from '../../src/engine/hostPool';
import { BlockIds } from '../../src/collections/blockIds';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';

/** A transfer of `bytes` for rank `rank_index` that records the instant it completes in `done_ns`. */
function transfer(kernel: Kernel, direction: Direction, rank_index: number, bytes: number, done_ns: number[]) {
  return { direction, rank_index, worker_id: rank_index, dp_rank: 0, bytes, blocks: 1, request_id: null, onComplete: () => done_ns.push(kernel.now) };
}

test('G2-9: a shared-pool job ends on the whole nanosecond its exact time is, not one later for floating-point dust', () => {
  const kernel = new Kernel();
  const shared = new SharedBandwidth(kernel, new TransferLog(kernel), { shared_d2h_bandwidth_gbps: 80, shared_h2d_bandwidth_gbps: 80 });
  shared.join(0, { d2h_bandwidth_gbps: 0.7, h2d_bandwidth_gbps: 0.7, latency_to_first_byte_ns: 0 });
  const done_ns: number[] = [];
  shared.submit(transfer(kernel, 'h2d', 0, 21, done_ns));
  kernel.run();
  // 21 bytes at 0.7 byte/ns are 30 ns exactly; the floating-point quotient is 30.000000000000004.
  assert.deepEqual(done_ns, [30]);
});

/** A block table and a helper that issues (and holds) the ids of hashes. */
function table(): { ids: (...hashes: bigint[]) => number[]; blockIds: BlockIds } {
  const blockIds = new BlockIds();
  return { blockIds, ids: (...hashes) => hashes.map((hash) => blockIds.acquire(hash)) };
}

/** The hashes `count` blocks from `first` on. */
function hashRange(first: number, count: number): bigint[] {
  return Array.from({ length: count }, (_, i) => BigInt(first + i));
}

const invariant = (pattern: RegExp) => (error: unknown) => error instanceof InvariantError && pattern.test(error.message);

test('ENG-3: an admission of 200 cached blocks takes a slot for each, and undoing it leaves the idle LRU order as it was', () => {
  const { ids, blockIds } = table();
  const evicted: bigint[] = [];
  const g1 = new DeviceCache(200, true, (id) => evicted.push(blockIds.hashOf(id)), blockIds);
  const prompt = ids(...hashRange(1, 200));
  assert.equal(g1.allocate(200), true);
  for (const id of prompt) assert.equal(g1.promote(id), true);
  g1.release(prompt, 0); // idle, least recently used first: 200, 199, …, 1
  const slots = g1.acquireSlots(prompt);
  assert.equal(slots.length, 200);
  assert.equal(new Set(slots).size, 200, 'a distinct slot for each block');
  assert.deepEqual([g1.usedBlocks, g1.obtainableBlocks], [200, 0]);
  g1.undoAcquire(Array.from(slots));
  assert.deepEqual([g1.usedBlocks, g1.obtainableBlocks], [0, 200]);
  assert.equal(g1.allocate(200), true);
  assert.deepEqual(evicted, hashRange(1, 200).reverse(), 'evicted in the order they were freed');
});

test('G1: undoing an acquire twice, or only part of it, is an invariant error naming the block', () => {
  const { ids, blockIds } = table();
  const g1 = new DeviceCache(4, true, () => {}, blockIds);
  const [a, b] = ids(31n, 32n);
  assert.equal(g1.allocate(2), true);
  g1.promote(a);
  g1.promote(b);
  g1.release([a, b], 0);
  const slotOfA = Array.from(g1.acquireSlots([a]));
  g1.undoAcquire(slotOfA);
  assert.throws(() => g1.undoAcquire(slotOfA), invariant(/^G1 undo of an acquire of block 31 that nobody uses$/), 'undone twice');
  const both = Array.from(g1.acquireSlots([a, b]));
  assert.throws(() => g1.undoAcquire([both[1]]), invariant(/^G1 undo of an acquire: block 31 is still in use$/), 'only b given back');
});

test('G2: the resident ids are listed ascending, whatever their LRU order, and without the pending ones', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('p', 4, blockIds);
  const [a, b, c, d] = ids(1n, 2n, 3n, 4n);
  pool.reserve([c, a, b]);
  pool.complete([c, a, b]); // LRU order b, a, c
  pool.reserve([d]);
  assert.deepEqual(pool.residentHashes(), [2n, 1n, 3n]);
  assert.deepEqual(Array.from(pool.residentSortedIds()), [a, b, c].sort((x, y) => x - y));
  assert.ok(a < b && b < c, 'ids are issued in order, so the order is a, b, c');
});

test('G2-5: a touch of a request\'s first blocks leaves its later blocks where they were in the LRU order', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('p', 4, blockIds);
  const [a, b, c, d] = ids(1n, 2n, 3n, 4n);
  for (const id of [a, b, c, d]) {
    pool.reserve([id]);
    pool.complete([id]);
  }
  assert.deepEqual(pool.residentHashes(), [1n, 2n, 3n, 4n]);
  pool.touch([b, c, d], 1); // only b: its first block
  assert.deepEqual(pool.residentHashes(), [1n, 3n, 4n, 2n]);
  pool.touch([a, c, d], 2); // c, then a: a is most recent
  assert.deepEqual(pool.residentHashes(), [4n, 2n, 3n, 1n]);
});

test('G2-2: an empty cohort reserves nothing', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('p', 2, blockIds);
  assert.equal(pool.reserve([]), null);
  pool.reserve(ids(1n, 2n));
  pool.complete(ids(1n, 2n));
  assert.equal(pool.reserve([]), null, 'not even in a full pool');
  assert.deepEqual([pool.usedBlocks, pool.residentBlocks], [2, 2]);
});

test('G2 misuse of a block the pool does not hold is an invariant error naming the block: pin, unanchor, waiting on it', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('p', 2, blockIds);
  const [absent] = ids(41n);
  assert.throws(() => pool.pin([absent], 0), invariant(/^G2 p: pinning block 41 that is not resident$/));
  assert.throws(() => pool.unanchor(absent), invariant(/^G2 p: unanchoring block 41 that is not held$/));
  assert.throws(() => pool.whenComplete(absent, () => {}), invariant(/^G2 p: waiting on block 41 that is not pending$/));
});

test('G2-6: an entry held only as the parent of a pending cohort (anchored) is not being loaded: a lookup from any rank hits it', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('shared', 4, blockIds);
  const [parent] = ids(51n);
  pool.reserve([parent]);
  pool.complete([parent]);
  pool.anchor(parent);
  for (const rank of [0, 1, 2]) assert.deepEqual(pool.lookup([parent], 0, 1, rank), { outcome: 'hit', blocks: 1 }, `rank ${rank}, no load ever`);
  pool.unanchor(parent);
  pool.pin([parent], 1);
  pool.unpin([parent], 1);
  pool.anchor(parent);
  for (const rank of [0, 1, 2]) assert.deepEqual(pool.lookup([parent], 0, 1, rank), { outcome: 'hit', blocks: 1 }, `rank ${rank}, after rank 1's load ended`);
});

test('G2-6: an entry anchored while a rank loads it is, once that load ends, being loaded by no one: the rank\'s lookup hits it, and the rank cannot unpin it again', () => {
  const blockIds = new BlockIds();
  const pool = new HostPool('p', 4, blockIds);
  const e = blockIds.acquire(1n);
  pool.reserve([e]);
  pool.complete([e]);
  pool.pin([e], 0);
  pool.anchor(e);
  assert.deepEqual(pool.lookup([e], 0, 1, 0), { outcome: 'deferred', blocks: 1, reason: 'loading' }, 'while rank 0 loads it');
  pool.unpin([e], 0);
  assert.deepEqual(pool.lookup([e], 0, 1, 0), { outcome: 'hit', blocks: 1 }, 'the anchor is no load');
  assert.throws(() => pool.unpin([e], 0), InvariantError, 'rank 0 loads nothing now');
  pool.pin([e], 1);
  pool.pin([e], 0);
  pool.unpin([e], 1);
  assert.deepEqual(pool.lookup([e], 0, 1, 1), { outcome: 'hit', blocks: 1 }, 'rank 1 loads nothing');
  assert.deepEqual(pool.lookup([e], 0, 1, 0), { outcome: 'deferred', blocks: 1, reason: 'loading' }, 'rank 0 still does');
  pool.unpin([e], 0);
  pool.unanchor(e);
  assert.throws(() => pool.unanchor(e), InvariantError);
});

test('G2-6 end to end: a request on the rank whose load of an anchored entry has ended restores it at once (test/fixtures/engine/anchored-parent-after-load.yaml)', () => {
  const file = path.join(ROOT, 'test', 'fixtures', 'engine', 'anchored-parent-after-load.yaml');
  const outcome = runReplay(parseReplayConfig(fs.readFileSync(file, 'utf8'), file));
  const z = outcome.report.per_request.find((r) => r.request_id === 'z')!;
  assert.deepEqual(z.admission_history.map((a) => [a.time_ns, a.outcome]), [[99_000_000, 'loading'], [103_000_000, 'admitted']]);
  assert.equal(z.first_token_ms, 104);
});

test('G2-6: a request readmitted after preemption by another restore keeps its first admission\'s restore: its sources, its host tokens and its H2D wait (test/fixtures/engine/restore-then-decode-preemption.yaml)', () => {
  const file = path.join(ROOT, 'test', 'fixtures', 'engine', 'restore-then-decode-preemption.yaml');
  const outcome = runReplay(parseReplayConfig(fs.readFileSync(file, 'utf8'), file));
  const r1 = outcome.report.per_request.find((r) => r.request_id === 'r1')!;
  assert.ok(r1.admission_history.filter((a) => a.outcome === 'loading').length >= 2, 'restored twice: on the prefill worker, and on the decode worker after its preemption');
  assert.deepEqual({ preemptions: r1.preemptions, sources: r1.host_restore_sources, host: r1.host_reused_tokens, h2d: r1.h2d_wait_ms, ttft: r1.ttft_ms }, { preemptions: 1, sources: ['r0'], host: 12, h2d: 3, ttft: 5 });
});

test('PD-1: a request whose KV never moved (it ended at its prefill) has no KV handoff time (null, not 0); one that moved has its own (test/fixtures/engine/restore-then-decode-preemption.yaml)', () => {
  const file = path.join(ROOT, 'test', 'fixtures', 'engine', 'restore-then-decode-preemption.yaml');
  const records = runReplay(parseReplayConfig(fs.readFileSync(file, 'utf8'), file)).report.per_request;
  const of = (id: string) => records.find((r) => r.request_id === id)!;
  assert.deepEqual([of('r0').decode_worker_id, of('r0').kv_transfer_ms], [null, null], 'r0 has one output token: it ends at its prefill');
  assert.deepEqual([of('r1').decode_worker_id, of('r1').kv_transfer_ms], [1, 0.9], '0.5 ms latency and 4 blocks of 1 MB at 10 GB/s');
});
