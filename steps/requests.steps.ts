// Steps about requests: work already on a worker, arrivals at given instants, and where and why
// the router placed them (worker, overlap seen, per-candidate cost breakdown).
import { DataTable } from '@cucumber/cucumber';
import { Given, Then, When } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import type { Nanos } from '../src/time';
import type { CandidateScore, Placement } from '../src/router/router';
import { describePlacement } from '../src/router/explain';
import { expectChosenByLoad } from './support/placements';

/** Work already on a worker when the replay starts: a request of `own_tokens` after the prefix, if any. */
function alreadyServing(world: KvWorld, worker: number, prefix: string | null, own_tokens: number): void {
  const { request_id, prompt } = world.newRequest(prefix, own_tokens);
  world.later((replay) =>
    replay.busy({ worker_id: worker, dp_rank: 0 }, { request_id, isl_tokens: prompt.length_tokens, block_hashes: prompt.blockHashes(world.setup.block_size) }),
  );
}

Given('worker {int} is already serving a {tokens} request', { domain: 'requests', level: 'router', says: 'Puts a request of this many tokens, sharing nothing, on the worker before anything else happens, so it carries more load.' }, function (this: KvWorld, worker: number, tokens: number) {
  alreadyServing(this, worker, null, tokens);
});

Given('worker {int} is already serving a request starting with {string}', { domain: 'requests', level: 'router', says: 'Puts a request starting with the prefix (and one block of its own) on the worker before anything else happens.' }, function (this: KvWorld, worker: number, prefix: string) {
  alreadyServing(this, worker, prefix, this.setup.block_size);
});

function sendRequest(world: KvWorld, prefix: string | null, own_tokens: number, at: Nanos): void {
  const { request_id, prompt } = world.newRequest(prefix, own_tokens);
  world.lastRequestId = request_id;
  world.lastPrefix = prefix;
  world.later((replay) => replay.arriveAt(at, { request_id, isl_tokens: prompt.length_tokens, block_hashes: prompt.blockHashes(world.setup.block_size) }));
  world.replay.run();
}

When('a request starting with {string} arrives at {duration}', { domain: 'requests', level: 'router', says: 'Sends one request (the prefix, then one block of its own) at this instant and runs the router-level replay; `Then it …` checks this request.' }, function (this: KvWorld, prefix: string, at: Nanos) {
  sendRequest(this, prefix, this.setup.block_size, at);
});

When('{count} requests starting with {string} arrive at {duration}', { domain: 'requests', level: 'router', says: 'Sends this many requests starting with the prefix at the same instant and runs the router-level replay.' }, function (this: KvWorld, count: number, prefix: string, at: Nanos) {
  for (let i = 0; i < count; i++) {
    const { request_id, prompt } = this.newRequest(prefix, this.setup.block_size);
    this.later((replay) => replay.arriveAt(at, { request_id, isl_tokens: prompt.length_tokens, block_hashes: prompt.blockHashes(this.setup.block_size) }));
  }
  this.replay.run();
});

When('the router replays the event streams', { domain: 'events', level: 'router', says: 'Runs the router-level replay without a request: only the KV events and worker changes described.' }, function (this: KvWorld) {
  this.replay.run();
});

const NO_REQUEST = "this step checks the request the When sent, and none was sent: send one with a When such as 'When a request starting with \"system prompt\" arrives at 15 ms'";

function lastPlacement(world: KvWorld): Placement {
  if (world.replay.failure) throw new Error(`the replay failed before placing the request: ${world.replay.failure.message}`);
  const id = world.lastRequestId;
  if (id === null) throw new Error(NO_REQUEST);
  const placement = world.replay.placementOf(id);
  if (!placement) throw new Error(`request ${id} was never placed`);
  return placement;
}

/** The first request the router placed. */
function firstPlacement(world: KvWorld): Placement {
  const first = world.replay.placements[0];
  if (!first) throw new Error(NO_REQUEST);
  return first;
}

