// Unit tests of the G1 cache's and G2 pool's guards and bookkeeping that no scenario reaches:
// sizes must be positive integers, misuse (releasing what a request does not use, pinning what is
// not resident, completing what is not pending, …) is an InvariantError naming the block, block
// counts add up, and cohorts waiting on a pending parent run in order once it completes. Written
// from the mutants these parts left alive (`npm run mutation`); they pin the public behaviour of
// src/engine/deviceCache.ts and src/engine/hostPool.ts, not their internals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvariantError } from '../../src/kernel';
import { DeviceCache } from '../../src/engine/deviceCache';
import { HostPool } from '../../src/engine/hostPool';
import { BlockIds } from '../../src/collections/blockIds';
import { NO_SLOT } from '../../src/collections/blockSlots';

function table(): { ids: (...hashes: bigint[]) => number[]; blockIds: BlockIds } {
  const blockIds = new BlockIds();
  return { blockIds, ids: (...hashes) => hashes.map((hash) => blockIds.acquire(hash)) };
}

const invariant = (pattern: RegExp) => (error: unknown) => error instanceof InvariantError && pattern.test(error.message);

test('G1 and G2 sizes must be positive whole numbers of blocks', () => {
  const { blockIds } = table();
  for (const size of [0, -1, 2.5, Number.NaN]) {
    assert.throws(() => new DeviceCache(size, true, () => {}, blockIds), { name: 'RangeError', message: `num_gpu_blocks ${size} must be a positive integer` });
    assert.throws(() => new HostPool('p', size, blockIds), { name: 'RangeError', message: `num_host_blocks ${size} must be a positive integer` });
  }
  assert.equal(new DeviceCache(1, true, () => {}, blockIds).freeBlocks, 1);
  assert.equal(new HostPool('p', 1, blockIds).usedBlocks, 0);
});

test('G1 block counts: private blocks and used entries are in use, idle entries are cached but obtainable', () => {
  const { ids, blockIds } = table();
  const g1 = new DeviceCache(6, true, () => {}, blockIds);
  assert.equal(g1.allocate(4), true);
  const [a, b] = ids(1n, 2n);
  assert.deepEqual([g1.promote(a), g1.promote(b)], [true, true]);
  assert.deepEqual([g1.usedBlocks, g1.cachedBlocks, g1.freeBlocks, g1.obtainableBlocks], [4, 2, 2, 2]);
  g1.release([a, b], 2);
  assert.deepEqual([g1.usedBlocks, g1.cachedBlocks, g1.freeBlocks, g1.obtainableBlocks], [0, 2, 4, 6]);
  assert.deepEqual([g1.has(a), g1.has(ids(3n)[0])], [true, false]);
  assert.deepEqual(g1.residentHashes(), [1n, 2n]);
  g1.acquire([a]);
  assert.deepEqual([g1.usedBlocks, g1.obtainableBlocks], [1, 5]);
});

test('G1: a request whose block another request stored first uses that entry and frees its own copy', () => {
  const { ids, blockIds } = table();
  const g1 = new DeviceCache(4, true, () => {}, blockIds);
  const [a, b] = ids(1n, 2n);
  assert.equal(g1.allocate(1), true);
  assert.equal(g1.promoteToSlot(a), 0, 'the first request stores block a');
  g1.release([a], 0);
  assert.deepEqual([g1.usedBlocks, g1.cachedBlocks, g1.freeBlocks, g1.obtainableBlocks], [0, 1, 3, 4], 'a is idle');
  assert.equal(g1.allocate(1), true, 'a second request computes its own copy of a');
  assert.equal(g1.adoptSlot(a), 0, 'it uses the entry instead');
  assert.deepEqual([g1.usedBlocks, g1.cachedBlocks, g1.freeBlocks, g1.obtainableBlocks], [1, 1, 3, 3], 'its copy is free again; the entry is in use, no longer idle');
  assert.equal(g1.allocate(4), false, 'an entry in use is never evicted');
  assert.equal(g1.adoptSlot(b), NO_SLOT, 'no entry for b: nothing changes');
  assert.deepEqual([g1.usedBlocks, g1.freeBlocks], [1, 3]);
  g1.release([a], 0);
  assert.deepEqual([g1.usedBlocks, g1.obtainableBlocks], [0, 4]);
  assert.throws(() => g1.release([a], 0), invariant(/that the request does not use/), 'adopted once, released once');
  const plain = new DeviceCache(2, false, () => {}, blockIds);
  plain.allocate(1);
  assert.equal(plain.adoptSlot(a), NO_SLOT, 'without prefix caching nothing is shared');
  assert.equal(plain.usedBlocks, 1);
});

