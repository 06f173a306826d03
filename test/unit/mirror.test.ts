// Unit tests of the router's strict residency mirror (MIR-1..3): what it accepts, what it rejects
// (duplicate store, unknown removal, broken chain, event-id gap or reorder, unknown rank) and how it says so,
// for events of hashes (a log) and of block ids (the simulator's engines).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KvEvent, RankRef, Tier } from '../../src/events/model';
import { EventIdStart, EventStreamError, ResidencyMirror, StreamErrorDetail } from '../../src/router/mirror';
import { EventFeed, hashes, rankOf, storedBlocks } from './fixtures';
import { BlockIds, NO_BLOCK_ID } from '../../src/collections/blockIds';
import { RemovedIds, StoredIds, plainEvent, releaseEvent } from '../../src/events/model';

const W1 = rankOf(1);
const W2 = rankOf(2);

/** A mirror that knows workers 1 (rank index 0) and 2 (rank index 1), fed in event-id order. */
function mirrorWithFeed(start: EventIdStart = 'zero'): { mirror: ResidencyMirror; feed: EventFeed } {
  const mirror = new ResidencyMirror(start);
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  return { mirror, feed: new EventFeed((event) => mirror.apply(event)) };
}

function storedEvent(rank: RankRef, event_id: number, tier: Tier, blockHashes: bigint[]): KvEvent {
  return { ...rank, event_id, tier, data: { type: 'Stored', parent_hash: null, start_position: null, blocks: storedBlocks(blockHashes) } };
}

function clearedEvent(rank: RankRef, event_id: number): KvEvent {
  return { ...rank, event_id, tier: 'Device', data: { type: 'Cleared' } };
}

/** Asserts the call throws an EventStreamError with exactly this detail, and returns its message. */
function rejection(call: () => void, detail: StreamErrorDetail): string {
  let caught: unknown;
  try {
    call();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof EventStreamError, `expected an EventStreamError, got ${String(caught)}`);
  assert.deepEqual(caught.detail, detail);
  assert.equal(caught.name, 'EventStreamError');
  return caught.message;
}

test('stores and removals build each tier of each rank', () => {
  const { mirror, feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(1, 2, 3));
  feed.store(W1, 'HostPinned', hashes(3, 4));
  feed.remove(W1, 'Device', hashes(2));
  assert.deepEqual(mirror.device.blocksOf(0), hashes(1, 3));
  assert.deepEqual(mirror.host.blocksOf(0), hashes(3, 4));
  assert.equal(mirror.device.has(0, 2n), false);
  assert.equal(mirror.device.count(1), 0);
  assert.equal(mirror.appliedEvents, 3);
  assert.equal(mirror.rankIndex(W2), 1);
  assert.equal(mirror.rankIndex(rankOf(3)), undefined);
});

test('a block stored on two ranks is held by both until each removes it', () => {
  const { mirror, feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(7));
  feed.store(W2, 'Device', hashes(7));
  assert.deepEqual([...mirror.device.holdersOf(7n)], [0, 1]);
  feed.remove(W1, 'Device', hashes(7));
  assert.deepEqual([...mirror.device.holdersOf(7n)], [1]);
  assert.equal(mirror.device.has(1, 7n), true);
  feed.remove(W2, 'Device', hashes(7));
  assert.equal(mirror.device.holdersOf(7n).size, 0);
});

test('a Stored of a block the rank already holds in that tier is rejected, naming everything', () => {
  const { feed } = mirrorWithFeed();
  feed.store(W1, 'HostPinned', hashes(5));
  const message = rejection(() => feed.store(W1, 'HostPinned', hashes(6, 5)), {
    violation: 'duplicate-store',
    worker_id: 1,
    dp_rank: 0,
    event_id: 1,
    tier: 'HostPinned',
    block_hash: 5n,
    expected_event_id: null,
  });
  assert.equal(
    message,
    'KV event stream rejected: duplicate Stored: the rank already holds this block in that tier — ' +
      'worker 1, dp rank 0, event 1, tier HostPinned, block 5',
  );
});

test('a rejected Stored changes nothing, even for its valid blocks', () => {
  const { mirror, feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(5));
  assert.throws(() => feed.store(W1, 'Device', hashes(6, 5)), EventStreamError);
  assert.equal(mirror.device.has(0, 6n), false);
  assert.equal(mirror.appliedEvents, 1);
});

test('a Stored listing one block twice is a duplicate store', () => {
  const { feed } = mirrorWithFeed();
  const detail = { violation: 'duplicate-store', worker_id: 2, dp_rank: 0, event_id: 0, tier: 'Device', block_hash: 9n, expected_event_id: null } as const;
  rejection(() => feed.store(W2, 'Device', hashes(8, 9, 9)), detail);
});