function expectWorker(world: KvWorld, placement: Placement, worker: number): void {
  world.measure(`${placement.request_id} placed on worker`, placement.worker_id, '', `${placement.request_id} placed on worker ${placement.worker_id}`);
  expect(placement.worker_id, `placed on worker ${placement.worker_id}, expected worker ${worker}.\n${describePlacement(placement)}`).to.equal(worker);
}

Then('it is placed on worker {int}, the less loaded worker', { domain: 'routing', level: 'router', says: 'Checks the request went to this worker by load alone: the router saw no cached block anywhere, and this worker carried strictly less load than every other (a tie fails: give the other workers more load).' }, function (this: KvWorld, worker: number) {
  const placement = lastPlacement(this);
  expectWorker(this, placement, worker);
  const sawCache = placement.candidates.filter((c) => c.device_blocks + c.host_blocks > 0);
  const seen = sawCache.reduce((sum, c) => sum + c.device_blocks + c.host_blocks, 0);
  this.measure('cached blocks the router saw on any worker', seen, 'blocks');
  expect(sawCache, `the router should have placed by load alone, but saw cached blocks:\n${describePlacement(placement)}`).to.deep.equal([]);
  expectChosenByLoad(this, placement.candidates, placement, describePlacement(placement));
});

Then('it is placed on worker {int}, the only worker left', { domain: 'routing', level: 'router', says: 'Checks the request went to this worker, the router\'s only candidate.' }, function (this: KvWorld, worker: number) {
  const placement = lastPlacement(this);
  expectWorker(this, placement, worker);
  expect(placement.candidates.map((c) => c.worker_id), `the candidates of the placement:\n${describePlacement(placement)}`).to.deep.equal([worker]);
});

Then('it is placed on worker {int}, which holds it in G2', { domain: 'routing', level: 'router', says: 'Checks the request went to this worker and the router counted its whole prefix there in host memory (G2).' }, function (this: KvWorld, worker: number) {
  const placement = lastPlacement(this);
  expectWorker(this, placement, worker);
  const prefixBlocks = this.prefixPrompt(this.lastPrefix!).blocks(this.setup.block_size).length;
  this.measure(`host blocks counted on worker ${worker}`, placement.host_blocks, 'blocks', `host blocks counted on worker ${worker} = ${placement.host_blocks} (the whole ${prefixBlocks}-block prefix)`);
  expect(placement.host_blocks, `host blocks counted on worker ${worker}.\n${describePlacement(placement)}`).to.equal(prefixBlocks);
});

Then('it is placed on worker {int}, which holds it in GPU memory', { domain: 'routing', level: 'router', says: 'Checks the request went to this worker and the router counted its whole prefix there in GPU memory (G1).' }, function (this: KvWorld, worker: number) {
  const placement = lastPlacement(this);
  expectWorker(this, placement, worker);
  const prefixBlocks = this.prefixPrompt(this.lastPrefix!).blocks(this.setup.block_size).length;
  this.measure(`GPU blocks counted on worker ${worker}`, placement.device_blocks, 'blocks', `GPU blocks counted on worker ${worker} = ${placement.device_blocks} (the whole ${prefixBlocks}-block prefix)`);
  expect(placement.device_blocks, `GPU blocks counted on worker ${worker}.\n${describePlacement(placement)}`).to.equal(prefixBlocks);
});

Then('it is placed on worker {int} dp rank {int}, which holds it in GPU memory', { domain: 'routing', level: 'router', says: 'Checks the request went to this rank and the router counted its whole prefix there in GPU memory.' }, function (this: KvWorld, worker: number, dp_rank: number) {
  const placement = lastPlacement(this);
  const where = `worker ${placement.worker_id} dp rank ${placement.dp_rank}`;
  this.measure(`${placement.request_id} placed on`, placement.dp_rank, '', `${placement.request_id} placed on ${where}`);
  expect(where, `placed on ${where}.\n${describePlacement(placement)}`).to.equal(`worker ${worker} dp rank ${dp_rank}`);
  const prefixBlocks = this.prefixPrompt(this.lastPrefix!).blocks(this.setup.block_size).length;
  this.measure(`GPU blocks counted on ${where}`, placement.device_blocks, 'blocks');
  expect(placement.device_blocks, `GPU blocks counted on ${where}.\n${describePlacement(placement)}`).to.equal(prefixBlocks);
});

