// Unit tests of the KV event model (EVT-1, EVT-2): one id sequence per rank across both tiers,
// and the short descriptions of ranks and events used in messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEvent, RankEventStream, rankLabel } from '../../src/events/model';

test('a rank numbers its events 0, 1, 2, … across both tiers', () => {
  const stream = new RankEventStream({ worker_id: 4, dp_rank: 1 });
  assert.equal(stream.nextEventId, 0);
  const stored = stream.stored('HostPinned', [{ block_hash: 9n, tokens_hash: 9n }], null, 0);
  const removed = stream.removed('Device', [9n]);
  const cleared = stream.cleared('HostPinned');
  assert.deepEqual(
    [stored, removed, cleared].map((event) => [event.event_id, event.worker_id, event.dp_rank, event.tier, event.data.type]),
    [
      [0, 4, 1, 'HostPinned', 'Stored'],
      [1, 4, 1, 'Device', 'Removed'],
      [2, 4, 1, 'HostPinned', 'Cleared'],
    ],
  );
  assert.equal(stream.nextEventId, 3);
});

test('ranks and events are described in a few words', () => {
  const stream = new RankEventStream({ worker_id: 2, dp_rank: 0 });
  assert.equal(rankLabel(stream.rank), 'worker 2 dp rank 0');
  const hashes = [{ block_hash: 1n, tokens_hash: 1n }, { block_hash: 2n, tokens_hash: 2n }];
  assert.equal(describeEvent(stream.stored('HostPinned', hashes, null, 0)), 'HostPinned Stored of 2 block(s) (event 0)');
  assert.equal(describeEvent(stream.removed('Device', [1n])), 'Device Removed of 1 block(s) (event 1)');
  assert.equal(describeEvent(stream.cleared('Device')), 'Device Cleared (event 2)');
});
