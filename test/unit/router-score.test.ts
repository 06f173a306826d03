// Unit tests of the router's cost arithmetic (SCORE-1, SCORE-2, SCORE-4) and load tracking, each
// expectation computed by hand from the formulas of semantics.md §7 (4-token blocks throughout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CandidateScore, Router, RouterSettings } from '../../src/router/router';
import { roundHalfAwayFromZero } from '../../src/router/router';
import { hashRange, hashes, makeRouter, rankOf, requestOf, routerFeed, scriptedDraws } from './fixtures';

/** Per candidate: [worker, device, host, credit, prefill_blocks, decode_blocks, cost]. */
type Row = [number, number, number, number, number, number, number];

function rows(scores: CandidateScore[]): Row[] {
  return scores.map((s) => [s.worker_id, s.device_blocks, s.host_blocks, s.credit, s.prefill_blocks, s.decode_blocks, s.cost]);
}

/**
 * Five workers seen by a request of blocks 1..6 and 26 tokens (6 complete blocks + 2 tokens):
 *   worker 0: Device 1,2    HostPinned 3,4,6    → device 2, host 2 (block 5 missing ends the run)
 *   worker 1: Device 1,2    HostPinned 1,2,3    → device 2, host 1 (1,2 in both tiers count as device)
 *   worker 2: Device –      HostPinned 2,3      → device 0, host 0 (the run must start at block 1)
 *   worker 3: Device 1,3    HostPinned –        → device 1 (the device prefix stops at block 2)
 *   worker 4: Device –      HostPinned 1..6     → device 0, host 6
 */
function fiveWorkers(overrides: Partial<RouterSettings> = {}, draws = scriptedDraws()): Router {
  const router = makeRouter(5, overrides, draws);
  const feed = routerFeed(router);
  feed.store(rankOf(0), 'Device', hashes(1, 2));
  feed.store(rankOf(0), 'HostPinned', hashes(3, 4, 6));
  feed.store(rankOf(1), 'Device', hashes(1, 2));
  feed.store(rankOf(1), 'HostPinned', hashes(1, 2, 3));
  feed.store(rankOf(2), 'HostPinned', hashes(2, 3));
  feed.store(rankOf(3), 'Device', hashes(1, 3));
  feed.store(rankOf(4), 'HostPinned', hashRange(1, 6));
  return router;
}

const SIX_BLOCKS_26_TOKENS = () => requestOf('r', hashRange(1, 6), 26);

// With no load: prefill_blocks = 26 / 4 = 6.5 everywhere; decode_blocks = 0 active + 6 new = 6
// everywhere (the 2 tokens past the last complete block add prefill, not a block, as in Dynamo's
// router); cost = max(6.5 − credit, 0) + 6.
test('device prefix, host run and cost per candidate with the default weights', () => {
  const scores = fiveWorkers().score(SIX_BLOCKS_26_TOKENS());
  assert.deepEqual(rows(scores), [
    [0, 2, 2, 3.5, 6.5, 6, 9], // credit 2 + 0.75 × 2
    [1, 2, 1, 2.75, 6.5, 6, 9.75], // credit 2 + 0.75 × 1
    [2, 0, 0, 0, 6.5, 6, 12.5],
    [3, 1, 0, 1, 6.5, 6, 11.5],
    [4, 0, 6, 4.5, 6.5, 6, 8], // credit 0.75 × 6
  ]);
  assert.deepEqual(
    scores.map((s) => [s.active_prefill_tokens, s.load]),
    [
      [0, 3],
      [0, 3.75],
      [0, 6.5],
      [0, 5.5],
      [0, 2],
    ],
  );
});

test('the placement records the cheapest candidate and its overlaps, rounded half away from zero', () => {
  const placement = fiveWorkers().place(SIX_BLOCKS_26_TOKENS(), 15_000_000);
  assert.equal(placement.worker_id, 4);
  assert.equal(placement.dp_rank, 0);
  assert.equal(placement.device_blocks, 0);
  assert.equal(placement.host_blocks, 6);
  assert.equal(placement.selected_overlap_blocks, 5, '0.75 × 6 = 4.5 rounds to 5');
  assert.equal(placement.best_available_overlap_blocks, 5);
  assert.equal(placement.reported_overlap_tokens, 20, '5 blocks × 4 tokens');
  assert.equal(placement.tied_candidates, 1);
  assert.equal(placement.time_ns, 15_000_000);
  assert.equal(placement.policy, 'kv');
  assert.equal(placement.candidates.length, 5);
});

