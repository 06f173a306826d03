// Unit tests of the engine's parts: transfer timing (private FIFO lanes, shared fair share with
// re-division), the G1 cache's LRU and capacity, and the G2 pool's cohorts, pins and touches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kernel } from '../../src/kernel';
import { PrivateLanes, SharedBandwidth, TransferLog, transferNs } from '../../src/engine/transfers';
import { DeviceCache } from '../../src/engine/deviceCache';
import { HostPool } from '../../src/engine/hostPool';
import { BlockIds } from '../../src/collections/blockIds';


function job(direction: 'd2h' | 'h2d', rank_index: number, bytes: number, done: number[], kernel: Kernel) {
  return { direction, rank_index, worker_id: rank_index, dp_rank: 0, bytes, blocks: 1, request_id: null, onComplete: () => done.push(kernel.now) };
}

test('TIME-2: B bytes at R GB/s take B / R ns, rounded up; 0 GB/s is instant', () => {
  assert.equal(transferNs(2_000_000, 1), 2_000_000);
  assert.equal(transferNs(1000, 3), 334);
  assert.equal(transferNs(1000, 0), 0);
  assert.equal(transferNs(4096, 0.5), 8192);
  // 21 bytes at 0.7 GB/s are 30 ns exactly: the quotient's floating-point dust (30.000000000000004) does not round it up.
  assert.equal(transferNs(21, 0.7), 30);
  assert.equal(transferNs(33, 2.2), 15);
  // Exact where floating point is not: 21,609,054,208 B at 0.7 GB/s are 30,870,077,440 ns exactly
  // (the float quotient is 30,870,077,440.000004), and 20,000,000 B at 1.0000001 GB/s are
  // 19,999,998.0000002 ns, so 19,999,999 (a tolerance for dust rounded it down).
  assert.equal(transferNs(21_609_054_208, 0.7), 30_870_077_440);
  assert.equal(transferNs(20_000_000, 1.0000001), 19_999_999);
  assert.equal(transferNs(1, 0.001), 1000);
  assert.equal(transferNs(7, 1e-3), 7000);
});

test('G2-8: a private lane is FIFO with deadlines fixed at submission; D2H and H2D are independent', () => {
  const kernel = new Kernel();
  const log = new TransferLog(kernel);
  const lanes = new PrivateLanes(kernel, log, { d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1, latency_to_first_byte_ns: 100 });
  const done: number[] = [];
  lanes.submit(job('h2d', 0, 1000, done, kernel));
  lanes.submit(job('h2d', 0, 1000, done, kernel));
  lanes.submit(job('d2h', 0, 500, done, kernel));
  kernel.run();
  // h2d: 100 + 1000 = 1100, then the second waits for the lane: 1100 + 1000 = 2100; d2h: 100 + 500.
  assert.deepEqual(done, [600, 1100, 2100]);
});

test('TIME-3: transfers that end at the same instant complete stores (D2H) first, then loads (H2D), each in submission order', () => {
  const settings = { d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1, latency_to_first_byte_ns: 100 };
  const completions = (engine: PrivateLanes | SharedBandwidth, kernel: Kernel, jobs: ['d2h' | 'h2d', number, string][]) => {
    const order: string[] = [];
    for (const [direction, rank_index, name] of jobs) engine.submit({ ...job(direction, rank_index, 1000, [], kernel), onComplete: () => order.push(`${name} at ${kernel.now}`) });
    kernel.run();
    return order;
  };
  // A rank's private lanes: a load submitted before a store, each alone on its lane, both end at 100 + 1000 ns.
  const privateKernel = new Kernel();
  const lanes = new PrivateLanes(privateKernel, new TransferLog(privateKernel), settings);
  assert.deepEqual(completions(lanes, privateKernel, [['h2d', 0, 'load'], ['d2h', 0, 'store']]), ['store at 1100', 'load at 1100']);
  // A shared pool without a cap of its own: two ranks, loads submitted before stores, all four at 1 GB/s.
  const sharedKernel = new Kernel();
  const shared = new SharedBandwidth(sharedKernel, new TransferLog(sharedKernel), { shared_d2h_bandwidth_gbps: 0, shared_h2d_bandwidth_gbps: 0 });
  for (const rank of [0, 1]) shared.join(rank, settings);
  const order = completions(shared, sharedKernel, [['h2d', 0, 'load 0'], ['h2d', 1, 'load 1'], ['d2h', 1, 'store 1'], ['d2h', 0, 'store 0']]);
  assert.deepEqual(order, ['store 1 at 1100', 'store 0 at 1100', 'load 0 at 1100', 'load 1 at 1100']);
});