test('the same block in the other tier, or on another rank, is not a duplicate', () => {
  const { mirror, feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(5));
  feed.store(W1, 'HostPinned', hashes(5));
  feed.store(W2, 'HostPinned', hashes(5));
  assert.equal(mirror.device.has(0, 5n) && mirror.host.has(0, 5n) && mirror.host.has(1, 5n), true);
});

test('a Removed of a block the rank does not hold in that tier is rejected', () => {
  const { feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(3));
  const message = rejection(() => feed.remove(W1, 'HostPinned', hashes(3)), {
    violation: 'unknown-removal',
    worker_id: 1,
    dp_rank: 0,
    event_id: 1,
    tier: 'HostPinned',
    block_hash: 3n,
    expected_event_id: null,
  });
  assert.equal(
    message,
    'KV event stream rejected: Removed of a block the rank does not hold in that tier — ' +
      'worker 1, dp rank 0, event 1, tier HostPinned, block 3',
  );
});

test('a Removed of a block only another rank holds is rejected', () => {
  const { mirror, feed } = mirrorWithFeed();
  feed.store(W2, 'Device', hashes(4));
  rejection(() => feed.remove(W1, 'Device', hashes(4)), {
    violation: 'unknown-removal',
    worker_id: 1,
    dp_rank: 0,
    event_id: 0,
    tier: 'Device',
    block_hash: 4n,
    expected_event_id: null,
  });
  assert.equal(mirror.device.has(1, 4n), true);
});

test('a Removed listing one block twice is an unknown removal of that block', () => {
  const { feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(3, 4));
  const detail = { violation: 'unknown-removal', worker_id: 1, dp_rank: 0, event_id: 1, tier: 'Device', block_hash: 4n, expected_event_id: null } as const;
  rejection(() => feed.remove(W1, 'Device', hashes(4, 3, 4)), detail);
});

test('an event id gap (a lost event) is rejected with the expected id', () => {
  const { mirror } = mirrorWithFeed();
  mirror.apply(storedEvent(W1, 0, 'Device', hashes(1)));
  const message = rejection(() => mirror.apply(storedEvent(W1, 2, 'Device', hashes(2))), {
    violation: 'event-id-gap',
    worker_id: 1,
    dp_rank: 0,
    event_id: 2,
    tier: 'Device',
    block_hash: 2n,
    expected_event_id: 1,
  });
  assert.equal(
    message,
    'KV event stream rejected: event id out of sequence: an event was lost, duplicated or reordered — ' +
      'worker 1, dp rank 0, event 2 (expected event 1), tier Device, block 2',
  );
});

test('reordered or repeated event ids are rejected', () => {
  const { mirror } = mirrorWithFeed();
  const reordered = { violation: 'event-id-gap', worker_id: 1, dp_rank: 0, event_id: 1, tier: 'Device', block_hash: 2n, expected_event_id: 0 } as const;
  rejection(() => mirror.apply(storedEvent(W1, 1, 'Device', hashes(2))), reordered);
  mirror.apply(storedEvent(W1, 0, 'Device', hashes(1)));
  const repeated = { ...reordered, event_id: 0, block_hash: 3n, expected_event_id: 1 };
  rejection(() => mirror.apply(storedEvent(W1, 0, 'Device', hashes(3))), repeated);
});

test('each rank numbers its events on its own, across both tiers', () => {
  const { mirror } = mirrorWithFeed();
  mirror.apply(storedEvent(W1, 0, 'Device', hashes(1)));
  mirror.apply(storedEvent(W2, 0, 'HostPinned', hashes(1)));
  mirror.apply(storedEvent(W1, 1, 'HostPinned', hashes(1)));
  mirror.apply(storedEvent(W2, 1, 'Device', hashes(2)));
  assert.equal(mirror.appliedEvents, 4);
});

test("with a 'first-seen' start the first id of each rank sets the sequence", () => {
  const { mirror } = mirrorWithFeed('first-seen');
  mirror.apply(storedEvent(W1, 41, 'Device', hashes(1)));
  mirror.apply(storedEvent(W2, 7, 'Device', hashes(1)));
  mirror.apply(storedEvent(W1, 42, 'Device', hashes(2)));
  rejection(() => mirror.apply(clearedEvent(W1, 44)), {
    violation: 'event-id-gap',
    worker_id: 1,
    dp_rank: 0,
    event_id: 44,
    tier: 'Device',
    block_hash: null,
    expected_event_id: 43,
  });
});

test("with a 'zero' start a stream must begin at event 0", () => {
  const { mirror } = mirrorWithFeed('zero');
  const message = rejection(() => mirror.apply(clearedEvent(W1, 41)), {
    violation: 'event-id-gap',
    worker_id: 1,
    dp_rank: 0,
    event_id: 41,
    tier: 'Device',
    block_hash: null,
    expected_event_id: 0,
  });
  assert.match(message, /event 41 \(expected event 0\), tier Device, no block$/);
});

