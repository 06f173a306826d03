// Unit tests of the router's parts that the scenarios only pass through: the plain-words
// explanation of a placement, setting validation field by field, the residency index and rank
// sets past 32 ranks, block-id bookkeeping of the mirror (ids are freed when the last holder lets
// go, also after a rejected event), the overlap walk once a host run has started, per-rank load
// when a worker leaves, and assigning a request to a given rank. Written from the mutants these
// parts left alive (`npm run mutation`).
import { test } from 'node:test';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { NO_BLOCK_ID, BlockIds } from '../../src/collections/blockIds';
import { describePlacement, explainPlacement } from '../../src/router/explain';
import { ResidencyMirror } from '../../src/router/mirror';
import { RankSetsByBlock } from '../../src/router/rankSets';
import { TierIndex } from '../../src/router/residency';
import type { RouterSettings } from '../../src/router/router';
import { RankEventStream } from '../../src/events/model';
import { hashes, hashRange, makeRouter, rankOf, requestOf, routerFeed, scriptedDraws, storedBlocks } from './fixtures';

// ── explain.ts ────────────────────────────────────────────────────────────────────────────────

test('a placement is explained with what the router saw on the chosen rank and the other costs', () => {
  const router = makeRouter(3);
  const feed = routerFeed(router);
  feed.store(rankOf(0), 'Device', hashes(1));
  feed.store(rankOf(1), 'Device', hashes(1));
  feed.store(rankOf(1), 'HostPinned', hashes(2, 3));
  // 16 tokens, blocks 1..4 (prefill 4 blocks): worker 1 credit 1 + 0.75 × 2 = 2.5 → cost 1.5 + 4.
  const placement = router.place(requestOf('r7', hashRange(1, 4), 16), 15_000_000);
  assert.equal(
    explainPlacement(placement),
    'r7 placed on worker 1 at 15 ms: 1 GPU block(s) + 2 host block(s), cost 5.5 vs 7 on worker 0, 8 on worker 2',
  );
  assert.equal(
    describePlacement(placement),
    [
      'r7 placed on worker 1 at 15 ms: 1 GPU block(s) + 2 host block(s), cost 5.5 vs 7 on worker 0, 8 on worker 2',
      'candidate            GPU  host  credit  prefill  decode  cost',
      'worker 0               1     0       1        4       4     7',
      'worker 1               1     2     2.5        4       4   5.5',
      'worker 2               0     0       0        4       4     8',
    ].join('\n'),
  );
});

test('the explanation names dp ranks other than 0, says when nothing was cached, and names a tie', () => {
  const router = makeRouter(0, {}, scriptedDraws(0.99));
  router.addWorker(5, 2);
  // 1 complete block and 2 tokens: prefill 6 / 4 = 1.5, decode 1 block (the 2 tokens are not a block) → 2.5.
  const placement = router.place(requestOf('tied', hashes(1), 6), 2_000_000);
  assert.equal(
    explainPlacement(placement),
    'tied placed on worker 5 dp rank 1 at 2 ms: nothing cached, cost 2.5 vs 2.5 on worker 5; a seeded draw broke a 2-way tie',
  );
  const lonely = makeRouter(1).place(requestOf('solo', hashes(1), 4), 0);
  assert.equal(explainPlacement(lonely), 'solo placed on worker 0 at 0 ms: nothing cached, cost 2');
});

test('a round-robin placement says the cache was ignored', () => {
  const router = makeRouter(2, { policy: 'round_robin' });
  routerFeed(router).store(rankOf(1), 'Device', hashes(1));
  const placement = router.place(requestOf('rr', hashes(1), 4), 0);
  assert.equal(explainPlacement(placement), 'rr placed on worker 0 at 0 ms: round robin (cache ignored)');
});

// ── router.ts ─────────────────────────────────────────────────────────────────────────────────