test('G2-9: two concurrent jobs under a 1 GB/s pool cap each take twice their solo time', () => {
  const run = (jobs: number) => {
    const kernel = new Kernel();
    const shared = new SharedBandwidth(kernel, new TransferLog(kernel), { shared_d2h_bandwidth_gbps: 1, shared_h2d_bandwidth_gbps: 1 });
    for (let i = 0; i < jobs; i++) shared.join(i, { d2h_bandwidth_gbps: 32, h2d_bandwidth_gbps: 32, latency_to_first_byte_ns: 0 });
    const done: number[] = [];
    for (let i = 0; i < jobs; i++) shared.submit(job('h2d', i, 2_000_000, done, kernel));
    kernel.run();
    return done;
  };
  assert.deepEqual(run(1), [2_000_000]);
  assert.deepEqual(run(2), [4_000_000, 4_000_000]);
});

test('G2-9: shares are re-divided when a job finishes, and the rank cap applies per rank', () => {
  const kernel = new Kernel();
  const shared = new SharedBandwidth(kernel, new TransferLog(kernel), { shared_d2h_bandwidth_gbps: 80, shared_h2d_bandwidth_gbps: 80 });
  for (const rank of [0, 1]) shared.join(rank, { d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1, latency_to_first_byte_ns: 0 });
  const done: number[] = [];
  // Two jobs on rank 0 share its 1 GB/s; a job on rank 1 runs alone at 1 GB/s.
  shared.submit(job('h2d', 0, 1000, done, kernel));
  shared.submit(job('h2d', 0, 3000, done, kernel));
  shared.submit(job('h2d', 1, 1000, done, kernel));
  kernel.run();
  // rank 1: 1000 ns. rank 0: both at 0.5 B/ns until the small one ends at 2000 ns (the big one has
  // 2000 bytes left), then the big one alone at 1 B/ns: 2000 + 2000 = 4000 ns.
  assert.deepEqual(done, [1000, 2000, 4000]);
});

test('TIME-2/G2-9: a shared pool times its jobs exactly: a job alone takes what a private lane gives, and shares re-divided keep every byte', () => {
  const runPool = (rankCap: number, jobs: number[]) => {
    const kernel = new Kernel();
    const shared = new SharedBandwidth(kernel, new TransferLog(kernel), { shared_d2h_bandwidth_gbps: 0, shared_h2d_bandwidth_gbps: 0 });
    shared.join(0, { d2h_bandwidth_gbps: rankCap, h2d_bandwidth_gbps: rankCap, latency_to_first_byte_ns: 0 });
    const done: number[] = [];
    for (const bytes of jobs) shared.submit(job('h2d', 0, bytes, done, kernel));
    kernel.run();
    return done;
  };
  // 20,000,000 B at 1.0000001 GB/s are 19,999,998.0000002 ns: 19,999,999 by TIME-2 (a tolerance for
  // floating-point dust rounded it down to 19,999,998).
  assert.deepEqual(runPool(1.0000001, [20_000_000]), [19_999_999]);
  for (const [bytes, gbps] of [[21_609_054_208, 0.7], [1, 0.001], [4096, 0.5], [123_456_789, 3.3333333], [1000, 3], [999_999_937, 12.345678]]) {
    assert.deepEqual(runPool(gbps, [bytes]), [transferNs(bytes, gbps)], `${bytes} B at ${gbps} GB/s`);
  }
  // Two jobs at half of 1.0000001 each: the small one ends at ceil(19,999,998.0000002) = 19,999,999 ns,
  // when the big one has 9,999,999.50000005 B left, which alone take 9,999,998.5… ns more: 29,999,998.
  assert.deepEqual(runPool(1.0000001, [10_000_000, 20_000_000]), [19_999_999, 29_999_998]);
});

test('TIME-2/G2-9: a shared pool with unlimited bandwidth (0) moves every job in no time', () => {
  const kernel = new Kernel();
  const shared = new SharedBandwidth(kernel, new TransferLog(kernel), { shared_d2h_bandwidth_gbps: 0, shared_h2d_bandwidth_gbps: 0 });
  for (const rank of [0, 1]) shared.join(rank, { d2h_bandwidth_gbps: 0, h2d_bandwidth_gbps: 0, latency_to_first_byte_ns: 0 });
  const done: number[] = [];
  shared.submit(job('h2d', 0, 2_000_000, done, kernel));
  shared.submit(job('d2h', 1, 2_000_000, done, kernel));
  kernel.run();
  assert.deepEqual(done, [0, 0]);
});