test('host_cache_hit_weight 1.0 counts host blocks like device blocks', () => {
  assert.deepEqual(
    fiveWorkers({ host_cache_hit_weight: 1.0 }).score(SIX_BLOCKS_26_TOKENS()).map((s) => [s.credit, s.cost]),
    [
      [4, 8.5],
      [3, 9.5],
      [0, 12.5],
      [1, 11.5],
      [6, 6.5],
    ],
  );
});

test('host_cache_hit_weight 0 ignores host blocks, which can make a tie', () => {
  const router = fiveWorkers({ host_cache_hit_weight: 0 }, scriptedDraws(0.9));
  assert.deepEqual(
    router.score(SIX_BLOCKS_26_TOKENS()).map((s) => s.cost),
    [10.5, 10.5, 12.5, 11.5, 12.5],
  );
  // Workers 0 and 1 tie at 10.5; a draw of 0.9 over 2 tied candidates picks the second.
  const placement = router.place(SIX_BLOCKS_26_TOKENS(), 0);
  assert.equal(placement.tied_candidates, 2);
  assert.equal(placement.worker_id, 1);
  assert.equal(placement.selected_overlap_blocks, 2, 'effective overlap 2 + 0 × 1');
});

test('overlap_score_credit scales device blocks only; the reported overlap does not depend on it', () => {
  const router = fiveWorkers({ overlap_score_credit: 2 });
  assert.deepEqual(
    router.score(SIX_BLOCKS_26_TOKENS()).map((s) => [s.credit, s.cost]),
    [
      [5.5, 7], // 2 × 2 + 0.75 × 2
      [4.75, 7.75],
      [0, 12.5],
      [2, 10.5],
      [4.5, 8],
    ],
  );
  const placement = router.place(SIX_BLOCKS_26_TOKENS(), 0);
  assert.equal(placement.worker_id, 0);
  assert.equal(placement.selected_overlap_blocks, 4, '2 + 0.75 × 2 = 3.5 rounds to 4');
  assert.equal(placement.best_available_overlap_blocks, 5, 'worker 4: 0.75 × 6 = 4.5 rounds to 5');
  assert.equal(placement.reported_overlap_tokens, 16);
  assert.deepEqual(
    fiveWorkers({ overlap_score_credit: 0 }).score(SIX_BLOCKS_26_TOKENS()).map((s) => s.cost),
    [11, 11.75, 12.5, 12.5, 8],
  );
});

test('prefill_load_scale multiplies the uncovered prefill only', () => {
  assert.deepEqual(
    fiveWorkers({ prefill_load_scale: 2 }).score(SIX_BLOCKS_26_TOKENS()).map((s) => [s.load, s.cost]),
    [
      [6, 12],
      [7.5, 13.5],
      [13, 19],
      [11, 17],
      [4, 10],
    ],
  );
});

test('a credit larger than the prefill leaves no negative load', () => {
  // Blocks 1..2, 8 tokens: worker 0 holds both in Device. prefill 2, credit 3 × 2 = 6.
  const router = fiveWorkers({ overlap_score_credit: 3 });
  const worker0 = router.score(requestOf('short', hashes(1, 2), 8))[0];
  assert.deepEqual([worker0.credit, worker0.prefill_blocks, worker0.load, worker0.decode_blocks, worker0.cost], [6, 2, 0, 2, 2]);
});

test('overlap rounding is half away from zero', () => {
  assert.equal(roundHalfAwayFromZero(1.5), 2, '2 host blocks × 0.75');
  assert.equal(roundHalfAwayFromZero(2.25), 2, '3 host blocks × 0.75');
  assert.equal(roundHalfAwayFromZero(0.5), 1);
  assert.equal(roundHalfAwayFromZero(2.5), 3);
  assert.equal(roundHalfAwayFromZero(-2.5), -3);
  assert.equal(roundHalfAwayFromZero(-1.4), -1);
  assert.equal(roundHalfAwayFromZero(0), 0);
  assert.equal(roundHalfAwayFromZero(7), 7);
});

test('two host blocks at weight 0.75 report 2 overlap blocks', () => {
  const router = makeRouter(1);
  routerFeed(router).store(rankOf(0), 'HostPinned', hashes(1, 2));
  const placement = router.place(requestOf('r', hashes(1, 2, 3), 12), 0);
  assert.equal(placement.host_blocks, 2);
  assert.equal(placement.selected_overlap_blocks, 2);
  assert.equal(placement.reported_overlap_tokens, 8);
});