test('an event from a rank the mirror does not know is rejected', () => {
  const { mirror } = mirrorWithFeed();
  const message = rejection(() => mirror.apply(storedEvent(rankOf(1, 1), 0, 'HostPinned', hashes(8))), {
    violation: 'unknown-rank',
    worker_id: 1,
    dp_rank: 1,
    event_id: 0,
    tier: 'HostPinned',
    block_hash: 8n,
    expected_event_id: null,
  });
  assert.equal(
    message,
    'KV event stream rejected: event from a rank the router does not know — worker 1, dp rank 1, event 0, tier HostPinned, block 8',
  );
});

test('Cleared drops both tiers of that rank only, and is not an error', () => {
  const { mirror, feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(1, 2));
  feed.store(W1, 'HostPinned', hashes(2, 3));
  feed.store(W2, 'Device', hashes(1));
  feed.clear(W1, 'Device');
  assert.equal(mirror.device.count(0), 0);
  assert.equal(mirror.host.count(0), 0);
  assert.deepEqual([...mirror.device.holdersOf(1n)], [1]);
  assert.equal(mirror.host.holdersOf(3n).size, 0);
  // The rank may store the same blocks again: they are no longer held.
  feed.store(W1, 'HostPinned', hashes(2, 3));
  assert.deepEqual(mirror.host.blocksOf(0), hashes(2, 3));
});

test('dropping a rank forgets its residency and its stream; re-adding it starts at event 0', () => {
  const { mirror, feed } = mirrorWithFeed();
  feed.store(W1, 'Device', hashes(1));
  feed.store(W1, 'HostPinned', hashes(2));
  feed.store(W2, 'HostPinned', hashes(2));
  mirror.dropRank(0);
  assert.equal(mirror.rankIndex(W1), undefined);
  assert.equal(mirror.device.holdersOf(1n).size, 0);
  assert.deepEqual([...mirror.host.holdersOf(2n)], [1]);
  assert.throws(() => feed.store(W1, 'Device', hashes(3)), /event from a rank the router does not know/);
  mirror.dropRank(0); // dropping twice is harmless
  mirror.addRank(W1, 2);
  feed.restart(W1);
  feed.store(W1, 'Device', hashes(1));
  assert.deepEqual(mirror.device.blocksOf(2), hashes(1));
});

function chainedStore(rank: RankRef, event_id: number, tier: Tier, blockHashes: bigint[], parent: bigint | null, start: number | null): KvEvent {
  return { ...rank, event_id, tier, data: { type: 'Stored', parent_hash: parent, start_position: start, blocks: storedBlocks(blockHashes) } };
}

test('MIR-2 chain: a Stored that continues a held parent at the next position is accepted', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.apply(chainedStore(W1, 0, 'HostPinned', [10n, 11n], null, 0));
  mirror.apply(chainedStore(W1, 1, 'HostPinned', [12n], 11n, 2));
  assert.equal(mirror.host.has(0, 12n), true);
});

test('MIR-2 chain: a Stored whose parent the rank does not hold in that tier is rejected as a broken chain', () => {
  for (const [label, setup] of [
    ['never stored', [] as KvEvent[]],
    ['held only in the other tier', [chainedStore(W1, 0, 'Device', [10n], null, 0)]],
    ['held only by another rank', [chainedStore(W2, 0, 'HostPinned', [10n], null, 0)]],
  ] as const) {
    const mirror = new ResidencyMirror();
    mirror.addRank(W1, 0);
    mirror.addRank(W2, 1);
    for (const event of setup) mirror.apply(event);
    const event_id = setup.filter((event) => event.worker_id === W1.worker_id).length;
    const message = rejection(() => mirror.apply(chainedStore(W1, event_id, 'HostPinned', [11n, 12n], 10n, 1)), {
      violation: 'broken-chain',
      worker_id: 1,
      dp_rank: 0,
      event_id,
      tier: 'HostPinned',
      block_hash: 10n,
      expected_event_id: null,
    });
    assert.match(message, /Stored whose parent block the rank does not hold in that tier/, label);
    assert.equal(mirror.host.has(0, 11n), false, `${label}: nothing of a rejected Stored is applied`);
  }
});

test('MIR-2 chain: a start position that does not follow the parent, or a parentless Stored past position 0, is rejected', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.apply(chainedStore(W1, 0, 'HostPinned', [10n, 11n], null, 0));
  rejection(() => mirror.apply(chainedStore(W1, 1, 'HostPinned', [12n], 11n, 3)), {
    violation: 'broken-chain', worker_id: 1, dp_rank: 0, event_id: 1, tier: 'HostPinned', block_hash: 11n, expected_event_id: null,
  });
  const other = new ResidencyMirror();
  other.addRank(W1, 0);
  rejection(() => other.apply(chainedStore(W1, 0, 'Device', [20n], null, 4)), {
    violation: 'broken-chain', worker_id: 1, dp_rank: 0, event_id: 0, tier: 'Device', block_hash: 20n, expected_event_id: null,
  });
});