test('G2-9: each rank of a shared pool keeps its own role\'s rank cap and first-byte latency', () => {
  const kernel = new Kernel();
  const shared = new SharedBandwidth(kernel, new TransferLog(kernel), { shared_d2h_bandwidth_gbps: 80, shared_h2d_bandwidth_gbps: 80 });
  shared.join(0, { d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1, latency_to_first_byte_ns: 0 });
  shared.join(1, { d2h_bandwidth_gbps: 4, h2d_bandwidth_gbps: 2, latency_to_first_byte_ns: 500 });
  const done: number[] = [];
  shared.submit(job('h2d', 0, 1000, done, kernel));
  shared.submit(job('h2d', 1, 1000, done, kernel));
  kernel.run();
  // rank 0: 1000 bytes at 1 B/ns; rank 1: 500 ns first-byte latency, then 1000 bytes at 2 B/ns.
  assert.deepEqual(done, [1000, 1000]);
  const late: number[] = [];
  const k2 = new Kernel();
  const s2 = new SharedBandwidth(k2, new TransferLog(k2), { shared_d2h_bandwidth_gbps: 80, shared_h2d_bandwidth_gbps: 80 });
  s2.join(1, { d2h_bandwidth_gbps: 4, h2d_bandwidth_gbps: 2, latency_to_first_byte_ns: 500 });
  s2.submit(job('d2h', 1, 1000, late, k2));
  k2.run();
  assert.deepEqual(late, [750]);
});

test('ENG-3: idle G1 entries are evicted least-recently-used, last blocks of a request first', () => {
  const evicted: bigint[] = [];
  const table = new BlockIds();
  const id = (hash: bigint) => table.acquire(hash);
  const g1 = new DeviceCache(4, true, (id) => evicted.push(table.hashOf(id)), table);
  assert.equal(g1.allocate(3), true);
  for (const hash of [1n, 2n, 3n]) assert.equal(g1.promote(id(hash)), true);
  g1.release([id(1n), id(2n), id(3n)], 0);
  assert.equal(g1.prefixLength([id(1n), id(2n), id(3n), id(4n)]), 3);
  assert.equal(g1.allocate(3), true);
  assert.deepEqual(evicted, [3n, 2n]);
  assert.equal(g1.prefixLength([id(1n), id(2n)]), 1);
  assert.equal(g1.allocate(2), false, 'only one block (the idle entry 1) is obtainable');
});

test('ENG-3: an admission undone (no room after all) leaves the idle LRU order exactly as it was: no use, no touch', () => {
  const evicted: bigint[] = [];
  const table = new BlockIds();
  const id = (hash: bigint) => table.acquire(hash);
  const g1 = new DeviceCache(6, true, (id) => evicted.push(table.hashOf(id)), table);
  assert.equal(g1.allocate(4), true);
  for (const hash of [1n, 2n, 3n, 4n]) assert.equal(g1.promote(id(hash)), true);
  g1.release([id(1n), id(2n)], 0); // idle, oldest first: 2, 1
  g1.release([id(3n), id(4n)], 0); // then 4, 3
  const slots = g1.acquireSlots([id(1n), id(2n)]);
  assert.equal(g1.obtainableBlocks, 4, 'two empty blocks and the idle 4 and 3');
  assert.equal(g1.allocate(5), false, 'no room: the admission is undone');
  g1.undoAcquire(Array.from(slots));
  assert.equal(g1.allocate(6), true, 'every entry idle again');
  assert.deepEqual(evicted, [2n, 1n, 4n, 3n], 'evicted in the order they were freed, the undone prefix not moved to the back');
});

test('ENG-3: a duplicate block is not promoted twice, and capacity is never exceeded', () => {
  const table = new BlockIds();
  const g1 = new DeviceCache(2, true, () => {}, table);
  assert.equal(g1.allocate(2), true);
  assert.equal(g1.promote(table.acquire(7n)), true);
  assert.equal(g1.promote(table.acquire(7n)), false);
  assert.equal(g1.allocate(1), false);
  assert.equal(g1.usedBlocks, 2);
});