/**
 * Two workers; worker 0 holds blocks 1..4 in Device. Requests:
 *   a, b: blocks 1..4, 18 tokens (4 complete blocks + 2 tokens: the 2 tokens are prefill, not a block)
 *   c:    blocks 1, 2, 7, 8, 16 tokens
 */
function loadedPair(): Router {
  const router = makeRouter(2);
  routerFeed(router).store(rankOf(0), 'Device', hashRange(1, 4));
  return router;
}

const requestA = () => requestOf('a', hashRange(1, 4), 18);
const requestB = () => requestOf('b', hashRange(1, 4), 18);
const requestC = () => requestOf('c', hashes(1, 2, 7, 8), 16);

function loadOf(router: Router, worker: number): [number, number] {
  return [router.load.activePrefillTokens(worker), router.load.activeBlocks(worker)];
}

test('placement adds the uncomputed prompt tokens and the request blocks to the rank load', () => {
  const router = loadedPair();
  const a = router.place(requestA(), 0);
  // worker 0: credit 4, prefill 18/4 = 4.5, load 0.5, decode 0 + 4 = 4 → 4.5; worker 1: 4.5 + 4 = 8.5
  assert.deepEqual(a.candidates.map((s) => s.cost), [4.5, 8.5]);
  assert.equal(a.worker_id, 0);
  // Uncomputed: 18 − 4 blocks × 4 = 2 tokens. Active blocks: the 4 complete ones.
  assert.deepEqual(loadOf(router, 0), [2, 4]);
  assert.deepEqual(loadOf(router, 1), [0, 0]);
  assert.equal(router.load.rankOf('a'), 0);

  const b = router.place(requestB(), 0);
  // worker 0: prefill (2 + 18)/4 = 5, load 1, decode 4 active + 0 new = 4 → 5
  assert.deepEqual(rows(b.candidates)[0], [0, 4, 0, 4, 5, 4, 5]);
  assert.equal(b.candidates[0].active_prefill_tokens, 2);
  assert.equal(b.worker_id, 0);
  // Blocks 1..4 are counted once on the rank.
  assert.deepEqual(loadOf(router, 0), [4, 4]);

  const c = router.place(requestC(), 0);
  // worker 0: credit 2, prefill (4 + 16)/4 = 5 → 3; decode 4 + 2 new (7, 8) = 6 → 9
  // worker 1: credit 0, prefill 4 → 4; decode 0 + 4 = 4 → 8
  assert.deepEqual(rows(c.candidates), [
    [0, 2, 0, 2, 5, 6, 9],
    [1, 0, 0, 0, 4, 4, 8],
  ]);
  assert.equal(c.worker_id, 1);
  assert.deepEqual(loadOf(router, 1), [16, 4]);
});

test('prefill-complete drops the prefill tokens; finishing drops the blocks too', () => {
  const router = loadedPair();
  router.place(requestA(), 0);
  router.place(requestB(), 0);
  router.place(requestC(), 0);
  router.prefillComplete('a');
  assert.deepEqual(loadOf(router, 0), [2, 4]);
  router.requestFinished('b');
  assert.deepEqual(loadOf(router, 0), [0, 4], "b's 2 tokens leave; a keeps blocks 1..4");
  router.requestFinished('a');
  assert.deepEqual(loadOf(router, 0), [0, 0]);
  assert.equal(router.load.isActive('a'), false);
  router.requestFinished('a'); // finishing twice, or an unknown request, changes nothing
  router.prefillComplete('unknown');
  assert.deepEqual(loadOf(router, 1), [16, 4]);
  // Request c again: worker 0 is idle now (credit 2, prefill 4 → 2; decode 4 → 6);
  // worker 1 runs c: prefill (16 + 16)/4 = 8 → 8; decode 4 active, all 4 already active → 12.
  assert.deepEqual(router.score(requestOf('c2', hashes(1, 2, 7, 8), 16)).map((s) => s.cost), [6, 12]);
});

test('a busy worker assigned without routing carries load like a placed request', () => {
  const router = loadedPair();
  router.assign(requestOf('busy', hashes(9), 4), rankOf(1));
  assert.deepEqual(loadOf(router, 1), [4, 1]);
  assert.throws(() => router.assign(requestOf('nowhere', [], 4), rankOf(5)), /worker 5 dp rank 0 is not registered/);
  assert.throws(() => router.assign(requestOf('busy', hashes(9), 4), rankOf(1)), /already active/);
});
