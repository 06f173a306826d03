// The stores keep runs of blocks where a prefix moves as one (the G2 pool's touch splices runs of
// its LRU order, an event and the router's load hold a request's run of ids with one count, the
// write-through reads the slots it looked up once), and the prefix ceiling
// records only what the id table forgets: on generated workloads each gives what the per-block form
// gives — the same LRU order, the same evictions, the same events, the same hits.
import { test } from 'node:test';
import { expect } from 'chai';
import fc from 'fast-check';
import { BlockIds, type BlockId } from '../../src/collections/blockIds';
import { SlotList } from '../../src/collections/blockSlots';
import { HostPool } from '../../src/engine/hostPool';
import { fuzzCaseArbitrary, type FuzzCase } from '../../src/fuzz/generate';
import { caseConfig, caseInputs, eventLogOf } from '../../src/fuzz/runCase';
import { runReplay } from '../../src/replay';
import type { Cluster } from '../../src/sim/cluster';
import { PrefixCeiling, TableCeiling } from '../../src/report/prefixHitRates';
import { SimRequest } from '../../src/engine/request';
import { ValueCounts } from '../../src/collections/valueCounts';

/** The per-block form of a G2 pool's LRU: an array of ids, least recently used first. */
class PerBlockPool {
  readonly lru: BlockId[] = [];
  readonly pending = new Set<BlockId>();
  constructor(readonly capacity: number) {}

  has(id: BlockId): boolean {
    return this.pending.has(id) || this.lru.includes(id);
  }
  reserve(cohort: BlockId[]): BlockId[] | null {
    const shortfall = cohort.length - (this.capacity - this.lru.length - this.pending.size);
    if (cohort.length === 0 || cohort.length > this.capacity || shortfall > this.lru.length) return null;
    const victims = shortfall > 0 ? this.lru.splice(0, shortfall) : [];
    for (const id of cohort) this.pending.add(id);
    return victims;
  }
  complete(cohort: BlockId[]): void {
    for (let i = cohort.length - 1; i >= 0; i--) {
      this.pending.delete(cohort[i]);
      this.lru.push(cohort[i]);
    }
  }
  /** Each resident id of the first `count`, last to first, moved to the back in turn. */
  touch(ids: BlockId[], count: number): void {
    for (let i = count - 1; i >= 0; i--) {
      const at = this.lru.indexOf(ids[i]);
      if (at < 0) continue;
      this.lru.splice(at, 1);
      this.lru.push(ids[i]);
    }
  }
  lookup(ids: BlockId[]): number {
    let hits = 0;
    while (hits < ids.length && this.lru.includes(ids[hits])) hits++;
    return hits;
  }
}

type PoolOp = { kind: 'store'; chain: number; to: number } | { kind: 'complete'; which: number } | { kind: 'touch'; chain: number; count: number; known: boolean };

const poolOps = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('store' as const), chain: fc.nat(3), to: fc.integer({ min: 1, max: 12 }) }),
    fc.record({ kind: fc.constant('complete' as const), which: fc.nat(5) }),
    fc.record({ kind: fc.constant('touch' as const), chain: fc.nat(3), count: fc.integer({ min: 0, max: 12 }), known: fc.boolean() }),
  ),
  { maxLength: 80 },
);

/** Four prompts of 12 blocks; the first two share a prefix of 5 (as turns of one conversation do). */
function chains(table: BlockIds): BlockId[][] {
  const hashes = (first: number, count: number) => Array.from({ length: count }, (_, i) => BigInt(first + i));
  const words = [[...hashes(100, 5), ...hashes(200, 7)], [...hashes(100, 5), ...hashes(300, 7)], hashes(400, 12), hashes(500, 12)];
  return words.map((chain) => chain.map((hash) => table.acquire(hash)));
}

