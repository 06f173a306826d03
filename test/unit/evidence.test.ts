// Unit tests of scenario evidence from a router-level replay: timeline, residency strips (router
// view vs engine truth), plain-words decisions, measurements and the canonical digest (DET-1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyEvidence, evidenceFromComputation, evidenceFromRouterReplay, measurement, parseEvidence, residencySpans } from '../../src/report/evidence';
import { lagReplay } from '../support/replays';

const MS = 1_000_000;

test('the lag scenario: emitted at 10 ms, visible at 15 ms, placed on its owner with the reason in words', () => {
  const evidence = evidenceFromRouterReplay(lagReplay(), 1893);
  assert.equal(evidence.simulation, 'router-replay');
  assert.equal(evidence.seed, 1893);
  assert.match(evidence.digest!, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(evidence.ranks, [{ worker_id: 0, dp_rank: 0 }, { worker_id: 1, dp_rank: 0 }]);
  assert.deepEqual(evidence.timeline.arrivals, [{ request_id: 'r1', at_ns: 15 * MS }]);
  assert.deepEqual(evidence.timeline.emissions, [
    { worker_id: 1, dp_rank: 0, at_ns: 10 * MS, tier: 'HostPinned', events: ['Stored 4 blocks'], event_ids: [0], visible_ns: 15 * MS, fate: 'applied' },
  ]);
  assert.deepEqual(evidence.timeline.transfers, []);
  assert.equal(
    evidence.timeline.placements[0].sentence,
    'r1 placed on worker 1 at 15 ms: 4 host block(s), cost 9 vs 10 on worker 0 — host blocks visible to the router since 15 ms (emitted at 10 ms)',
  );
  assert.deepEqual(evidence.residency, [
    { worker_id: 1, dp_rank: 0, view: 'engine', tier: 'HostPinned', from_ns: 10 * MS, to_ns: null, blocks: 4 },
    { worker_id: 1, dp_rank: 0, view: 'router', tier: 'HostPinned', from_ns: 15 * MS, to_ns: null, blocks: 4 },
  ]);
});

test('the same replay gives the same digest; one extra event changes it', () => {
  const a = evidenceFromRouterReplay(lagReplay(), 1893);
  const b = evidenceFromRouterReplay(lagReplay(), 1893);
  const c = evidenceFromRouterReplay(lagReplay({ extraEvent: true }), 1893);
  assert.equal(a.digest, b.digest);
  assert.deepEqual(a, b);
  assert.notEqual(a.digest, c.digest);
  assert.equal(a.timeline.placements[0].worker_id, c.timeline.placements[0].worker_id, 'the extra event does not change the placement');
});

test('a lost batch changes the engine truth but never the router view', () => {
  const evidence = evidenceFromRouterReplay(lagReplay({ loseStore: true, arrival: '20 ms' }), 7);
  assert.equal(evidence.timeline.emissions[0].fate, 'lost');
  assert.deepEqual(
    evidence.residency.map((s) => s.view),
    ['engine'],
  );
  assert.match(evidence.timeline.placements[0].sentence, /placed on worker 0/);
});

test('a worker leaving drops both views of it at that instant', () => {
  const evidence = evidenceFromRouterReplay(lagReplay({ leaveAt: '16 ms', arrival: '17 ms' }), 1893);
  assert.deepEqual(evidence.timeline.membership, [{ at_ns: 16 * MS, worker_id: 1, change: 'left' }]);
  for (const span of evidence.residency) assert.equal(span.to_ns, 16 * MS);
  assert.deepEqual(evidence.ranks, [{ worker_id: 0, dp_rank: 0 }, { worker_id: 1, dp_rank: 0 }]);
});

test('residency spans: changes at one instant settle together, counts of zero draw nothing', () => {
  const rank = { worker_id: 0, dp_rank: 0 };
  const spans = residencySpans([
    { ...rank, view: 'engine', at_ns: 10, order: 0, op: 'store', tier: 'Device', blocks: ['a', 'b'] },
    { ...rank, view: 'engine', at_ns: 20, order: 0, op: 'remove', tier: 'Device', blocks: ['a'] },
    { ...rank, view: 'engine', at_ns: 20, order: 1, op: 'store', tier: 'Device', blocks: ['a'] },
    { ...rank, view: 'engine', at_ns: 30, order: 0, op: 'store', tier: 'HostPinned', blocks: ['c'] },
    { ...rank, view: 'engine', at_ns: 40, order: 0, op: 'clear' },
  ]);
  assert.deepEqual(
    spans.map((s) => [s.tier, s.from_ns, s.to_ns, s.blocks]),
    [
      ['Device', 10, 40, 2],
      ['HostPinned', 30, 40, 1],
    ],
  );
});

test('measurements read as sentences and must be finite', () => {
  assert.deepEqual(measurement('host blocks counted on worker 1', 4, 'blocks'), {
    label: 'host blocks counted on worker 1',
    value: 4,
    unit: 'blocks',
    text: 'host blocks counted on worker 1 = 4 blocks',
  });
  assert.equal(measurement('H2D wait', 4, 'ms', 'H2D wait 4 ms = 2 × 2 ms solo').text, 'H2D wait 4 ms = 2 × 2 ms solo');
  assert.equal(measurement('cost', 0.1 + 0.2).text, 'cost = 0.3');
  assert.throws(() => measurement('cost', Number.NaN), /not a finite number/);
});

test('evidence round-trips through JSON; anything else is refused', () => {
  const evidence = evidenceFromRouterReplay(lagReplay(), 1893);
  assert.deepEqual(parseEvidence(JSON.stringify(evidence)), evidence);
  assert.deepEqual(parseEvidence(JSON.stringify(emptyEvidence(5))).digest, null);
  assert.throws(() => parseEvidence('{"format":"other"}'), /not a kvqual-evidence\/1 attachment/);
});

test('a computation without a simulation: its kind and a digest of what it computed, which any difference changes', () => {
  const record = { block_size: 4, prompts: [{ tokens: 8, blocks: [{ sequence_hash: '0x01' }, { sequence_hash: '0x02' }] }] };
  const evidence = evidenceFromComputation('blocks', record, 1893, [measurement('complete blocks', 2, 'blocks')]);
  assert.equal(evidence.simulation, 'blocks');
  assert.match(evidence.digest!, /^sha256:[0-9a-f]{64}$/);
  assert.equal(evidence.digest, evidenceFromComputation('blocks', structuredClone(record), 7).digest, 'the digest covers the record only');
  const changed = structuredClone(record);
  changed.prompts[0].blocks[1].sequence_hash = '0x03';
  assert.notEqual(evidenceFromComputation('blocks', changed, 1893).digest, evidence.digest);
  assert.deepEqual(evidence.measurements.map((m) => m.text), ['complete blocks = 2 blocks']);
  assert.deepEqual(evidence.ranks, []);
});
