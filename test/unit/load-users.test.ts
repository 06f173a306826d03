// The router's load counts each rank's active blocks by block id in one place per id (the rank
// that uses it and its count, or a row of counts when several ranks do: src/router/load.ts): on
// generated placements and completions it gives what counting each rank's blocks in a map gives
// (active blocks per rank, the hits of a request on each rank), with blocks shared between ranks
// and named twice in a request, ids given or looked up from hashes, and holds let go at the end.
import { test } from 'node:test';
import { expect } from 'chai';
import fc from 'fast-check';
import { BlockIds, NO_BLOCK_ID } from '../../src/collections/blockIds';
import { LoadTracker } from '../../src/router/load';

/** The per-block form: per rank, each block's count of active requests using it. */
class PerBlockLoad {
  readonly byRank = new Map<number, Map<bigint, number>>();
  add(rank: number, blocks: bigint[]): void {
    const users = this.byRank.get(rank) ?? new Map<bigint, number>();
    this.byRank.set(rank, users);
    for (const block of blocks) users.set(block, (users.get(block) ?? 0) + 1);
  }
  free(rank: number, blocks: bigint[]): void {
    const users = this.byRank.get(rank)!;
    for (const block of blocks) {
      const left = users.get(block)! - 1;
      if (left === 0) users.delete(block);
      else users.set(block, left);
    }
  }
  activeBlocks(rank: number): number {
    return this.byRank.get(rank)?.size ?? 0;
  }
  hits(blocks: bigint[], rankCount: number): number[] {
    return Array.from({ length: rankCount }, (_, rank) => blocks.filter((block) => this.byRank.get(rank)?.has(block) ?? false).length);
  }
}

type Op = { kind: 'add'; rank: number; blocks: number[]; byHash: boolean } | { kind: 'free'; which: number };

const RANKS = 40;

const ops = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('add' as const), rank: fc.oneof(fc.nat(3), fc.nat(RANKS - 1)), blocks: fc.array(fc.nat(24), { minLength: 0, maxLength: 12 }), byHash: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('free' as const), which: fc.nat() }) },
  ),
  { maxLength: 80 },
);

/**
 * Bits of a block's word for its rank: the default, and few enough that ranks past 2 (2 bits) or
 * counts past 2 (29 bits) take the rows, with their way back into the word.
 */
for (const rankBits of [undefined, 2, 29]) {
test(`the load counts active blocks and hits per rank as counting each rank's blocks does (rank bits: ${rankBits ?? 'default'})`, () => {
  fc.assert(
    fc.property(ops, fc.array(fc.nat(24), { maxLength: 10 }), (steps, probe) => {
      const table = new BlockIds();
      const load = new LoadTracker(table, rankBits);
      const model = new PerBlockLoad();
      const active: { id: string; rank: number; blocks: bigint[] }[] = [];
      let next = 0;
      for (const step of steps) {
        if (step.kind === 'add') {
          const blocks = step.blocks.map((n) => BigInt(n + 1));
          // Ids the table has are given; with byHash, or for a hash no one holds, the tracker looks it up from the hash.
          const ids = Int32Array.from(blocks, (hash) => (step.byHash ? NO_BLOCK_ID : table.idOf(hash)));
          const id = `r${next++}`;
          load.add(id, step.rank, 0, { block_hashes: blocks }, ids);
          model.add(step.rank, blocks);
          active.push({ id, rank: step.rank, blocks });
        } else if (active.length > 0) {
          const [gone] = active.splice(step.which % active.length, 1);
          load.free(gone.id);
          model.free(gone.rank, gone.blocks);
        }
        for (let rank = 0; rank < RANKS; rank++) expect(load.activeBlocks(rank), `rank ${rank}`).to.equal(model.activeBlocks(rank));
        const probeBlocks = probe.map((n) => BigInt(n + 1));
        const hits = load.activeHits(Int32Array.from(probeBlocks, (hash) => table.idOf(hash)), new Int32Array(RANKS));
        expect(Array.from(hits)).to.deep.equal(model.hits(probeBlocks, RANKS));
      }
      for (const { id } of active) load.free(id);
      expect(table.size, 'every id the load held was let go').to.equal(0);
    }),
    { numRuns: 400 },
  );
});
}