test('the G2 pool touched in runs keeps the LRU order, evictions and hits of touching block by block', () => {
  fc.assert(
    fc.property(fc.integer({ min: 4, max: 20 }), poolOps, (capacity, ops) => {
      const table = new BlockIds();
      const pool = new HostPool('g2', capacity, table);
      const model = new PerBlockPool(capacity);
      const prompts = chains(table);
      const inFlight: { cohort: BlockId[]; slots: Int32Array }[] = [];
      for (const op of ops as PoolOp[]) {
        if (op.kind === 'store') {
          const cohort = prompts[op.chain].slice(0, op.to).filter((id) => !pool.contains(id));
          const reservation = pool.reserve(cohort);
          const victims = model.reserve(cohort);
          expect(reservation?.victims ?? null).to.deep.equal(victims);
          if (reservation) {
            inFlight.push({ cohort, slots: reservation.slots });
            table.releaseAll(reservation.victims);
          }
        } else if (op.kind === 'complete') {
          if (inFlight.length === 0) continue;
          const [{ cohort, slots }] = inFlight.splice(op.which % inFlight.length, 1);
          pool.complete(cohort, slots);
          model.complete(cohort);
        } else if (op.known) {
          // Only the blocks the pool holds, as the write-through names them.
          const prompt = prompts[op.chain];
          const held = [...Array(op.count).keys()].filter((i) => pool.contains(prompt[i]));
          pool.touchIndexes(prompt, held);
          model.touch(prompt, op.count);
        } else {
          pool.touch(prompts[op.chain], op.count);
          model.touch(prompts[op.chain], op.count);
        }
        expect(pool.residentHashes()).to.deep.equal(model.lru.map((id) => table.hashOf(id)));
        for (const prompt of prompts) expect(pool.residentRun(prompt, 0)).to.equal(model.lookup(prompt));
      }
    }),
    { numRuns: 300 },
  );
});

test('the G2 write-through reading the slots it looked up once reserves, evicts and touches as looking each block up does', () => {
  fc.assert(
    fc.property(fc.integer({ min: 4, max: 20 }), poolOps, (capacity, ops) => {
      const table = new BlockIds();
      const byLookup = new HostPool('g2', capacity, table);
      const bySlots = new HostPool('g2', capacity, table);
      const prompts = chains(table);
      const inFlight: { cohort: BlockId[]; lookedUp: Int32Array; kept: Int32Array }[] = [];
      for (const op of ops as PoolOp[]) {
        if (op.kind === 'store' || op.kind === 'touch') {
          // A store of the prompt's first blocks: those the pool lacks form the cohort, those it holds are named (spared) and touched after.
          const prompt = prompts[op.chain];
          const to = op.kind === 'store' ? op.to : op.count;
          const slots = new Int32Array(to);
          bySlots.slotsOf(prompt, 0, to, slots);
          const held = [...Array(to).keys()].filter((i) => byLookup.contains(prompt[i]));
          expect(held).to.deep.equal([...Array(to).keys()].filter((i) => slots[i] !== -1));
          const cohort = [...Array(to).keys()].filter((i) => slots[i] === -1).map((i) => prompt[i]);
          const named = held.map((i) => prompt[i]);
          const lookedUp = byLookup.reserve(cohort, '', named, 0, named.length);
          const kept = bySlots.reserveSparing(cohort, '', held.map((i) => slots[i]), held.length);
          expect(kept?.victims ?? null).to.deep.equal(lookedUp?.victims ?? null);
          if (lookedUp && kept) {
            inFlight.push({ cohort, lookedUp: lookedUp.slots, kept: kept.slots });
            table.releaseAll(lookedUp.victims);
            table.releaseAll(kept.victims);
          }
          byLookup.touchIndexes(prompt, held);
          bySlots.touchIndexesAt(prompt, slots, held);
        } else if (inFlight.length > 0) {
          const [{ cohort, lookedUp, kept }] = inFlight.splice(op.which % inFlight.length, 1);
          byLookup.complete(cohort, lookedUp);
          bySlots.complete(cohort, kept);
        }
        expect(bySlots.residentHashes()).to.deep.equal(byLookup.residentHashes());
        expect(bySlots.usedBlocks).to.equal(byLookup.usedBlocks);
      }
    }),
    { numRuns: 300 },
  );
});