test('every router setting is checked: finite and not negative, a known policy, a known choice of kept scores', () => {
  const invalid: [keyof RouterSettings, unknown][] = [
    ['overlap_score_credit', -0.5],
    ['overlap_score_credit', Number.POSITIVE_INFINITY],
    ['host_cache_hit_weight', Number.NaN],
    ['prefill_load_scale', -1],
    ['prefill_load_scale', Number.NaN],
    ['router_temperature', -0.1],
    ['router_temperature', Number.POSITIVE_INFINITY],
    ['block_size', 2.5],
    ['policy', 'least_loaded'],
    ['kept_scores', 'runner_up'],
  ];
  for (const [field, value] of invalid) {
    assert.throws(() => makeRouter(1, { [field]: value }), { name: 'RangeError', message: `router setting ${field} = ${String(value)} is not valid` });
  }
  for (const field of ['overlap_score_credit', 'host_cache_hit_weight', 'prefill_load_scale', 'router_temperature'] as const) {
    assert.doesNotThrow(() => makeRouter(1, { [field]: 0 }), `${field} = 0 is allowed`);
  }
  for (const kept of [undefined, 'all', 'chosen_and_runner_up'] as const) assert.doesNotThrow(() => makeRouter(1, { kept_scores: kept }), `kept_scores ${kept}`);
});

test('the ranks of a data-parallel worker are candidates in dp rank order', () => {
  const router = makeRouter(0);
  router.addWorker(3, 3);
  router.addWorker(1, 2);
  assert.deepEqual(router.ranks, [rankOf(1, 0), rankOf(1, 1), rankOf(3, 0), rankOf(3, 1), rankOf(3, 2)]);
});

test('removing a worker keeps the residency and load of the others', () => {
  const router = makeRouter(2);
  const feed = routerFeed(router);
  feed.store(rankOf(0), 'Device', hashes(1));
  feed.store(rankOf(1), 'Device', hashes(2));
  router.place(requestOf('on-1', hashes(2, 3), 8), 0);
  assert.equal(router.load.rankOf('on-1'), 1);
  router.removeWorker(0);
  assert.equal(router.mirror.device.has(1, 2n), true, "worker 1's Device block 2 is still mirrored");
  assert.equal(router.load.isActive('on-1'), true);
  assert.deepEqual([router.load.activePrefillTokens(1), router.load.activeBlocks(1)], [4, 2]);
  assert.equal(router.load.rankOf('gone'), undefined);
});

test('assign adds a request to the given rank with that rank’s cached blocks', () => {
  const router = makeRouter(2);
  const feed = routerFeed(router);
  feed.store(rankOf(1), 'Device', hashes(1));
  feed.store(rankOf(1), 'HostPinned', hashes(2));
  // 12 tokens, blocks 1..3: worker 1 caches 1 device + 1 host block, so 12 − 2 × 4 = 4 tokens are left.
  router.assign(requestOf('busy', hashes(1, 2, 3), 12), rankOf(1));
  assert.deepEqual([router.load.rankOf('busy'), router.load.activePrefillTokens(1), router.load.activeBlocks(1)], [1, 4, 3]);
  assert.equal(router.load.activePrefillTokens(0), 0);
  assert.throws(() => router.assign(requestOf('nowhere', hashes(1), 4), rankOf(9)), /worker 9 dp rank 0 is not registered with the router/);
});

test('a placement counts device and host blocks as computed prefill', () => {
  const router = makeRouter(1);
  const feed = routerFeed(router);
  feed.store(rankOf(0), 'Device', hashes(1));
  feed.store(rankOf(0), 'HostPinned', hashes(2, 3));
  router.place(requestOf('mixed', hashes(1, 2, 3, 4), 18), 0);
  assert.equal(router.load.activePrefillTokens(0), 18 - 3 * 4);
});

test('once the host run has started, a later Device block does not extend the device prefix', () => {
  const router = makeRouter(1);
  const feed = routerFeed(router);
  feed.store(rankOf(0), 'Device', hashes(1, 3));
  feed.store(rankOf(0), 'HostPinned', hashes(2));
  const [score] = router.score(requestOf('r', hashes(1, 2, 3), 12));
  assert.deepEqual([score.device_blocks, score.host_blocks], [1, 1]);
});

// ── load.ts ───────────────────────────────────────────────────────────────────────────────────

test('a request whose blocks the table did not know leaves no block id behind when it finishes', () => {
  const router = makeRouter(1);
  router.place(requestOf('fresh', hashes(41, 42), 8), 0);
  assert.equal(router.blockIds.idOf(41n) !== NO_BLOCK_ID, true, 'held while the request is active');
  router.requestFinished('fresh');
  assert.equal(router.blockIds.size, 0);
  assert.equal(router.blockIds.idOf(41n), NO_BLOCK_ID);
});

