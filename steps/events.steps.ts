// Steps that make workers emit KV events at given instants (stores, removals, clears, shared-pool
// stores to several ranks), remove or re-add workers, and inject faults on the way to the router.
import { Given } from './support/catalogue';
import type { KvWorld } from './support/world';
import type { Tier } from '../src/events/model';
import type { HashedBlock } from '../src/hash';
import type { Nanos } from '../src/time';

const rank0 = (worker_id: number) => ({ worker_id, dp_rank: 0 });

function blocksOf(world: KvWorld, name: string, first?: number, last?: number): { blocks: HashedBlock[]; parent: bigint | null; start: number } {
  const all = world.prefixPrompt(name).blocks(world.setup.block_size);
  if (all.length === 0) throw new Error(`"${name}" is shorter than one ${world.setup.block_size}-token block: nothing to store`);
  const from = first === undefined ? 1 : first;
  const to = last === undefined ? all.length : last;
  if (from < 1 || to > all.length || from > to) throw new Error(`"${name}" has blocks 1 to ${all.length}; blocks ${from} to ${to} do not exist`);
  return { blocks: all.slice(from - 1, to), parent: from === 1 ? null : all[from - 2].block_hash, start: from - 1 };
}

function store(world: KvWorld, at: Nanos, worker: number, dp_rank: number, tier: Tier, name: string, first?: number, last?: number): void {
  const { blocks, parent, start } = blocksOf(world, name, first, last);
  world.later((replay) => replay.emitAt(at, { worker_id: worker, dp_rank }, tier, (stream) => [stream.stored(tier, blocks, parent, start)]));
}

Given('worker {int} finishes storing {string} in {tier} at {duration}', { domain: 'events', level: 'router', says: 'The worker emits, at this instant, one KV event storing every complete block of the named prefix in this tier (rank 0).' }, function (this: KvWorld, worker: number, name: string, tier: Tier, at: Nanos) {
  store(this, at, worker, 0, tier, name);
});

Given(
  'worker {int} dp rank {int} finishes storing {string} in {tier} at {duration}', { domain: 'events', level: 'router', says: 'The same, from one data-parallel rank of the worker.' },
  function (this: KvWorld, worker: number, dp_rank: number, name: string, tier: Tier, at: Nanos) {
    store(this, at, worker, dp_rank, tier, name);
  },
);

Given(
  'worker {int} finishes storing blocks {int} to {int} of {string} in {tier} at {duration}', { domain: 'events', level: 'router', says: 'The worker emits a store of only these blocks of the prefix (counted from 1), continuing the block before them.' },
  function (this: KvWorld, worker: number, first: number, last: number, name: string, tier: Tier, at: Nanos) {
    store(this, at, worker, 0, tier, name, first, last);
  },
);

function remove(world: KvWorld, at: Nanos, worker: number, tier: Tier, name: string, first?: number, last?: number): void {
  const hashes = blocksOf(world, name, first, last).blocks.map((block) => block.block_hash);
  world.later((replay) => replay.emitAt(at, rank0(worker), tier, (stream) => [stream.removed(tier, hashes)]));
}

Given('worker {int} removes {string} from {tier} at {duration}', { domain: 'events', level: 'router', says: 'The worker emits a removal of every block of the prefix from this tier.' }, function (this: KvWorld, worker: number, name: string, tier: Tier, at: Nanos) {
  remove(this, at, worker, tier, name);
});

Given(
  'worker {int} removes blocks {int} to {int} of {string} from {tier} at {duration}', { domain: 'events', level: 'router', says: 'The worker emits a removal of these blocks of the prefix (counted from 1) from this tier.' },
  function (this: KvWorld, worker: number, first: number, last: number, name: string, tier: Tier, at: Nanos) {
    remove(this, at, worker, tier, name, first, last);
  },
);

Given('worker {int} clears its caches at {duration}', { domain: 'events', level: 'router', says: 'The worker emits an event clearing everything it holds in GPU memory.' }, function (this: KvWorld, worker: number, at: Nanos) {
  this.later((replay) => replay.emitAt(at, rank0(worker), 'Device', (stream) => [stream.cleared('Device')]));
});

Given(
  'the shared pool finishes storing {string} and reports it to workers {int} and {int} at {duration}', { domain: 'events', level: 'router', says: 'A shared host memory pool stores the prefix and reports the store on both workers\' streams at this instant.' },
  function (this: KvWorld, name: string, first: number, second: number, at: Nanos) {
    const { blocks } = blocksOf(this, name);
    for (const worker of [first, second]) {
      this.later((replay) => replay.emitAt(at, rank0(worker), 'HostPinned', (stream) => [stream.stored('HostPinned', blocks, null, 0)]));
    }
  },
);

Given('the shared pool reports storing {string} to worker {int} twice, at {duration} and {duration}', { domain: 'events', level: 'router', says: 'A shared pool reports the same store on one worker\'s stream twice.' }, function (
  this: KvWorld,
  name: string,
  worker: number,
  first: Nanos,
  second: Nanos,
) {
  const { blocks } = blocksOf(this, name);
  for (const at of [first, second]) this.later((replay) => replay.emitAt(at, rank0(worker), 'HostPinned', (stream) => [stream.stored('HostPinned', blocks, null, 0)]));
});

Given('worker {int} leaves the cluster at {duration}', { domain: 'events', level: 'router', says: 'The worker leaves at this instant: the router drops it and what it held.' }, function (this: KvWorld, worker: number, at: Nanos) {
  this.later((replay) => replay.removeWorkerAt(at, worker));
});

Given('worker {int} rejoins the cluster at {duration}', { domain: 'events', level: 'router', says: 'The worker joins again at this instant, holding nothing.' }, function (this: KvWorld, worker: number, at: Nanos) {
  this.later((replay) => replay.addWorkerAt(at, worker, this.setup.dp_size));
});

Given('the batch worker {int} emitted at {duration} is lost on the way to the router', { domain: 'events', level: 'router', says: 'Loses the batch of KV events the worker emitted at this instant (a fault).' }, function (this: KvWorld, worker: number, at: Nanos) {
  this.later((replay) => replay.loseBatch(rank0(worker), at));
});

Given('the batch worker {int} emitted at {duration} is delivered twice', { domain: 'events', level: 'router', says: 'Delivers that batch to the router twice (a fault).' }, function (this: KvWorld, worker: number, at: Nanos) {
  this.later((replay) => replay.duplicateBatch(rank0(worker), at));
});

Given(
  'the batches worker {int} emitted at {duration} and {duration} reach the router in swapped order', { domain: 'events', level: 'router', says: 'Delivers the worker\'s two batches in swapped order (a fault).' },
  function (this: KvWorld, worker: number, first: Nanos, second: Nanos) {
    this.later((replay) => replay.swapBatches(rank0(worker), first, second));
  },
);