test('MIR-2 chain: after the parent is removed, a child Stored naming it is rejected', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.apply(chainedStore(W1, 0, 'HostPinned', [10n], null, 0));
  mirror.apply({ ...W1, event_id: 1, tier: 'HostPinned', data: { type: 'Removed', block_hashes: [10n] } });
  rejection(() => mirror.apply(chainedStore(W1, 2, 'HostPinned', [11n], 10n, 1)), {
    violation: 'broken-chain', worker_id: 1, dp_rank: 0, event_id: 2, tier: 'HostPinned', block_hash: 10n, expected_event_id: null,
  });
});

/** The broken-chain rejection of event `event_id` of `rank` in `tier`, naming `block`. */
function movedBlock(rank: RankRef, event_id: number, tier: Tier, block: bigint): StreamErrorDetail {
  return { violation: 'broken-chain', ...rank, event_id, tier, block_hash: block, expected_event_id: null };
}

test('MIR-2 chain: a block held anywhere keeps its position, in every tier and rank (the issue\'s log: 13 at 2 under 12, then at 1 under 11)', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  mirror.apply(chainedStore(W1, 0, 'Device', [11n, 12n, 13n], null, 0));
  const message = rejection(() => mirror.apply(chainedStore(W1, 1, 'HostPinned', [11n, 13n], null, 0)), movedBlock(W1, 1, 'HostPinned', 13n));
  assert.match(message, /Stored that puts a block some rank holds at another position or under another parent than it was stored at/);
  assert.equal(mirror.host.count(0), 0, 'nothing of a rejected Stored is applied');
  // Another rank: the same block at another position, as the continuation of a block it holds.
  mirror.apply(chainedStore(W2, 0, 'Device', [30n], null, 0));
  rejection(() => mirror.apply(chainedStore(W2, 1, 'Device', [13n], 30n, 1)), movedBlock(W2, 1, 'Device', 13n));
  // The block at its own position and under its own parent is accepted, in the other tier and rank alike.
  mirror.apply(chainedStore(W1, 1, 'HostPinned', [11n, 12n, 13n], null, 0));
  mirror.apply(chainedStore(W2, 1, 'Device', [11n, 12n, 13n], null, 0));
  assert.equal(mirror.device.count(1), 4);
});

test('MIR-2 chain: a block held anywhere keeps its parent: at its own position under another parent is a broken chain', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n, 11n, 12n], null, 0));
  mirror.apply(chainedStore(W2, 0, 'Device', [20n, 21n], null, 0));
  // 12 at position 2 as it should be, under the parent the event names, or the block before it in the run.
  rejection(() => mirror.apply(chainedStore(W2, 1, 'Device', [12n], 21n, 2)), movedBlock(W2, 1, 'Device', 12n));
  rejection(() => mirror.apply(chainedStore(W2, 1, 'Device', [22n, 12n], 20n, 1)), movedBlock(W2, 1, 'Device', 12n));
  assert.equal(mirror.device.count(1), 2, 'nothing of a rejected Stored is applied');
  mirror.apply(chainedStore(W2, 1, 'HostPinned', [10n, 11n, 12n], null, 0));
});

test('MIR-2 chain: a Stored that gives no position says nothing of where its blocks stand, and a block it stores first is placed by the next that does', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n, 11n, 12n], null, 0));
  mirror.apply(chainedStore(W2, 0, 'Device', [20n, 12n], null, null));
  mirror.apply(chainedStore(W2, 1, 'HostPinned', [11n, 12n], null, null));
  assert.deepEqual(mirror.device.blocksOf(1), [12n, 20n]);
  // Blocks first stored without positions: the first Stored that gives them places them.
  mirror.apply(chainedStore(W1, 1, 'Device', [40n, 41n], null, null));
  mirror.apply(chainedStore(W1, 2, 'HostPinned', [40n, 41n], null, 0));
  rejection(() => mirror.apply(chainedStore(W2, 2, 'Device', [41n], 20n, 1)), movedBlock(W2, 2, 'Device', 41n));
});