// ── mirror.ts ─────────────────────────────────────────────────────────────────────────────────

/** The event renumbered (a rejected event leaves the stream expecting the same id again). */
function withId<T extends { event_id: number }>(event_id: number, event: T): T {
  return { ...event, event_id };
}

/** A mirror over its own id table with one rank, worker 0 dp rank 0 at index 0. */
function oneRankMirror(start: 'zero' | 'first-seen' | undefined = undefined): { mirror: ResidencyMirror; ids: BlockIds; stream: RankEventStream } {
  const ids = new BlockIds();
  const mirror = start === undefined ? new ResidencyMirror(undefined, ids) : new ResidencyMirror(start, ids);
  mirror.addRank(rankOf(0), 0);
  return { mirror, ids, stream: new RankEventStream(rankOf(0)) };
}

test('the mirror frees a block id when the last tier of the last rank lets the block go', () => {
  const { mirror, ids, stream } = oneRankMirror();
  mirror.apply(stream.stored('Device', storedBlocks(hashes(1, 2, 3)), null, 0));
  mirror.apply(stream.stored('HostPinned', storedBlocks(hashes(1)), null, 0));
  assert.equal(ids.size, 3);
  mirror.apply(stream.removed('Device', hashes(1, 2, 3)));
  assert.equal(ids.size, 1, 'block 1 is still held in host memory');
  mirror.apply(stream.cleared('HostPinned'));
  assert.equal(ids.size, 0);
});

test('a rejected Stored or Removed leaves no block id behind', () => {
  const { mirror, ids, stream } = oneRankMirror();
  mirror.apply(stream.stored('Device', storedBlocks(hashes(1)), null, 0));
  // Each rejected event is event 1 again: a rejection does not advance the stream.
  const duplicate = stream.stored('Device', storedBlocks(hashes(7, 8, 1, 9)), null, 0);
  assert.throws(() => mirror.apply(duplicate), /duplicate Stored/);
  assert.throws(() => mirror.apply(withId(1, stream.stored('Device', storedBlocks(hashes(20, 21)), 99n, 1))), /parent block/);
  assert.throws(() => mirror.apply(withId(1, stream.removed('Device', hashes(1, 30)))), /Removed of a block/);
  assert.equal(ids.size, 1);
  assert.deepEqual(mirror.device.blocksOf(0), [1n]);
  // The failed events left no marks: the same blocks can be stored and removed once each.
  mirror.apply(withId(1, stream.stored('Device', storedBlocks(hashes(7, 8, 9)), 1n, 1)));
  mirror.apply(withId(2, stream.removed('Device', hashes(9, 8, 7, 1))));
  assert.equal(ids.size, 0);
});

test('a Stored larger than 64 blocks, after smaller ones, is checked block by block', () => {
  const { mirror, stream } = oneRankMirror();
  mirror.apply(stream.stored('Device', storedBlocks(hashRange(1, 3)), null, 0));
  mirror.apply(stream.stored('Device', storedBlocks(hashRange(4, 103)), 3n, 3));
  assert.equal(mirror.device.count(0), 103);
  const repeat = [...hashRange(200, 270), 205n];
  assert.throws(() => mirror.apply(stream.stored('Device', storedBlocks(repeat), null, 0)), /duplicate Stored[^]*block 205/);
});

test('the mirror checks event ids from 0 unless told to take the first id seen', () => {
  const { mirror } = oneRankMirror();
  const late = withId(4, new RankEventStream(rankOf(0)).cleared('Device'));
  assert.throws(() => mirror.apply(late), /event id out of sequence[^]*\(expected event 0\)/);
});