Then('it is placed on worker {int}', { domain: 'routing', level: 'router', says: 'Checks the request went to this worker (nothing about why).' }, function (this: KvWorld, worker: number) {
  expectWorker(this, lastPlacement(this), worker);
});

Then('the router counted {int} host block(s) on worker {int} for it', { domain: 'routing', level: 'router', says: 'Checks the router counted exactly this many of the request\'s blocks in the worker\'s host memory.' }, function (this: KvWorld, blocks: number, worker: number) {
  const placement = lastPlacement(this);
  const candidate = placement.candidates.find((c) => c.worker_id === worker && c.dp_rank === 0);
  expect(candidate, `worker ${worker} was not a candidate`).to.not.equal(undefined);
  this.measure(`host blocks counted on worker ${worker}`, candidate!.host_blocks, 'blocks');
  expect(candidate!.host_blocks, `host blocks seen on worker ${worker}.\n${describePlacement(placement)}`).to.equal(blocks);
});

Then('the first request was a {int}-way tie broken by a seeded draw', { domain: 'routing', level: 'router', says: 'Checks exactly this many candidates tied at the lowest cost for the first request.' }, function (this: KvWorld, ways: number) {
  const first = firstPlacement(this);
  this.measure('candidates tied for the first request', first.tied_candidates, '');
  expect(first.tied_candidates, describePlacement(first)).to.equal(ways);
});

Then('over seeds 1 to {int} the tied first request goes to each of the tied workers, a seeded draw and not a fixed pick', { domain: 'routing', level: 'router', says: 'Replays with each seed and checks the tied first request went, over the seeds, to every tied worker and no other.' }, function (this: KvWorld, seeds: number) {
  const first = firstPlacement(this);
  const tiedWorkers = first.candidates.filter((c) => c.cost === Math.min(...first.candidates.map((o) => o.cost))).map((c) => c.worker_id);
  expect(tiedWorkers.length, `workers tied for the first request: ${describePlacement(first)}`).to.be.greaterThan(1);
  const chosen = new Map<number, number>();
  for (let seed = 1; seed <= seeds; seed++) {
    const worker = this.replayAgain(seed).placements[0].worker_id;
    chosen.set(worker, (chosen.get(worker) ?? 0) + 1);
  }
  this.measure('tied workers the draw chose over the seeds', chosen.size, 'workers', `over seeds 1 to ${seeds} the draw chose ${[...chosen].sort(([a], [b]) => a - b).map(([worker, times]) => `worker ${worker} ${times} times`).join(', ')}`);
  expect([...chosen.keys()].sort((a, b) => a - b), `workers the draw chose over seeds 1 to ${seeds}`).to.deep.equal([...tiedWorkers].sort((a, b) => a - b));
});

Then('over seeds 1 to {int} the request is placed on the workers in these shares, each within {int} points:', { domain: 'routing', level: 'router', says: 'Checks each worker\'s cost (table: worker, cost, share), then replays with each seed and checks each worker\'s share of the request within this many percentage points.' }, function (this: KvWorld, seeds: number, points: number, table: DataTable) {
  const id = this.lastRequestId;
  if (id === null) throw new Error(NO_REQUEST);
  const rows = table.hashes().map((row) => ({ worker: Number(row.worker), cost: Number(row.cost), share: Number(row.share.replace(/\s*%$/, '')) }));
  const placement = lastPlacement(this);
  for (const row of rows) {
    const candidate = placement.candidates.find((c) => c.worker_id === row.worker && c.dp_rank === 0);
    expect(candidate, `worker ${row.worker} was not a kept candidate.\n${describePlacement(placement)}`).to.not.equal(undefined);
    expect(candidate!.cost, `cost of worker ${row.worker}.\n${describePlacement(placement)}`).to.be.closeTo(row.cost, 1e-9);
  }
  const times = new Map<number, number>();
  for (let seed = 1; seed <= seeds; seed++) {
    const worker = this.replayAgain(seed).placementOf(id)!.worker_id;
    times.set(worker, (times.get(worker) ?? 0) + 1);
  }
  for (const row of rows) {
    const share = (100 * (times.get(row.worker) ?? 0)) / seeds;
    this.measure(`share of worker ${row.worker} (cost ${row.cost})`, share, '%');
    expect(Math.abs(share - row.share), `worker ${row.worker}'s share over seeds 1 to ${seeds}: ${share.toFixed(1)} % against ${row.share} %`).to.be.at.most(points);
  }
});