test('MIR-2 chain: a chain of thousands of blocks, one Stored each, stored again in the other tier at its places is accepted', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  const blocks = 5_000;
  for (let i = 0; i < blocks; i++) mirror.apply(chainedStore(W1, i, 'Device', [BigInt(1_000 + i)], i === 0 ? null : BigInt(999 + i), i));
  for (let i = 0; i < blocks; i++) mirror.apply(chainedStore(W1, blocks + i, 'HostPinned', [BigInt(1_000 + i)], i === 0 ? null : BigInt(999 + i), i));
  assert.equal(mirror.host.count(0), blocks);
  mirror.addRank(W2, 1);
  rejection(() => mirror.apply(chainedStore(W2, 0, 'Device', [7n, BigInt(999 + blocks)], null, 0)), movedBlock(W2, 0, 'Device', BigInt(999 + blocks)));
});

test('MIR-2 chain: the first block of a sequence, held anywhere, stored again past position 0 is a broken chain (its position alone says so)', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n], null, 0));
  mirror.apply(chainedStore(W2, 0, 'Device', [20n], null, 0));
  rejection(() => mirror.apply(chainedStore(W2, 1, 'Device', [10n], 20n, 1)), movedBlock(W2, 1, 'Device', 10n));
  mirror.apply(chainedStore(W2, 1, 'HostPinned', [10n], null, 0));
  assert.deepEqual(mirror.host.blocksOf(1), [10n], 'at position 0 again, it is accepted');
});

test('MIR-2 chain: a Stored without positions neither places a block some rank holds elsewhere nor erases where it stands', () => {
  const mirror = new ResidencyMirror();
  for (const [rank, index] of [[W1, 0], [W2, 1], [rankOf(3), 2], [rankOf(4), 3]] as const) mirror.addRank(rank, index);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n, 11n, 12n], null, 0));
  // W2 claims 12 under 20 and 11 as a first block, without positions: nothing is learnt from it.
  mirror.apply(chainedStore(W2, 0, 'Device', [20n, 12n], null, null));
  mirror.apply(chainedStore(W2, 1, 'HostPinned', [11n], null, null));
  // Nothing is forgotten: 11 is still under 10 (its position alone would not tell)…
  rejection(() => mirror.apply(chainedStore(rankOf(4), 0, 'Device', [30n, 11n], null, 0)), movedBlock(rankOf(4), 0, 'Device', 11n));
  // …and nothing was learnt: 12 under 11, at its place, is accepted.
  mirror.apply(chainedStore(rankOf(3), 0, 'Device', [10n, 11n, 12n], null, 0));
  assert.equal(mirror.device.count(2), 3);
});

test('MIR-2 chain: a block nobody held, stored without positions (its id another block\'s before), carries nothing of that block', () => {
  const table = new BlockIds();
  const mirror = new ResidencyMirror('zero', table);
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n, 11n], null, 0));
  const childId = table.idOf(11n);
  mirror.apply({ ...W1, event_id: 1, tier: 'Device', data: { type: 'Removed', block_hashes: [11n] } });
  mirror.apply(chainedStore(W1, 2, 'Device', [99n], null, null));
  assert.equal(table.idOf(99n), childId, '99 has the id 11 had');
  mirror.apply(chainedStore(W2, 0, 'Device', [30n], null, 0));
  mirror.apply(chainedStore(W2, 1, 'Device', [99n], 30n, 1));
  assert.deepEqual(mirror.device.blocksOf(1), [30n, 99n]);
});

test('MIR-2 chain: once no rank holds a block in any tier, it is forgotten and may be stored anywhere', () => {
  const mirror = new ResidencyMirror();
  mirror.addRank(W1, 0);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n, 11n], null, 0));
  mirror.apply({ ...W1, event_id: 1, tier: 'Device', data: { type: 'Removed', block_hashes: [11n] } });
  mirror.apply(chainedStore(W1, 2, 'Device', [11n], null, 0));
  assert.deepEqual(mirror.device.blocksOf(0), [10n, 11n]);
});

test('MIR-2 chain: a child keeps its parent: the parent let go (its id held by the child\'s record, not reused for another block) and stored again is still its parent', () => {
  const table = new BlockIds();
  const mirror = new ResidencyMirror('zero', table);
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n, 11n], null, 0));
  const parentId = table.idOf(10n);
  mirror.apply({ ...W1, event_id: 1, tier: 'Device', data: { type: 'Removed', block_hashes: [10n] } });
  mirror.apply(chainedStore(W2, 0, 'Device', [99n], null, 0));
  assert.equal(table.idOf(10n), parentId, 'no rank holds the parent, but its child\'s record does');
  assert.notEqual(table.idOf(99n), parentId, 'another block gets another id');
  mirror.apply(chainedStore(W2, 1, 'HostPinned', [10n, 11n], null, 0));
  rejection(() => mirror.apply(chainedStore(W2, 2, 'Device', [11n], 99n, 1)), movedBlock(W2, 2, 'Device', 11n));
  assert.deepEqual(mirror.host.blocksOf(1), [10n, 11n]);
});