test('a chain continues from the position of its parent, counted from the start of its Stored', () => {
  const { mirror: first, stream: firstStream } = oneRankMirror();
  first.apply(firstStream.stored('Device', storedBlocks(hashes(1)), null, 0));
  assert.throws(() => first.apply(firstStream.stored('Device', storedBlocks(hashes(2)), 1n, 2)), /does not follow the parent/, 'the parent is at position 0');
  const { mirror, stream } = oneRankMirror();
  mirror.apply(stream.stored('Device', storedBlocks(hashes(1, 2, 3)), null, 0));
  mirror.apply(stream.stored('Device', storedBlocks(hashes(4)), 3n, 3));
  const skipped = stream.stored('Device', storedBlocks(hashes(5)), 4n, 5);
  assert.throws(() => mirror.apply(skipped), /start position does not follow the parent/);
  // A parent stored without positions accepts any start; its children then have positions again.
  const { mirror: loose, stream: looseStream } = oneRankMirror();
  loose.apply(looseStream.stored('Device', storedBlocks(hashes(1)), null, null));
  loose.apply(looseStream.stored('Device', storedBlocks(hashes(2)), 1n, 7));
  loose.apply(looseStream.stored('Device', storedBlocks(hashes(3)), 2n, 8));
  assert.throws(() => loose.apply(looseStream.stored('Device', storedBlocks(hashes(4)), 3n, 8)), /does not follow the parent/);
  // Without a start position the child is accepted after any parent; its own position is unknown.
  loose.apply(withId(3, looseStream.stored('Device', storedBlocks(hashes(4)), 3n, null)));
  loose.apply(withId(4, looseStream.stored('Device', storedBlocks(hashes(5)), 4n, 42)));
  assert.equal(loose.device.count(0), 5);
});

test('a rejected event without blocks names no block', () => {
  const { mirror, stream } = oneRankMirror();
  const empty = withId(3, stream.stored('Device', [], null, null));
  assert.throws(() => mirror.apply(empty), (error: unknown) => error instanceof Error && /event 3 \(expected event 0\), tier Device, no block$/.test(error.message));
});

test('a Stored of a parent never seen anywhere is a broken chain naming that parent', () => {
  const { mirror, stream } = oneRankMirror();
  assert.throws(() => mirror.apply(stream.stored('HostPinned', storedBlocks(hashes(2)), 77n, 1)), /broken|parent block[^]*tier HostPinned, block 77/);
});

// ── residency.ts and rankSets.ts ─────────────────────────────────────────────────────────────

test('a tier index answers by hash and lists a rank’s blocks in ascending hash order', () => {
  const ids = new BlockIds();
  const index = new TierIndex(ids);
  for (const hash of [30n, 2n, 18_446_744_073_709_551_557n, 11n]) index.add(1, hash);
  index.add(2, 11n);
  assert.deepEqual(index.blocksOf(1), [2n, 11n, 30n, 18_446_744_073_709_551_557n]);
  assert.deepEqual([...index.holdersOf(11n)], [1, 2]);
  assert.deepEqual([...index.holdersOf(999n)], []);
  assert.deepEqual([index.has(1, 30n), index.has(2, 30n), index.has(1, 999n)], [true, false, false]);
  assert.deepEqual([index.holdsId(1, NO_BLOCK_ID), index.unheldId(NO_BLOCK_ID)], [false, true]);
  index.add(1, 30n);
  assert.equal(index.count(1), 4, 'adding a held block again changes nothing');
  index.remove(1, 30n);
  index.remove(1, 30n);
  index.remove(1, 999n);
  index.remove(3, 11n);
  assert.deepEqual([index.count(1), index.count(2), index.count(3)], [3, 1, 0], 'removing a block a rank does not hold changes nothing');
  assert.deepEqual([...index.holdersOf(11n)], [1, 2]);
  assert.equal(index.unheldId(ids.idOf(11n)), false);
  index.remove(1, 11n);
  index.remove(2, 11n);
  assert.equal(ids.idOf(11n), NO_BLOCK_ID, 'the last holder freed the id');
  index.clearRank(1);
  assert.deepEqual([index.blocksOf(1), index.count(1), ids.size], [[], 0, 0]);
});

test('a tier index checks every rank’s count against the blocks it holds in one walk, and fails loudly when they disagree', () => {
  const ids = new BlockIds();
  const index = new TierIndex(ids);
  for (const hash of [5n, 6n, 7n]) index.add(0, hash);
  for (const hash of [7n, 5n]) index.add(40, hash);
  index.add(2, 6n);
  assert.deepEqual([index.blocksOf(0), index.blocksOf(40), index.blocksOf(2), index.blocksOf(1)], [[5n, 6n, 7n], [5n, 7n], [6n], []]);
  index.checkCounts(41);
  (index as unknown as { heldCount: number[] }).heldCount[40] = 1;
  index.checkCounts(3); // ranks past the count asked for are left out
  assert.throws(() => index.checkCounts(41), /the residency index counts 1 blocks on rank 40 but holds 2/);
  (index as unknown as { heldCount: number[] }).heldCount[0] = 2;
  assert.throws(() => index.checkCounts(41), /counts 2 blocks on rank 0 but holds 3/);
});

