// Unit tests of how the router chooses (SCORE-3, SCORE-6): round robin, seeded tie-breaks that are
// reproducible per seed and fair across seeds, softmax sampling at temperature > 0, and the
// candidate set as workers come and go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RandomStream } from '../../src/random';
import type { Router, RouterSettings } from '../../src/router/router';
import { NO_DRAWS, hashRange, makeRouter, rankOf, requestOf, routerFeed, scriptedDraws, tieBreakStream } from './fixtures';

/** Places `count` copies of a request one after another, each finishing before the next. */
function placeInTurn(router: Router, count: number, blocks = 2): number[] {
  const chosen: number[] = [];
  for (let i = 0; i < count; i++) {
    const placement = router.place(requestOf(`r${i}`, hashRange(1, blocks), blocks * 4), i);
    chosen.push(placement.worker_id);
    router.requestFinished(`r${i}`);
  }
  return chosen;
}

/**
 * Two workers; worker 0 holds blocks 1..2 in Device. A request of blocks 1..4 (16 tokens) costs
 * max(4 − 2, 0) + 4 = 6 on worker 0 and 4 + 4 = 8 on worker 1: a cost range of 2.
 */
function costs6And8(settings: Partial<RouterSettings>, random: RandomStream): Router {
  const router = makeRouter(2, settings, random);
  routerFeed(router).store(rankOf(0), 'Device', hashRange(1, 2));
  return router;
}

test('round_robin cycles over ranks in (worker, dp rank) order and ignores the cache', () => {
  const router = makeRouter(0, { policy: 'round_robin' });
  router.addWorker(1, 2);
  router.addWorker(0);
  routerFeed(router).store(rankOf(1, 1), 'Device', hashRange(1, 4));
  const chosen: string[] = [];
  for (let i = 0; i < 7; i++) {
    const placement = router.place(requestOf(`rr${i}`, hashRange(1, 4), 16), i);
    assert.equal(placement.policy, 'round_robin');
    assert.equal(placement.tied_candidates, 1);
    chosen.push(`${placement.worker_id}/${placement.dp_rank}`);
  }
  assert.deepEqual(chosen, ['0/0', '1/0', '1/1', '0/0', '1/0', '1/1', '0/0']);
});

test('a unique minimum cost never draws from the random stream', () => {
  // NO_DRAWS throws on any draw: six placements on a clear winner must not touch it.
  const router = costs6And8({}, NO_DRAWS);
  assert.deepEqual(placeInTurn(router, 6, 4), [0, 0, 0, 0, 0, 0]);
});

test('a tie is broken by the draw over tied candidates in (worker, dp rank) order', () => {
  // Two idle workers, blocks 1..2, 8 tokens: both cost 2 + 2 = 4.
  assert.deepEqual(placeInTurn(makeRouter(2, {}, scriptedDraws(0.49, 0.5, 0.99, 0)), 4), [0, 1, 1, 0]);
});

test('tie-breaks are reproducible for a seed', () => {
  for (const seed of [1, 1893, 424242]) {
    const first = placeInTurn(makeRouter(3, {}, tieBreakStream(seed)), 40);
    const second = placeInTurn(makeRouter(3, {}, tieBreakStream(seed)), 40);
    assert.deepEqual(first, second, `seed ${seed}`);
  }
});

test('across seeds every tied worker gets chosen, and a worker that costs more never does', () => {
  const firstChoices = new Set<number>();
  for (let seed = 0; seed < 64; seed++) {
    const router = makeRouter(3, {}, tieBreakStream(seed));
    router.assign(requestOf(`busy-${seed}`, hashRange(50, 51), 8), rankOf(2));
    const placement = router.place(requestOf(`tie-${seed}`, hashRange(1, 2), 8), 0);
    assert.equal(placement.tied_candidates, 2);
    firstChoices.add(placement.worker_id);
  }
  assert.deepEqual([...firstChoices].sort(), [0, 1]);
});