test('a block\'s record holds its parent while some rank holds the block, in either tier, and lets go when none does (removed or cleared)', () => {
  const table = new BlockIds();
  const mirror = new ResidencyMirror('zero', table);
  mirror.addRank(W1, 0);
  mirror.addRank(W2, 1);
  mirror.apply(chainedStore(W1, 0, 'Device', [10n, 11n], null, 0));
  mirror.apply(chainedStore(W2, 0, 'HostPinned', [10n, 11n], null, 0));
  mirror.apply({ ...W1, event_id: 1, tier: 'Device', data: { type: 'Removed', block_hashes: [10n] } });
  mirror.apply({ ...W2, event_id: 1, tier: 'HostPinned', data: { type: 'Removed', block_hashes: [10n] } });
  assert.notEqual(table.idOf(10n), NO_BLOCK_ID, 'no rank holds the parent; its child\'s record does');
  assert.equal(table.size, 2);
  mirror.apply({ ...W1, event_id: 2, tier: 'Device', data: { type: 'Removed', block_hashes: [11n] } });
  assert.notEqual(table.idOf(10n), NO_BLOCK_ID, 'the child is still held in HostPinned');
  mirror.apply({ ...W2, event_id: 2, tier: 'Device', data: { type: 'Cleared' } });
  assert.equal(table.size, 0, 'no rank holds the child: its record let go of its parent');
  // Stored again under another parent, the child is no moved block: nobody held it.
  mirror.apply(chainedStore(W1, 3, 'Device', [20n, 11n], null, 0));
  assert.deepEqual(mirror.device.blocksOf(0), [11n, 20n]);
});

// Events as the simulator's engines make them: block ids of the mirror's own table.

function idFixture() {
  const table = new BlockIds();
  const mirror = new ResidencyMirror('zero', table);
  mirror.addRank(W1, 0);
  // The engine side holds ids 0..3 for hashes 11..14 (as a request's prompt would).
  const ids = [11n, 12n, 13n, 14n].map((hash) => table.acquire(hash));
  let nextId = 0;
  const stored = (blocks: number[], parent: number, start: number | null): KvEvent => ({ ...W1, event_id: nextId++, tier: 'Device', data: new StoredIds(table, Int32Array.from(blocks), new Int32Array(2 * blocks.length), parent, start) });
  const removed = (blocks: number[]): KvEvent => ({ ...W1, event_id: nextId++, tier: 'Device', data: new RemovedIds(table, Int32Array.from(blocks)) });
  const apply = (event: KvEvent) => {
    mirror.apply(event);
    releaseEvent(event);
  };
  return { table, mirror, ids, stored, removed, apply };
}

test('id events: a chain of Stored and a Removed are applied by id, and the ids live exactly as long as someone holds them', () => {
  const { table, mirror, ids, stored, removed, apply } = idFixture();
  apply(stored([ids[0], ids[1]], NO_BLOCK_ID, 0));
  apply(stored([ids[2]], ids[1], 2));
  assert.deepEqual(mirror.device.blocksOf(0), [11n, 12n, 13n]);
  const removal = removed([ids[2]]);
  assert.deepEqual(plainEvent(removal).data, { type: 'Removed', block_hashes: [13n] }, 'the hashes are made from the ids while the event holds them');
  apply(removal);
  assert.deepEqual(mirror.device.blocksOf(0), [11n, 12n]);
  table.releaseAll(ids); // the engine side lets go: only the mirror's blocks stay
  assert.equal(table.size, 2);
  assert.equal(table.idOf(13n), NO_BLOCK_ID, 'an id no one holds is forgotten');
});

test('a chain past position 32,767 is checked as the first blocks are (positions widen from 16 to 32 bits)', () => {
  const table = new BlockIds();
  const mirror = new ResidencyMirror('zero', table);
  mirror.addRank(W1, 0);
  const ids = Array.from({ length: 40_004 }, (_, i) => table.acquire(BigInt(1_000 + i)));
  let event_id = 0;
  const stored = (blocks: number[], parent: number, start: number): KvEvent => ({ ...W1, event_id: event_id++, tier: 'Device', data: new StoredIds(table, Int32Array.from(blocks), new Int32Array(2 * blocks.length), parent, start) });
  // Positions 0..32,767 fit 16 bits; the next event takes them past it.
  mirror.apply(stored(ids.slice(0, 32_768), NO_BLOCK_ID, 0));
  mirror.apply(stored(ids.slice(32_768, 40_001), ids[32_767], 32_768));
  mirror.apply(stored([ids[40_001]], ids[40_000], 40_001));
  assert.equal(mirror.device.blocksOf(0).length, 40_002);
  rejection(() => mirror.apply(stored([ids[40_002]], ids[40_001], 40_005)), { violation: 'broken-chain', worker_id: W1.worker_id, dp_rank: W1.dp_rank, event_id: 3, tier: 'Device', block_hash: 41_001n, expected_event_id: null });
  // Positions below 32,768 are still known after the widening: a Stored continuing the block at 100 is accepted.
  event_id = 3;
  mirror.apply(stored([ids[40_003]], ids[100], 101));
  assert.equal(mirror.device.blocksOf(0).length, 40_003);
});