test('a run moved to the back of a slot list gives the order of moving its slots one by one', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 12 }), fc.array(fc.tuple(fc.nat(11), fc.nat(11)), { maxLength: 30 }), (size, moves) => {
      const list = new SlotList();
      const order: number[] = [];
      for (let slot = 0; slot < size; slot++) {
        list.pushBack(slot);
        order.push(slot);
      }
      for (const [a, b] of moves) {
        const from = order.indexOf(a % size);
        const to = Math.min(from + (b % size), order.length - 1);
        const run = order.slice(from, to + 1);
        list.moveRunToBack(run[0], run[run.length - 1]);
        for (const slot of run) order.push(...order.splice(order.indexOf(slot), 1));
      }
      const listed: number[] = [];
      for (let slot = list.first(); slot !== -1; slot = list.after(slot)) listed.push(slot);
      expect(listed).to.deep.equal(order);
      for (let i = 0; i < order.length; i++) expect(list.before(order[i])).to.equal(i === 0 ? -1 : order[i - 1]);
    }),
    { numRuns: 300 },
  );
});

/** A generated case replayed with its events and the router's load holding each request's run of ids, or each id: its digest, event log and ids live at the end. */
function replayHolding(fuzzCase: FuzzCase, hold_each_block_id: boolean): string {
  const config = caseConfig(fuzzCase);
  let cluster: Cluster | null = null;
  try {
    const outcome = runReplay(config, { ...caseInputs(fuzzCase, config), keep_event_history: true, hold_each_block_id, max_kernel_events: 2_000_000, observe: (observed) => (cluster = observed) });
    return `${outcome.report.digest}\n${eventLogOf(outcome)}\nids live at the end: ${(cluster as Cluster | null)?.blockIds.size}`;
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

test('events and the router holding a request run of ids give the digest, the event log and the live ids at the end of holding each id', () => {
  fc.assert(
    fc.property(fuzzCaseArbitrary({ exclude: [] }), (fuzzCase) => {
      expect(replayHolding(fuzzCase, false)).to.equal(replayHolding(fuzzCase, true));
    }),
    { numRuns: 150, seed: 41 },
  );
});

type CeilingOp = { kind: 'arrive'; chain: number; length: number } | { kind: 'end'; which: number } | { kind: 'hold'; which: number; block: number } | { kind: 'let-go'; which: number };

test('the ceiling kept beside the id table counts the hits of a set of every block seen, whoever holds the ids', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('arrive' as const), chain: fc.nat(4), length: fc.integer({ min: 0, max: 10 }) }),
    fc.record({ kind: fc.constant('end' as const), which: fc.nat(20) }),
    fc.record({ kind: fc.constant('hold' as const), which: fc.nat(20), block: fc.nat(10) }),
    fc.record({ kind: fc.constant('let-go' as const), which: fc.nat(20) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
      const table = new BlockIds();
      const ceiling = new TableCeiling(table);
      const everyBlock = new PrefixCeiling();
      // Chains 0 and 1 share their first 3 blocks; chain 4 starts with the hash 0.
      const hashOf = (chain: number, i: number) => (chain === 4 && i === 0 ? 0n : BigInt((chain === 1 && i < 3 ? 0 : chain) * 1000 + i + 1) | (BigInt(chain & 1) << 40n));
      const live: Int32Array[] = [];
      const holds: BlockId[] = [];
      for (const step of ops as CeilingOp[]) {
        if (step.kind === 'arrive') {
          const words = new Int32Array(2 * step.length);
          for (let i = 0; i < step.length; i++) {
            const hash = hashOf(step.chain, i);
            words[2 * i] = Number(hash & 0xffffffffn) | 0;
            words[2 * i + 1] = Number(hash >> 32n) | 0;
          }
          const expected = everyBlock.observe(words, 2);
          const ids = new Int32Array(step.length);
          table.acquireAllWords(words, 2, ids);
          expect(ceiling.hits(ids, words, 2)).to.equal(expected);
          live.push(ids);
        } else if (step.kind === 'end' && live.length > 0) {
          table.releaseAll(live.splice(step.which % live.length, 1)[0]);
        } else if (step.kind === 'hold' && live.length > 0) {
          const ids = live[step.which % live.length];
          if (ids.length === 0) continue;
          const id = ids[step.block % ids.length];
          table.retain(id);
          holds.push(id);
        } else if (step.kind === 'let-go' && holds.length > 0) {
          table.release(holds.splice(step.which % holds.length, 1)[0]);
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('the ceiling beside the id table records forgotten blocks in batches: thousands forgotten between two arrivals are all seen', () => {
  const table = new BlockIds();
  const ceiling = new TableCeiling(table);
  const everyBlock = new PrefixCeiling();
  const prompt = (first: number, length: number) => {
    const words = new Int32Array(2 * length);
    for (let i = 0; i < length; i++) {
      words[2 * i] = first + i;
      words[2 * i + 1] = (first + i) % 3;
    }
    return words;
  };
  // Prompts of 2,500 blocks (more than a batch holds), each ended before the next arrives; the
  // last ones repeat earlier prompts from their start, in part or whole.
  const prompts = [prompt(0, 2500), prompt(2500, 2500), prompt(5000, 2500), prompt(0, 1200), prompt(2500, 2600), prompt(5000, 10), prompt(9000, 5)];
  const hits = prompts.map((words) => {
    const expected = everyBlock.observe(words, 2);
    const ids = new Int32Array(words.length / 2);
    table.acquireAllWords(words, 2, ids);
    expect(ceiling.hits(ids, words, 2)).to.equal(expected);
    table.releaseAll(ids);
    return expected;
  });
  expect(hits).to.deep.equal([0, 0, 0, 1200, 2600, 10, 0]);
});

test('a decode run stamps tokens in groups of equal gaps as stamping each token in turn does', () => {
  const identity = { request_id: 'r', ordinal: 0, session_id: null, play_id: null, cache_id: null, lane: null };
  const state = (request: SimRequest) => ({
    first: request.first_token_ns,
    second: request.second_token_ns,
    last: request.last_token_ns,
    outputs: request.output_tokens,
    gaps: request.token_gaps_ns?.ascending() ?? null,
    gap_count: request.token_gaps_ns?.count ?? 0,
  });
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 30 }), fc.nat(3), fc.option(fc.nat(99)), (steps, before, firstAtTens) => {
      // The ends of the run's passes: gaps from a few values, so groups of equal gaps form.
      const ends: number[] = [];
      let end = 1000;
      for (const step of steps) ends.push((end += 10 * step));
      const stepped = new SimRequest(identity, 8, 100);
      const grouped = new SimRequest(identity, 8, 100);
      // Tokens already out before the run (none, or a few), their gaps as the run's may be.
      if (firstAtTens !== null) {
        for (let k = 0; k <= before; k++) {
          stepped.stampToken(10 * (firstAtTens - k - 1) + 10 * k * k);
          grouped.stampToken(10 * (firstAtTens - k - 1) + 10 * k * k);
        }
      }
      for (const at of ends) stepped.stampToken(at);
      grouped.stampToken(ends[0]);
      const gaps: number[] = [];
      const counts: number[] = [];
      for (let p = 1; p < ends.length; p++) {
        const gap = ends[p] - ends[p - 1];
        if (gaps.length > 0 && gaps[gaps.length - 1] === gap) counts[counts.length - 1]++;
        else {
          gaps.push(gap);
          counts.push(1);
        }
      }
      grouped.stampTokenGroups(gaps, counts, gaps.length, ends[ends.length - 1]);
      expect(state(grouped)).to.deep.equal(state(stepped));
    }),
    { numRuns: 300 },
  );
});

test('counting a value k times over is adding it k times', () => {
  const state = (counts: ValueCounts) => ({ count: counts.count, ascending: counts.ascending() });
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.nat(4)), { maxLength: 30 }), (additions) => {
      const repeated = new ValueCounts();
      const oneByOne = new ValueCounts();
      for (const [value, times] of additions) {
        repeated.addRepeated(value, times);
        for (let k = 0; k < times; k++) oneByOne.add(value);
      }
      expect(state(repeated)).to.deep.equal(state(oneByOne));
    }),
    { numRuns: 300 },
  );
});