test('G2-2/G2-3: a cohort reserves atomically, pending entries are not hits, a too-large cohort never fits', () => {
  const table = new BlockIds();
  const ids = (...hashes: bigint[]) => hashes.map((hash) => table.acquire(hash));
  const pool = new HostPool('p', 2, table);
  assert.equal(pool.reserve(ids(1n, 2n, 3n)), null, 'a 3-block cohort never fits a 2-block pool');
  assert.deepEqual(victimHashes(table, pool.reserve(ids(1n, 2n))), []);
  assert.deepEqual(pool.lookup(ids(1n, 2n), 0, 2, 0), { outcome: 'deferred', blocks: 2, reason: 'pending' });
  assert.equal(pool.reserve(ids(3n)), null, 'pending entries are never victims');
  pool.complete(ids(1n, 2n));
  assert.deepEqual(pool.lookup(ids(1n, 2n, 9n), 0, 3, 0), { outcome: 'hit', blocks: 2 });
});

test('G2-5: lookups touch keys so the earliest block is most recent; pinned entries are never victims', () => {
  const table = new BlockIds();
  const ids = (...hashes: bigint[]) => hashes.map((hash) => table.acquire(hash));
  const pool = new HostPool('p', 3, table);
  pool.reserve(ids(1n, 2n, 3n), 'play-a:cache');
  pool.complete(ids(1n, 2n, 3n));
  pool.touch(ids(2n, 3n)); // 3 then 2 become most recent: LRU order 1, 3, 2
  assert.deepEqual(pool.residentHashes(), [1n, 3n, 2n]);
  assert.deepEqual(pool.originsOf(ids(1n, 2n)), ['play-a:cache']);
  pool.pin(ids(1n), 0);
  assert.deepEqual(pool.lookup(ids(1n), 0, 1, 0), { outcome: 'deferred', blocks: 1, reason: 'loading' });
  assert.deepEqual(pool.lookup(ids(1n), 0, 1, 1), { outcome: 'hit', blocks: 1 }, 'another rank may read a pinned shared entry');
  assert.deepEqual(victimHashes(table, pool.reserve(ids(4n))), [3n]);
  pool.unpin(ids(1n), 0);
  assert.deepEqual(victimHashes(table, pool.reserve(ids(5n))), [1n]);
});

// vLLM's tests/v1/core/test_prefix_caching.py, test_prefill (10 usable blocks: vLLM's 11 less its null block).
test('ENG-3: blocks with nothing cached are handed out before any cached block is evicted, then a prefix goes last block first', () => {
  const table = new BlockIds();
  const evicted: bigint[] = [];
  const g1 = new DeviceCache(10, true, (id) => evicted.push(table.hashOf(id)), table);
  const common = [1n, 2n, 3n].map((hash) => table.acquire(hash));
  assert.equal(g1.allocate(4), true); // request 0: three complete blocks and a partial one
  for (const id of common) assert.equal(g1.promote(id), true);
  g1.acquire(common); // request 1 hits the three blocks and takes one block for its partial one
  assert.equal(g1.allocate(1), true);
  g1.release(common, 1);
  g1.release(common, 1);
  assert.deepEqual([g1.freeBlocks, g1.cachedBlocks], [7, 3]);
  assert.equal(g1.allocate(7), true);
  assert.deepEqual(evicted, [], 'the two partial blocks and the five never used come first');
  assert.equal(g1.allocate(3), true);
  assert.deepEqual(evicted, [3n, 2n, 1n]);
});

// vLLM's tests/v1/kv_offload/cpu/test_manager.py, test_already_stored_block_not_evicted_during_prepare_store.
test('G2-2: a store never evicts a block it names that the pool holds already, even the least recently used one', () => {
  const table = new BlockIds();
  const ids = (...hashes: bigint[]) => hashes.map((hash) => table.acquire(hash));
  const pool = new HostPool('p', 4, table);
  pool.reserve(ids(1n, 2n));
  pool.complete(ids(1n, 2n));
  pool.touch(ids(1n)); // 2 is now the least recently used entry
  assert.deepEqual(pool.residentHashes(), [2n, 1n]);
  // A store naming 2, 3, 4 and 5 copies 3, 4 and 5 (2 is held already) and needs one victim.
  const named = ids(2n, 3n, 4n, 5n);
  assert.deepEqual(victimHashes(table, pool.reserve(named.slice(1), '', named, 0, named.length)), [1n], 'block 1, not the named block 2');
  pool.complete(named.slice(1));
  assert.equal(pool.isResident(named[0]), true);
  assert.equal(pool.reserve(ids(6n), '', named, 0, named.length), null, 'every resident entry is named: no victim is left');
});

/** The hashes of a reservation's victims (null: no reservation). */
function victimHashes(table: BlockIds, reservation: { victims: number[] } | null): bigint[] | null {
  return reservation === null ? null : reservation.victims.map((id) => table.hashOf(id));
}