test('G1 without prefix caching never reuses or promotes a block', () => {
  const { ids, blockIds } = table();
  const g1 = new DeviceCache(2, false, () => {}, blockIds);
  assert.equal(g1.allocate(1), true);
  const [a] = ids(1n);
  assert.equal(g1.promote(a), false);
  assert.equal(g1.prefixLength([a]), 0);
  assert.deepEqual([g1.usedBlocks, g1.cachedBlocks], [1, 0]);
});

test('G1 misuse is an invariant error naming the block', () => {
  const { ids, blockIds } = table();
  const g1 = new DeviceCache(4, true, () => {}, blockIds);
  const [a, b] = ids(11n, 12n);
  assert.throws(() => g1.acquire([a]), invariant(/^G1 acquire of block 11 that is not cached$/));
  g1.allocate(1);
  g1.promote(a);
  g1.release([a], 0);
  assert.throws(() => g1.release([a], 0), invariant(/^G1 release of block 11 that the request does not use$/), 'already idle');
  assert.throws(() => g1.release([b], 0), invariant(/^G1 release of block 12 that the request does not use$/), 'never cached');
  assert.throws(() => g1.release([], 1), invariant(/^G1 private block count went negative \(-1\)$/));
});

test('G2 misuse is an invariant error naming the pool and the block', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('shared-0', 4, blockIds);
  const [a, b] = ids(21n, 22n);
  pool.reserve([a]);
  assert.throws(() => pool.reserve([a]), invariant(/^G2 shared-0: cohort block 21 is already in the pool$/));
  assert.throws(() => pool.pin([a], 0), invariant(/^G2 shared-0: pinning block 21 that is not resident$/), 'still pending');
  assert.throws(() => pool.complete([b]), invariant(/^G2 shared-0: completing block 22 that is not pending$/));
  assert.throws(() => pool.anchor(b), invariant(/^G2 shared-0: anchoring block 22 that is not in the pool$/));
  assert.throws(() => pool.unanchor(a), invariant(/^G2 shared-0: unanchoring block 21 that is not held$/));
  pool.complete([a]);
  assert.throws(() => pool.complete([a]), invariant(/^G2 shared-0: completing block 21 that is not pending$/));
  assert.throws(() => pool.whenComplete(a, () => {}), invariant(/^G2 shared-0: waiting on block 21 that is not pending$/));
  assert.throws(() => pool.unpin([a], 0), invariant(/^G2 shared-0: unpinning block 21 that rank 0 is not loading$/));
  pool.pin([a], 0);
  assert.throws(() => pool.unpin([a], 1), invariant(/^G2 shared-0: unpinning block 21 that rank 1 is not loading$/));
  pool.unpin([a], 0);
  assert.throws(() => pool.unpin([a], 0), invariant(/that rank 0 is not loading$/));
});

test('G2 counts pending entries as used but not resident, and an anchored entry is never a victim', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('p', 2, blockIds);
  const [a, b, c] = ids(1n, 2n, 3n);
  pool.reserve([a, b]);
  assert.deepEqual([pool.usedBlocks, pool.residentBlocks, pool.isResident(a), pool.isPending(a), pool.contains(a)], [2, 0, false, true, true]);
  assert.deepEqual(pool.missing([a, c]), [c]);
  pool.anchor(a);
  pool.complete([a, b]);
  assert.deepEqual([pool.usedBlocks, pool.residentBlocks, pool.isResident(a), pool.isPending(a), pool.isPending(c)], [2, 2, true, false, false]);
  assert.deepEqual(pool.residentRun([a, b, c], 0), 2);
  assert.deepEqual(pool.residentRun([a, b, c], 1), 1);
  // LRU order after completion is b, a (a, the first block, is most recent); a is anchored.
  assert.deepEqual(victimHashes(blockIds, pool.reserve([c])), [2n]);
  assert.equal(pool.reserve(ids(4n)), null, 'the anchored entry is the only resident one left');
  pool.unanchor(a);
  assert.deepEqual(victimHashes(blockIds, pool.reserve(ids(4n))), [1n]);
});

test('G2 fields kept in 16 bits widen when a value needs more: 70,000 pins of one entry, a rank index past 32,767, 70,000 origins', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('shared', 4, blockIds);
  const [a, b, c] = ids(1n, 2n, 3n);
  pool.reserve([a], 'first');
  pool.complete([a]);
  for (let i = 0; i < 70_000; i++) pool.pin([a], 40_000);
  pool.pin([a], 7);
  assert.deepEqual(pool.lookup([a], 0, 1, 40_000), { outcome: 'deferred', blocks: 1, reason: 'loading' });
  for (let i = 0; i < 70_000; i++) pool.unpin([a], 40_000);
  assert.throws(() => pool.unpin([a], 40_000), /that rank 40000 is not loading/, 'every one of the 70,000 loads was counted, and no more');
  assert.deepEqual(pool.lookup([a], 0, 1, 40_000), { outcome: 'hit', blocks: 1 });
  pool.unpin([a], 7);
  // A cohort from another origin each time (the pool evicts the oldest to make room): the last
  // names have indexes past 16 bits, and each entry still names its own.
  const last: number[] = [];
  for (let i = 0; i < 70_000; i++) {
    const cohort = ids(BigInt(100 + i));
    assert.notEqual(pool.reserve(cohort, `origin-${i}`), null);
    pool.complete(cohort);
    if (i >= 69_997) last.push(cohort[0]);
  }
  assert.deepEqual(pool.originsOf(last), ['origin-69997', 'origin-69998', 'origin-69999']);
  assert.deepEqual(pool.originsOf([b, c]), [], 'never stored');
});