test('id events: a duplicate store, an unknown removal and a broken chain are rejected naming the block by its hash', () => {
  const { mirror, ids, stored, removed, apply } = idFixture();
  apply(stored([ids[0]], NO_BLOCK_ID, 0));
  const reject = (event: KvEvent, violation: string, block: bigint) =>
    rejection(() => mirror.apply(event), { violation: violation as StreamErrorDetail['violation'], worker_id: W1.worker_id, dp_rank: W1.dp_rank, event_id: event.event_id, tier: 'Device', block_hash: block, expected_event_id: null });
  reject(stored([ids[0]], NO_BLOCK_ID, 0), 'duplicate-store', 11n);
  const { mirror: fresh, ids: freshIds, stored: freshStored } = idFixture();
  rejection(() => fresh.apply(freshStored([freshIds[1], freshIds[1]], NO_BLOCK_ID, 0)), { violation: 'duplicate-store', worker_id: W1.worker_id, dp_rank: W1.dp_rank, event_id: 0, tier: 'Device', block_hash: 12n, expected_event_id: null });
  const second = idFixture();
  second.apply(second.stored([second.ids[0]], NO_BLOCK_ID, 0));
  rejection(() => second.mirror.apply(second.removed([second.ids[3]])), { violation: 'unknown-removal', worker_id: W1.worker_id, dp_rank: W1.dp_rank, event_id: 1, tier: 'Device', block_hash: 14n, expected_event_id: null });
  const third = idFixture();
  third.apply(third.stored([third.ids[0]], NO_BLOCK_ID, 0));
  rejection(() => third.mirror.apply(third.stored([third.ids[2]], third.ids[1], 2)), { violation: 'broken-chain', worker_id: W1.worker_id, dp_rank: W1.dp_rank, event_id: 1, tier: 'Device', block_hash: 12n, expected_event_id: null });
  const fourth = idFixture();
  fourth.apply(fourth.stored([fourth.ids[0]], NO_BLOCK_ID, 0));
  rejection(() => fourth.mirror.apply(fourth.stored([fourth.ids[1]], fourth.ids[0], 5)), { violation: 'broken-chain', worker_id: W1.worker_id, dp_rank: W1.dp_rank, event_id: 1, tier: 'Device', block_hash: 11n, expected_event_id: null });
  const fifth = idFixture();
  rejection(() => fifth.mirror.apply(fifth.stored([fifth.ids[0]], NO_BLOCK_ID, 3)), { violation: 'broken-chain', worker_id: W1.worker_id, dp_rank: W1.dp_rank, event_id: 0, tier: 'Device', block_hash: 11n, expected_event_id: null });
});

/**
 * The rules of MIR-1/MIR-2 as plain sets and maps by hash, block by block: what a Stored or Removed
 * is rejected for (the first violation, in the mirror's order: duplicates, the chain, a moved block)
 * and what an accepted one records. The mirror checks and records a Stored in one pass per block.
 */
class RuleModel {
  /** "tier rank" → hashes held. */
  private readonly held = new Map<string, Set<bigint>>();
  private readonly positions = new Map<bigint, number>();
  private readonly parents = new Map<bigint, bigint>();

  private of(tier: Tier, rank: number): Set<bigint> {
    const key = `${tier} ${rank}`;
    if (!this.held.has(key)) this.held.set(key, new Set());
    return this.held.get(key)!;
  }
  private heldAnywhere(hash: bigint): boolean {
    return [...this.held.values()].some((set) => set.has(hash));
  }