test('temperature > 0 samples the softmax of negated, range-normalised costs', () => {
  // Costs 6 and 8 normalise to 0 and 1. At temperature 1 the weights are 1 and e^-1, so worker 0
  // is drawn while u × (1 + e^-1) < 1, i.e. u < 1 / 1.36788 = 0.73106.
  const warm = costs6And8({ router_temperature: 1 }, scriptedDraws(0.73, 0.74, 0));
  assert.deepEqual(placeInTurn(warm, 3, 4), [0, 1, 0]);
  // At temperature 0.5 the weights are 1 and e^-2: the boundary is 1 / 1.135335 = 0.880797.
  const cool = costs6And8({ router_temperature: 0.5 }, scriptedDraws(0.88, 0.89));
  assert.deepEqual(placeInTurn(cool, 2, 4), [0, 1]);
});

test('temperature > 0 with equal costs draws uniformly', () => {
  // Both idle workers cost 4: weights 1 and 1, so u < 0.5 picks worker 0.
  assert.deepEqual(placeInTurn(makeRouter(2, { router_temperature: 2 }, scriptedDraws(0.4999, 0.5)), 2), [0, 1]);
});

test('temperature > 0 sampling is reproducible for a seed and reaches the dearer worker', () => {
  const sample = (seed: number) => placeInTurn(costs6And8({ router_temperature: 1 }, tieBreakStream(seed)), 60, 4);
  assert.deepEqual(sample(1893), sample(1893));
  const drawn = sample(1893);
  // Worker 1 has probability e^-1 / (1 + e^-1) = 0.269 per draw: 60 draws reach both workers.
  assert.ok(drawn.includes(0) && drawn.includes(1), drawn.join(','));
  assert.notDeepEqual(sample(1), sample(2));
});

test('a removed worker stops being a candidate and leaves nothing behind; it may return', () => {
  const router = makeRouter(2, {}, NO_DRAWS);
  const feed = routerFeed(router);
  feed.store(rankOf(0), 'Device', hashRange(1, 4));
  router.place(requestOf('on-0', hashRange(1, 4), 16), 0);
  router.removeWorker(0);
  assert.deepEqual(router.ranks, [rankOf(1)]);
  assert.equal(router.load.isActive('on-0'), false);
  assert.equal(router.mirror.device.holdersOf(1n).size, 0);
  assert.equal(router.place(requestOf('after', hashRange(1, 4), 16), 0).worker_id, 1);
  router.addWorker(0);
  feed.restart(rankOf(0));
  feed.store(rankOf(0), 'Device', hashRange(1, 4));
  assert.deepEqual(router.ranks, [rankOf(0), rankOf(1)]);
  // Worker 1 runs "after" (4 blocks, 16 tokens uncomputed); worker 0 holds the prefix again.
  assert.equal(router.place(requestOf('back', hashRange(1, 4), 16), 0).worker_id, 0);
});

test('the router refuses bad settings, duplicate workers and placements with no ranks', () => {
  assert.throws(() => makeRouter(1, { host_cache_hit_weight: -1 }), /router setting host_cache_hit_weight = -1 is not valid/);
  assert.throws(() => makeRouter(1, { block_size: 0 }), /router setting block_size = 0 is not valid/);
  assert.throws(() => makeRouter(1, { router_temperature: Number.NaN }), RangeError);
  const router = makeRouter(1);
  assert.throws(() => router.addWorker(0), /worker 0 is already registered/);
  router.removeWorker(0);
  assert.throws(() => router.place(requestOf('lonely', hashRange(1, 1), 4), 0), /the router has no ranks/);
});

test('a tie is drawn over the tied candidates only, skipping a costlier one between them', () => {
  // Three idle workers; worker 1 is busy, so workers 0 and 2 tie and worker 1 sits between them.
  const chosen = [0.99, 0].map((draw) => {
    const router = makeRouter(3, {}, scriptedDraws(draw));
    router.assign(requestOf('busy', hashRange(50, 51), 8), rankOf(1));
    const placement = router.place(requestOf('tie', hashRange(1, 2), 8), 0);
    assert.equal(placement.tied_candidates, 2);
    return placement.worker_id;
  });
  assert.deepEqual(chosen, [2, 0]);
});