Then('a second replay with the same seed places every request on the same worker', { domain: 'routing', level: 'router', says: 'Replays again with the same seed and checks every placement is the same.' }, function (this: KvWorld) {
  const again = this.replayAgain().placements.map((p) => `${p.request_id}→${p.worker_id}`);
  const first = this.replay.placements.map((p) => `${p.request_id}→${p.worker_id}`);
  this.measure('placements identical across two replays', again.length, 'placements');
  expect(again, 'placements of the second replay').to.deep.equal(first);
});

Then('the requests are placed on workers {string}', { domain: 'routing', level: 'router', says: 'Checks the workers the requests went to, in arrival order (a comma-separated list).' }, function (this: KvWorld, list: string) {
  const expected = list.split(',').map((item) => Number(item.trim()));
  const actual = this.replay.placements.map((placement) => placement.worker_id);
  for (const placement of this.replay.placements) {
    this.measure(`${placement.request_id} placed on worker`, placement.worker_id, '', `${placement.request_id} placed on worker ${placement.worker_id}`);
  }
  expect(actual, 'workers chosen, in arrival order').to.deep.equal(expected);
});

const BREAKDOWN_COLUMNS: Record<string, keyof CandidateScore> = {
  worker: 'worker_id',
  'dp rank': 'dp_rank',
  'GPU blocks': 'device_blocks',
  'host blocks': 'host_blocks',
  credit: 'credit',
  'prefill blocks': 'prefill_blocks',
  'decode blocks': 'decode_blocks',
  cost: 'cost',
};

Then('the router scored it as:', { domain: 'routing', level: 'router', says: 'Checks the router\'s score of each candidate, row by row (columns: worker, dp rank, GPU blocks, host blocks, credit, prefill blocks, decode blocks, cost).' }, function (this: KvWorld, table: DataTable) {
  const placement = lastPlacement(this);
  const rows = table.hashes();
  for (const c of placement.candidates) {
    const where = c.dp_rank === 0 ? `worker ${c.worker_id}` : `worker ${c.worker_id} dp rank ${c.dp_rank}`;
    this.measure(`cost on ${where}`, c.cost, 'blocks', `cost on ${where} = ${Number(c.cost.toFixed(6))} (credit ${Number(c.credit.toFixed(6))})`);
  }
  expect(placement.candidates.length, 'number of candidates').to.equal(rows.length);
  rows.forEach((row, i) => {
    const candidate = placement.candidates[i];
    for (const [column, text] of Object.entries(row)) {
      const field = BREAKDOWN_COLUMNS[column];
      if (!field) throw new Error(`unknown column "${column}"; use: ${Object.keys(BREAKDOWN_COLUMNS).join(', ')}`);
      expect(candidate[field], `${column} of candidate ${i + 1} (worker ${candidate.worker_id}).\n${describePlacement(placement)}`).to.be.closeTo(Number(text), 1e-9);
    }
  });
});

Then('it reports an overlap of {int} blocks, {int} tokens, the best available', { domain: 'routing', level: 'router', says: 'Checks the overlap the router chose and reported, in blocks and tokens, is the best any candidate offered.' }, function (this: KvWorld, blocks: number, tokens: number) {
  const placement = lastPlacement(this);
  this.measure('selected overlap', placement.selected_overlap_blocks, 'blocks');
  this.measure('reported overlap', placement.reported_overlap_tokens, 'tokens');
  expect(placement.selected_overlap_blocks, 'selected overlap blocks').to.equal(blocks);
  expect(placement.best_available_overlap_blocks, 'best available overlap blocks').to.equal(blocks);
  expect(placement.reported_overlap_tokens, 'reported overlap tokens').to.equal(tokens);
});