  /** The violation (kind, block, whether a moved block) of a Stored, or null once recorded. */
  store(tier: Tier, rank: number, parent: bigint | null, start: number | null, blocks: bigint[]): string | null {
    const mine = this.of(tier, rank);
    const seen = new Set<bigint>();
    for (const block of blocks) {
      if (mine.has(block) || seen.has(block)) return `duplicate-store ${block}`;
      seen.add(block);
    }
    let broken: boolean;
    if (parent === null) broken = start !== null && start !== 0;
    else if (!mine.has(parent) || start === 0) broken = true;
    else broken = start !== null && this.positions.has(parent) && this.positions.get(parent)! + 1 !== start;
    if (broken) return `broken-chain ${parent ?? blocks[0] ?? null}`;
    if (start !== null) {
      for (let i = 0; i < blocks.length; i++) {
        const block = blocks[i];
        if (!this.heldAnywhere(block)) continue;
        const claimed = i > 0 ? blocks[i - 1] : parent;
        const position = this.positions.get(block);
        const knownParent = this.parents.get(block);
        if ((position !== undefined && position !== start + i) || (knownParent !== undefined && knownParent !== claimed)) return `moved ${block}`;
      }
    }
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i];
      const claimed = i > 0 ? blocks[i - 1] : parent;
      if (start !== null) {
        this.positions.set(block, start + i);
        if (claimed === null) this.parents.delete(block);
        else this.parents.set(block, claimed);
      } else if (!this.heldAnywhere(block)) {
        this.positions.delete(block);
        this.parents.delete(block);
      }
      mine.add(block);
    }
    return null;
  }

  remove(tier: Tier, rank: number, blocks: bigint[]): string | null {
    const mine = this.of(tier, rank);
    const seen = new Set<bigint>();
    for (const block of blocks) {
      if (!mine.has(block) || seen.has(block)) return `unknown-removal ${block}`;
      seen.add(block);
    }
    for (const block of blocks) mine.delete(block);
    return null;
  }

  holdings(): string[] {
    return [...this.held.entries()].filter(([, set]) => set.size > 0).map(([key, set]) => `${key}: ${[...set].sort((a, b) => (a < b ? -1 : 1)).join(',')}`).sort();
  }
}

test('the mirror rejects and records generated Stored and Removed events as the rules, block by block, do', () => {
  // Four chains of six blocks (0 and 1 share their first two); a Stored continues what its rank holds
  // of a chain, and now and then breaks a rule: a start off by one, another chain's parent or
  // blocks, a block twice, no positions; a Removed names held blocks, or now and then one not held.
  const blockOf = (chain: number, position: number) => BigInt((chain === 1 && position < 2 ? 0 : chain) * 100 + position + 1);
  const op = fc.record({
    rank: fc.nat(1),
    device: fc.boolean(),
    remove: fc.nat(2).map((n) => n === 0),
    chain: fc.nat(3),
    pick: fc.nat(5),
    length: fc.integer({ min: 1, max: 3 }),
    noPositions: fc.nat(4).map((n) => n === 0),
    fault: fc.nat(39),
  });
  fc.assert(
    fc.property(fc.array(op, { minLength: 10, maxLength: 80 }), (ops) => {
      const mirror = new ResidencyMirror('zero');
      const ranks = [W1, W2];
      ranks.forEach((rank, index) => mirror.addRank(rank, index));
      const model = new RuleModel();
      const nextIds = [0, 0];
      for (const [n, { rank, device, remove, chain, pick, length, noPositions, fault }] of ops.entries()) {
        const tier: Tier = device ? 'Device' : 'HostPinned';
        let data: KvEvent['data'];
        let expected: string | null;
        const held = mirror.tier(tier).blocksOf(rank);
        if (remove && held.length > 0) {
          const blocks = fault === 0 ? [blockOf(chain, pick)] : held.slice(pick % held.length, (pick % held.length) + length);
          if (fault === 1) blocks.push(blocks[0]);
          data = { type: 'Removed', block_hashes: blocks };
          expected = model.remove(tier, rank, blocks);
        } else {
          // From the first position of the chain the rank does not hold in that tier (or, a fault, an earlier one).
          let from = 0;
          while (from < 6 && mirror.tier(tier).has(rank, blockOf(chain, from))) from++;
          if (fault === 6) from = Math.min(from, pick);
          const blocks = Array.from({ length: Math.min(length, 6 - from) || 1 }, (_, i) => blockOf(fault === 2 ? (chain + 1) % 4 : chain, Math.min(from + i, 5)));
          if (fault === 3) blocks.push(blocks[0]);
          const parent = from === 0 ? null : blockOf(fault === 4 ? (chain + 2) % 4 : chain, from - 1);
          const start = noPositions ? null : fault === 5 ? from + 1 : from;
          data = { type: 'Stored', parent_hash: parent, start_position: start, blocks: storedBlocks(blocks) };
          expected = model.store(tier, rank, parent, start, blocks);
        }
        let got: string | null = null;
        try {
          mirror.apply({ ...ranks[rank], event_id: nextIds[rank]++, tier, data });
        } catch (error) {
          if (!(error instanceof EventStreamError)) throw error;
          got = `${error.message.includes('another position or under another parent') ? 'moved' : error.detail.violation} ${error.detail.block_hash}`;
        }
        assert.equal(got, expected, `event ${n}`);
        if (got !== null) return;
        const holdings = (['Device', 'HostPinned'] as const).flatMap((each) =>
          [0, 1].map((index) => `${each} ${index}: ${mirror.tier(each).blocksOf(index).join(',')}`).filter((line) => !line.endsWith(': ')),
        );
        assert.deepEqual(holdings.sort(), model.holdings());
      }
    }),
    { numRuns: 500 },
  );
});