/** The default record: the chosen candidate and the runner-up (the test fixtures keep every candidate). */
const TWO: Partial<RouterSettings> = { kept_scores: 'chosen_and_runner_up' };

/** Four workers with different costs for blocks 1..4: worker 2 holds all four, worker 0 two, worker 3 one, worker 1 none. */
function fourCosts(settings: Partial<RouterSettings>): Router {
  const router = makeRouter(4, settings, NO_DRAWS);
  const feed = routerFeed(router);
  feed.store(rankOf(2), 'Device', hashRange(1, 4));
  feed.store(rankOf(0), 'Device', hashRange(1, 2));
  feed.store(rankOf(3), 'Device', hashRange(1, 1));
  return router;
}

test('a placement keeps the chosen candidate and the runner-up in (worker, dp rank) order, or every candidate when asked', () => {
  const request = () => requestOf('r', hashRange(1, 4), 16);
  const all = fourCosts({ kept_scores: 'all' }).place(request(), 0);
  assert.deepEqual(all.candidates.map((c) => c.worker_id), [0, 1, 2, 3]);
  assert.deepEqual(all.candidates.map((c) => c.device_blocks), [2, 0, 4, 1]);
  assert.equal(all.worker_id, 2);
  const two = fourCosts(TWO).place(request(), 0);
  assert.equal(two.worker_id, 2);
  assert.deepEqual(two.candidates, [all.candidates[0], all.candidates[2]], 'worker 0 (cost 6) is the runner-up, listed before the chosen worker 2');
  assert.deepEqual(two.candidates[1], fourCosts(TWO).score(request())[2], 'the kept score is the one score() gives');
  // Worker 3 (one block) and worker 0 (two) change places: the runner-up now comes after the chosen one.
  const later = makeRouter(4, TWO, NO_DRAWS);
  const feed = routerFeed(later);
  feed.store(rankOf(1), 'Device', hashRange(1, 4));
  feed.store(rankOf(3), 'Device', hashRange(1, 3));
  assert.deepEqual(later.place(request(), 0).candidates.map((c) => c.worker_id), [1, 3]);
});

test('on equal cost the runner-up is the first other candidate; a lone candidate is kept alone', () => {
  // Worker 1 holds the blocks; workers 0, 2 and 3 cost the same: worker 0 is the runner-up.
  const router = makeRouter(4, TWO, NO_DRAWS);
  routerFeed(router).store(rankOf(1), 'Device', hashRange(1, 4));
  assert.deepEqual(router.place(requestOf('r', hashRange(1, 4), 16), 0).candidates.map((c) => c.worker_id), [0, 1]);
  const alone = makeRouter(1, TWO, NO_DRAWS).place(requestOf('r', hashRange(1, 4), 16), 0);
  assert.deepEqual(alone.candidates.map((c) => c.worker_id), [0]);
});

test('costs equal in exact arithmetic tie, though floating point computes them a bit apart (7/3 two ways)', () => {
  // 3-token blocks. Worker 0 holds the request's one complete block and has 3 prompt tokens still to
  // prefill: (3 + 4) / 3 − 1 + 1 = 7/3. Worker 1 holds nothing: 4 / 3 + 1 = 7/3. In doubles the
  // first is 2.3333333333333335 and the second 2.333333333333333.
  const chosen = [0.99, 0].map((draw) => {
    const router = makeRouter(2, { block_size: 3 }, scriptedDraws(draw));
    routerFeed(router).store(rankOf(0), 'Device', hashRange(1, 1));
    for (let i = 0; i < 3; i++) router.assign(requestOf(`pending-${i}`, [], 1), rankOf(0));
    const placement = router.place(requestOf('b', hashRange(1, 1), 4), 0);
    const costs = placement.candidates.map((candidate) => candidate.cost);
    assert.notEqual(costs[0], costs[1], 'the doubles differ in their last bit');
    assert.equal(placement.tied_candidates, 2, `a 2-way tie: ${costs.join(' vs ')}`);
    return placement.worker_id;
  });
  assert.deepEqual(chosen, [1, 0], 'the seeded draw decides, over both');
});