test('rank sets hold ranks past 32 and 64 for many blocks, and widening keeps every block', () => {
  const sets = new RankSetsByBlock();
  for (let id = 0; id < 5; id++) sets.add(id, id);
  sets.add(1, 33);
  sets.add(4, 70);
  sets.add(7, 95);
  sets.add(9, 2);
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map((id) => sets.ranks(id)), [[0], [1, 33], [2], [3], [4, 70], [], [], [95]]);
  assert.deepEqual([sets.has(1, 33), sets.has(1, 65), sets.has(4, 70), sets.has(4, 38), sets.has(20, 70), sets.has(3, 200), sets.has(0, 97)], [true, false, true, false, false, false, false]);
  // Every id without ranks is empty, also right after one with ranks and past the last one stored.
  for (let id = 5; id <= 40; id++) {
    if (id === 7 || id === 9) continue;
    assert.equal(sets.isEmpty(id), true, `id ${id} is empty`);
    assert.deepEqual(sets.ranks(id), [], `id ${id} has no ranks`);
  }
  assert.equal(sets.isEmpty(500), true);
  // Deleting a rank a block does not have, even past the last word, touches no other block.
  sets.delete(0, 97);
  sets.delete(4, 38);
  sets.delete(9, 1);
  assert.deepEqual([sets.ranks(0), sets.ranks(1), sets.ranks(4), sets.ranks(9)], [[0], [1, 33], [4, 70], [2]]);
  // A low rank after widening, and a block id far past the others, keep everything in place.
  sets.add(2, 5);
  sets.add(20, 1);
  assert.deepEqual([sets.ranks(1), sets.ranks(2), sets.ranks(7), sets.ranks(20)], [[1, 33], [2, 5], [95], [1]]);
  sets.delete(4, 4);
  assert.deepEqual([sets.ranks(4), sets.isEmpty(4)], [[70], false]);
  sets.delete(4, 70);
  assert.equal(sets.isEmpty(4), true);
  const seen: number[] = [];
  sets.forEachRank(1, (rank) => seen.push(rank));
  sets.forEachRank(300, (rank) => seen.push(rank));
  assert.deepEqual(seen, [1, 33]);
});

test('rank sets behave as a set of ranks per block through any sequence of adds and deletes (one rank inline, several in a row of bits)', () => {
  // Few blocks and long sequences, so that blocks gather three and more ranks and lose them again
  // (fast-check's default size would keep sequences to about ten operations over many blocks).
  // Half the sequences keep to ranks below 32 (rows of one word, probed past it), the rest reach 300.
  const sequence = fc.oneof(fc.nat(31), fc.oneof(fc.nat(3), fc.nat(40), fc.nat(300))).chain((rank) => {
    const ranks = rank < 32 ? fc.nat(31) : fc.oneof(fc.nat(3), fc.nat(40), fc.nat(300));
    return fc.array(fc.record({ add: fc.boolean(), id: fc.nat(5), rank: ranks }), { minLength: 10, maxLength: 120, size: 'max' });
  });
  fc.assert(
    fc.property(sequence, (ops) => {
      const sets = new RankSetsByBlock();
      const model = new Map<number, Set<number>>();
      for (const { add, id, rank } of ops) {
        const ranks = model.get(id) ?? new Set<number>();
        model.set(id, ranks);
        if (add) {
          sets.add(id, rank);
          ranks.add(rank);
        } else {
          sets.delete(id, rank);
          ranks.delete(rank);
        }
        for (let other = 0; other <= 6; other++) {
          const expected = [...(model.get(other) ?? [])].sort((a, b) => a - b);
          assert.deepEqual(sets.ranks(other), expected, `block ${other}`);
          assert.equal(sets.isEmpty(other), expected.length === 0, `block ${other} empty`);
          for (const probe of [0, 1, 2, 3, rank, rank + 1, 40, 64, 299]) assert.equal(sets.has(other, probe), expected.includes(probe), `block ${other} has ${probe}`);
        }
      }
    }),
    { numRuns: 300, seed: 1893 },
  );
});