test('a pinned entry loading into two ranks stays pinned until both loads end', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('shared', 1, blockIds);
  const [a] = ids(1n);
  pool.reserve([a]);
  pool.complete([a]);
  pool.pin([a], 0);
  pool.pin([a], 1);
  pool.pin([a], 1);
  pool.unpin([a], 1);
  assert.deepEqual(pool.lookup([a], 0, 1, 1), { outcome: 'deferred', blocks: 1, reason: 'loading' }, 'rank 1 still loads it once');
  pool.unpin([a], 0);
  assert.equal(pool.reserve(ids(2n)), null, 'still pinned by rank 1');
  pool.unpin([a], 1);
  assert.deepEqual(pool.lookup([a], 0, 1, 1), { outcome: 'hit', blocks: 1 });
  assert.deepEqual(victimHashes(blockIds, pool.reserve(ids(2n))), [1n]);
});

test('loads of one entry by three ranks are counted per rank, and by one counter again once one rank is left', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('shared', 2, blockIds);
  const [a] = ids(1n);
  pool.reserve([a]);
  pool.complete([a]);
  const loading = (rank: number) => pool.lookup([a], 0, 1, rank).outcome === 'deferred';
  pool.pin([a], 2);
  pool.pin([a], 2);
  assert.deepEqual([loading(0), loading(1), loading(2)], [false, false, true], 'one rank loads it twice');
  pool.pin([a], 0);
  pool.pin([a], 1);
  assert.deepEqual([loading(0), loading(1), loading(2)], [true, true, true]);
  assert.throws(() => pool.unpin([a], 3), invariant(/that rank 3 is not loading$/));
  pool.unpin([a], 0);
  pool.unpin([a], 2);
  assert.deepEqual([loading(0), loading(1), loading(2)], [false, true, true], 'rank 2 still loads it once');
  pool.unpin([a], 1);
  assert.deepEqual([loading(0), loading(1), loading(2)], [false, false, true], 'rank 2 alone again');
  assert.throws(() => pool.unpin([a], 1), invariant(/that rank 1 is not loading$/));
  pool.pin([a], 1);
  pool.unpin([a], 2);
  assert.deepEqual([loading(0), loading(1), loading(2)], [false, true, false], 'rank 1 alone');
  pool.unpin([a], 1);
  assert.deepEqual([loading(0), loading(1), loading(2)], [false, false, false]);
  assert.deepEqual(victimHashes(blockIds, pool.reserve(ids(2n, 3n))), [1n], 'no load pins it any more');
});

test('work waiting on pending entries runs once they complete and are released, in the order it started waiting', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('p', 4, blockIds);
  const [a, b, c] = ids(1n, 2n, 3n);
  pool.reserve([a, b]);
  pool.reserve([c]);
  const ran: string[] = [];
  pool.whenComplete(b, () => ran.push('first on b'));
  pool.whenComplete(a, () => ran.push('on a'));
  pool.whenComplete(b, () => ran.push('second on b'));
  pool.whenComplete(c, () => ran.push('on c'));
  pool.complete([c]);
  pool.releaseWaiters([c]);
  pool.complete([a, b]);
  assert.deepEqual(ran, ['on c'], 'completion alone runs nothing');
  pool.releaseWaiters([b, a]);
  assert.deepEqual(ran, ['on c', 'first on b', 'second on b', 'on a']);
  pool.releaseWaiters([a, b, ids(9n)[0]]);
  assert.equal(ran.length, 4, 'each waiter runs once');
});

test('G2 origins are listed sorted and distinct', () => {
  const { ids, blockIds } = table();
  const pool = new HostPool('p', 4, blockIds);
  const [a, b, c] = ids(1n, 2n, 3n);
  pool.reserve([a], 'play-b:cache');
  pool.reserve([b], 'play-a:cache');
  pool.reserve([c], 'play-b:cache');
  assert.deepEqual(pool.originsOf([a, b, c, ids(9n)[0]]), ['play-a:cache', 'play-b:cache']);
});

/** The hashes of a reservation's victims (null: no reservation). */
function victimHashes(table: BlockIds, reservation: { victims: number[] } | null): bigint[] | null {
  return reservation === null ? null : reservation.victims.map((id) => table.hashOf(id));
}
