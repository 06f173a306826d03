// Unit tests of the compact structures behind block ids: the id table (retain, release, reuse,
// bigint and 32-bit-word lookups agree), the open-addressing index against a Map, rank sets as
// bits past 32 ranks, intrusive slot lists, counts per value, the hash memo (same hashes with or
// without it), and arrays by id reserved whole once large.
import { test } from 'node:test';
import { grownIdArray, Int32Pool } from '../../src/collections/typedArrays';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BlockIds, NO_BLOCK_ID } from '../../src/collections/blockIds';
import { BlockSlots, NO_SLOT, SlotList } from '../../src/collections/blockSlots';
import { hashPromptBlocks } from '../../src/hash';
import { OpenIndex } from '../../src/collections/openIndex';
import { namedChunk } from '../../src/prompt';
import { distributionMs } from '../../src/report/metrics';
import { RankSetsByBlock } from '../../src/router/rankSets';
import { ValueCounts } from '../../src/collections/valueCounts';

/** A small deterministic generator for the randomised comparisons. */
function draws(seed: number): (bound: number) => number {
  let state = seed;
  return (bound) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % bound;
  };
}

test('an id is kept while held, forgotten when the last holder lets go, and then reused', () => {
  const ids = new BlockIds();
  const a = ids.acquire(0xfedcba9876543210n);
  assert.equal(ids.acquire(0xfedcba9876543210n), a, 'the same hash has the same id');
  ids.release(a);
  assert.equal(ids.idOf(0xfedcba9876543210n), a, 'still held once');
  ids.release(a);
  assert.equal(ids.idOf(0xfedcba9876543210n), NO_BLOCK_ID);
  assert.equal(ids.size, 0);
  const b = ids.acquire(7n);
  assert.equal(b, a, 'the freed id is reused');
  assert.equal(ids.hashOf(b), 7n);
  assert.throws(() => {
    ids.release(b);
    ids.release(b);
  }, /released more often than retained/);
});

test('a hash found by its 32-bit words and by its bigint has one id', () => {
  const ids = new BlockIds();
  const byWords = ids.acquireWords(0x76543210, 0xfedcba98 | 0);
  assert.equal(ids.hashOf(byWords), 0xfedcba9876543210n);
  assert.equal(ids.acquire(0xfedcba9876543210n), byWords);
  assert.equal(ids.idOf(0xfedcba9876543211n), NO_BLOCK_ID);
  assert.throws(() => ids.idOf(1n << 64n), RangeError);
  assert.throws(() => ids.idOf(-1n), RangeError);
});

test('the open index finds, inserts and removes like a Map, for one- and two-word keys', () => {
  const next = draws(42);
  for (const keyWords of [1, 2] as const) {
    const index = new OpenIndex(keyWords);
    const reference = new Map<string, number>();
    for (let step = 0; step < 20_000; step++) {
      const key0 = next(500) - 250;
      const key1 = keyWords === 2 ? next(3) : 0;
      const name = `${key0}/${key1}`;
      if (next(3) === 0) {
        assert.equal(index.remove(key0, key1), reference.get(name) ?? -1);
        reference.delete(name);
      } else if (reference.has(name)) {
        assert.equal(index.find(key0, key1), reference.get(name));
      } else {
        assert.equal(index.find(key0, key1), -1);
        index.insert(step, key0, key1);
        reference.set(name, step);
      }
      assert.equal(index.size, reference.size);
    }
    for (const [name, value] of reference) {
      const [key0, key1] = name.split('/').map(Number);
      assert.equal(index.find(key0, key1), value);
    }
  }
});

test('rank sets keep ranks past 32 and list them in ascending order', () => {
  const sets = new RankSetsByBlock();
  sets.add(3, 1);
  sets.add(3, 0);
  sets.add(5, 2);
  sets.add(3, 40);
  assert.deepEqual(sets.ranks(3), [0, 1, 40]);
  assert.deepEqual(sets.ranks(5), [2], 'widening kept the other blocks');
  assert.equal(sets.has(3, 40), true);
  sets.delete(3, 1);
  sets.delete(3, 0);
  sets.delete(3, 40);
  assert.equal(sets.isEmpty(3), true);
  assert.equal(sets.isEmpty(99), true);
});

test('a slot list keeps its order through appends, unlinks and moves to the back', () => {
  const list = new SlotList();
  for (const slot of [4, 1, 7, 2]) list.pushBack(slot);
  list.moveToBack(1);
  list.remove(7);
  list.moveToBack(2);
  const order: number[] = [];
  for (let slot = list.first(); slot !== -1; slot = list.after(slot)) order.push(slot);
  assert.deepEqual(order, [4, 1, 2]);
  assert.equal(list.size, 3);
  assert.equal(list.has(7), false);
});

test('a slot list links a slot back after any slot or at the front, and unlinks undone in reverse restore the order exactly', () => {
  const order = (list: SlotList) => {
    const slots: number[] = [];
    for (let slot = list.first(); slot !== -1; slot = list.after(slot)) slots.push(slot);
    return slots;
  };
  const list = new SlotList();
  for (const slot of [4, 1, 7, 2, 9]) list.pushBack(slot);
  const removed: [number, number][] = [];
  for (const slot of [7, 4, 9, 2]) {
    removed.push([slot, list.before(slot)]);
    list.remove(slot);
  }
  assert.deepEqual(order(list), [1]);
  for (const [slot, before] of removed.reverse()) list.insertAfter(slot, before);
  assert.deepEqual(order(list), [4, 1, 7, 2, 9]);
  assert.equal(list.size, 5);
  list.insertAfter(40, NO_SLOT);
  list.insertAfter(41, 9);
  list.insertAfter(42, 1);
  assert.deepEqual(order(list), [40, 4, 1, 42, 7, 2, 9, 41]);
  const backwards: number[] = [];
  for (let slot = 41; slot !== -1; slot = list.before(slot)) backwards.push(slot);
  assert.deepEqual(backwards, [41, 9, 2, 7, 42, 1, 4, 40], 'the links both ways agree');
});

test('a slot list links slots past 32,767 as it does the first ones (its 16-bit links widen)', () => {
  const list = new SlotList();
  const model: number[] = [];
  const draw = draws(3);
  for (let slot = 0; slot < 40_000; slot++) {
    list.pushBack(slot);
    model.push(slot);
  }
  for (let i = 0; i < 5_000; i++) {
    // Slots on both sides of 32,768, so that links cross it both ways.
    const slot = i % 2 === 0 ? 32_768 + draw(7_000) : draw(32_768);
    if (!list.has(slot)) continue;
    model.splice(model.indexOf(slot), 1);
    if (i % 3 === 0) list.remove(slot);
    else {
      list.moveToBack(slot);
      model.push(slot);
    }
  }
  const order: number[] = [];
  for (let slot = list.first(); slot !== NO_SLOT; slot = list.after(slot)) order.push(slot);
  assert.deepEqual(order, model);
  assert.equal(list.size, model.length);
});

test('counts per value give the same distribution as the values themselves', () => {
  const next = draws(7);
  const values = Array.from({ length: 5000 }, () => (next(4) === 0 ? 75_000_000 : 15_000_000 + next(3) * 1_000_003));
  const counts = new ValueCounts();
  const halves = [new ValueCounts(), new ValueCounts()];
  values.forEach((value, i) => {
    counts.add(value);
    halves[i % 2].add(value);
  });
  const merged = new ValueCounts();
  for (const half of halves) merged.addCounts(half);
  const sorted = [...values].sort((a, b) => a - b);
  let total = 0;
  for (const value of sorted) total += value;
  const expected = {
    count: sorted.length,
    mean: total / sorted.length / 1e6,
    p50: sorted[Math.ceil(0.5 * sorted.length) - 1] / 1e6,
    p90: sorted[Math.ceil(0.9 * sorted.length) - 1] / 1e6,
    p99: sorted[Math.ceil(0.99 * sorted.length) - 1] / 1e6,
    max: sorted[sorted.length - 1] / 1e6,
  };
  assert.deepEqual(distributionMs(counts), expected);
  assert.deepEqual(distributionMs(merged), expected);
  assert.deepEqual(distributionMs(values), expected);
  assert.deepEqual(distributionMs([]), { count: 0, mean: null, p50: null, p90: null, p99: null, max: null }, 'nothing measured: null, not 0');
});

test('counts split anywhere and merged in any order give the counts of the whole, and merging leaves the parts as they were', () => {
  // Few distinct values in long runs (as a request's token gaps): a part may hold only one run,
  // nothing at all, or a run still open when it is merged.
  const runs = fc.array(fc.record({ value: fc.integer({ min: 0, max: 3 }), times: fc.integer({ min: 1, max: 5 }) }), { maxLength: 12 });
  fc.assert(
    fc.property(runs, fc.array(fc.nat(), { maxLength: 4 }), (spec, cuts) => {
      const values = spec.flatMap(({ value, times }) => Array.from({ length: times }, () => value * 1_000_003));
      const bounds = [0, ...cuts.map((cut) => cut % (values.length + 1)).sort((a, b) => a - b), values.length];
      const parts = bounds.slice(1).map((end, i) => ValueCounts.of(values.slice(bounds[i], end)));
      const before = parts.map((part) => part.ascending());
      const merged = new ValueCounts();
      merged.add(7); // a run of its own, open while the parts come in
      for (const part of [...parts].reverse()) merged.addCounts(part);
      const expected = new Map<number, number>([[7, 1]]);
      for (const value of values) expected.set(value, (expected.get(value) ?? 0) + 1);
      assert.deepEqual(merged.ascending(), [...expected].sort((a, b) => a[0] - b[0]));
      assert.equal(merged.count, values.length + 1);
      assert.deepEqual(parts.map((part) => part.ascending()), before);
    }),
    { numRuns: 300, seed: 11 },
  );
  assert.deepEqual(new ValueCounts().ascending(), []);
});


test('an Int32 pool hands back arrays of the length asked for, and keeps no more elements than its limit', () => {
  const pool = new Int32Pool(10);
  const [a, b, c] = [pool.take(4), pool.take(4), pool.take(6)];
  pool.give(a);
  pool.give(c); // 4 + 6 = 10 elements: kept
  pool.give(b); // would make 14: dropped
  assert.equal(pool.take(4), a);
  assert.notEqual(pool.take(4), b, 'the array beyond the limit was not kept');
  assert.equal(pool.take(6), c);
  assert.equal(pool.take(6).length, 6);
});

test('the open index inserts a key only when absent, in one probe, returning what is there otherwise', () => {
  const index = new OpenIndex(2);
  assert.equal(index.insertAbsent(7, 1, 2), -1);
  assert.equal(index.insertAbsent(8, 1, 2), 7, 'present: the stored value, unchanged');
  assert.equal(index.find(1, 2), 7);
  for (let k = 0; k < 100; k++) assert.equal(index.insertAbsent(k, k, 5), -1, 'new keys, through several resizes');
  assert.equal(index.size, 101);
  for (let k = 0; k < 100; k++) assert.equal(index.find(k, 5), k);
});

test('stores of one kind share a word per block: the first holder is found through it, the others through their tables', () => {
  const ids = new BlockIds();
  const family = ids.slotFamily('G1');
  assert.equal(ids.slotFamily('G1'), family, 'one family per kind');
  assert.notEqual(ids.slotFamily('G2'), family);
  const [a, b] = [new BlockSlots(ids, family), new BlockSlots(ids, family)];
  const id = ids.acquire(7n);
  const other = ids.acquire(8n);
  const inA = a.insert(id);
  const inB = b.insert(id);
  assert.deepEqual([a.slotOf(id), b.slotOf(id), a.has(other), b.has(other)], [inA, inB, false, false]);
  assert.equal(a.insertIfAbsent(id), NO_SLOT, 'already here, through the family word');
  assert.equal(b.insertIfAbsent(id), NO_SLOT, 'already here, through the table');
  a.removeAt(inA);
  assert.deepEqual([a.has(id), b.slotOf(id), a.size, b.size], [false, inB, 0, 1], 'the first holder left; the second still finds it');
  const again = a.insertIfAbsent(id);
  assert.notEqual(again, NO_SLOT);
  assert.deepEqual([a.slotOf(id), b.slotOf(id)], [again, inB], 'back in the first store, beside the second');
  b.removeAt(inB);
  a.removeAt(again);
  assert.deepEqual([a.has(id), b.has(id), a.size + b.size], [false, false, 0]);
  ids.release(id);
  assert.equal(ids.idOf(7n), NO_BLOCK_ID, 'every store released its hold');
  // A slot too large for a family word is kept in the table.
  const big = new BlockSlots(ids, ids.slotFamily('big'));
  const many = Array.from({ length: (1 << 19) + 2 }, (_, i) => ids.acquire(BigInt(1000 + i)));
  const slots = many.map((blockId) => big.insert(blockId));
  assert.deepEqual([big.slotOf(many[0]), big.slotOf(many[many.length - 1]), big.size], [slots[0], slots[slots.length - 1], many.length]);
  for (const slot of slots) big.removeAt(slot);
  assert.equal(big.size, 0);
  assert.equal(big.has(many[many.length - 1]), false);
});

test('stores of one kind find their blocks as a map per store does, looking in their tables only for blocks some store keeps in one', () => {
  const op = fc.record({ store: fc.nat(3), block: fc.nat(11), remove: fc.boolean() });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 150 }), fc.boolean(), (ops, stuck) => {
      const ids = new BlockIds();
      const family = ids.slotFamily('G2');
      const stores = Array.from({ length: 4 }, () => new BlockSlots(ids, family));
      const blocks = Array.from({ length: 12 }, (_, i) => ids.acquire(BigInt(100 + i)));
      // A count stuck at its ceiling is read as "look in the table" and stays so.
      if (stuck) {
        family.tableHolders = grownIdArray(family.tableHolders, blocks[0] + 1);
        family.tableHolders[blocks[0]] = 0xff;
      }
      const model = stores.map(() => new Map<number, number>());
      for (const { store, block, remove } of ops) {
        const id = blocks[block];
        const slots = model[store];
        if (remove && slots.has(id)) {
          stores[store].removeAt(slots.get(id)!);
          slots.delete(id);
        } else if (!remove && !slots.has(id)) slots.set(id, stores[store].insert(id));
        for (let s = 0; s < stores.length; s++) for (const each of blocks) assert.equal(stores[s].slotOf(each), model[s].get(each) ?? NO_SLOT);
        const inTables = blocks.map((each) => model.filter((slots) => slots.has(each)).length - (model.some((slots) => slots.has(each)) && family.owners[each] !== 0 ? 1 : 0));
        assert.deepEqual(
          blocks.map((each) => family.tableHolders[each] ?? 0),
          inTables.map((count, i) => (stuck && i === 0 ? 0xff : count)),
          'each block counts the stores keeping it in their tables',
        );
      }
    }),
    { numRuns: 300 },
  );
});

test('a family names at most 4,095 stores; the rest keep every entry in their tables', () => {
  const ids = new BlockIds();
  const family = ids.slotFamily('G2');
  const stores = Array.from({ length: 4097 }, () => new BlockSlots(ids, family));
  const id = ids.acquire(9n);
  const last = stores[4096];
  const slot = last.insert(id);
  assert.equal(last.slotOf(id), slot);
  assert.equal(stores[4095].has(id), false);
  assert.equal(family.owners[id] ?? 0, 0, 'the family word stays free: store 4,097 cannot be named');
  last.removeAt(slot);
  assert.equal(last.has(id), false);
});

test('acquiring a prompt’s blocks at once gives the ids and references one by one would', () => {
  // Words of five blocks, four words each (low, high, then two words acquireAllWords skips); the third repeats the first.
  const words = Int32Array.from([1, 2, 9, 9, 3, -4, 9, 9, 1, 2, 9, 9, 0x7fffffff, -1, 9, 9, 5, 0, 9, 9]);
  const [together, oneByOne] = [new BlockIds(), new BlockIds()];
  oneByOne.acquire(5n); // an id held already
  together.acquire(5n);
  const ids = new Int32Array(5);
  together.acquireAllWords(words, 4, ids);
  const expected = [0, 1, 2, 3, 4].map((i) => oneByOne.acquireWords(words[4 * i], words[4 * i + 1]));
  assert.deepEqual([...ids], expected);
  assert.equal(ids[0], ids[2], 'a block met twice has one id');
  assert.equal(ids[4], together.idOf(5n), 'the held id is found');
  for (const id of new Set(ids)) {
    const holds = expected.filter((e) => e === id).length;
    for (let n = 0; n < holds; n++) together.release(id);
  }
  assert.equal(together.size, 1, 'each block was retained once per occurrence: only the id held before is left');
});

test('an array by id grows by doubling while small, then is reserved whole: contents kept, zero beyond', () => {
  assert.equal(grownIdArray(new Int32Array(16), 100).length, 128);
  const small = new Int32Array(1 << 16);
  for (let i = 0; i < small.length; i++) small[i] = i + 1;
  const reserved = grownIdArray(small, (1 << 16) + 1);
  // 64 MB at once: mapped by the system, and resident only where written.
  assert.equal(reserved.byteLength, 1 << 26);
  assert.ok(reserved.subarray(0, small.length).every((value, i) => value === i + 1), 'the old contents are kept');
  assert.equal(reserved[1 << 16], 0);
  assert.equal(reserved[reserved.length - 1], 0);
  assert.equal(grownIdArray(reserved, reserved.length + 1).length, 2 * reserved.length, 'past the reservation it doubles again');
  // Where the system refuses that much address space at once, the array grows as any other.
  const refusing = (length: number) => {
    if (length * 4 >= 1 << 26) throw new RangeError('Array buffer allocation failed');
    return new Int32Array(length);
  };
  const doubled = grownIdArray(small, (1 << 16) + 1, refusing);
  assert.equal(doubled.length, 1 << 17);
  assert.deepEqual([doubled[0], doubled[(1 << 16) - 1], doubled[1 << 16]], [1, 1 << 16, 0]);
  const bytes = grownIdArray(new Uint8Array(1 << 16).fill(7), (1 << 16) + 1);
  assert.equal(bytes.byteLength, 1 << 26);
  assert.deepEqual([bytes[0], bytes[(1 << 16) - 1], bytes[1 << 16]], [7, 7, 0]);
});

test('ids past the reserving size keep their hashes, references and rank sets', () => {
  const ids = new BlockIds();
  const sets = new RankSetsByBlock();
  const count = (1 << 16) + 5000;
  for (let i = 0; i < count; i++) {
    const id = ids.acquire(BigInt(i) * 0x9e3779b97f4a7c15n % (1n << 64n));
    assert.equal(id, i);
    if (i % 3 === 0) sets.add(id, i % 70);
    if (i % 6 === 0) sets.add(id, 69 - (i % 70));
  }
  for (const i of [0, 1, 65535, 65536, 65537, count - 1]) {
    assert.equal(ids.hashOf(i), BigInt(i) * 0x9e3779b97f4a7c15n % (1n << 64n), `hash of id ${i}`);
    const expected = i % 3 !== 0 ? [] : [...new Set([i % 70, ...(i % 6 === 0 ? [69 - (i % 70)] : [])])].sort((a, b) => a - b);
    assert.deepEqual(sets.ranks(i), expected, `ranks of id ${i}`);
    assert.equal(sets.isEmpty(i), expected.length === 0);
  }
  assert.equal(sets.isEmpty(count + 10), true, 'an id never added, inside the reserved cells');
  ids.release(count - 1);
  assert.equal(ids.idOf(BigInt(count - 1) * 0x9e3779b97f4a7c15n % (1n << 64n)), NO_BLOCK_ID);
});

test('the id table behaves as a map from hash to a count of holders, also for hashes that share a low or a high word', () => {
  // Few hashes, many sharing their low 32 bits (they meet in the table's cells and are told apart by
  // their high word) or their high bits, through long runs of acquires and releases.
  const hashes = [0n, 1n, 2n, 1n << 32n, (1n << 32n) | 1n, (5n << 32n) | 1n, (7n << 32n) | 2n, (1n << 63n) | 1n, 0xffffffffffffffffn, 0xffffffff00000001n, 12345678901234567n, (12345n << 32n) | 0xfffffffen];
  const step = fc.record({ acquire: fc.boolean(), which: fc.nat(hashes.length - 1) });
  fc.assert(
    fc.property(fc.array(step, { minLength: 10, maxLength: 300, size: 'max' }), (steps) => {
      const ids = new BlockIds();
      const holders = new Map<bigint, number>();
      const idOfHash = new Map<bigint, number>();
      for (const { acquire, which } of steps) {
        const hash = hashes[which];
        const held = holders.get(hash) ?? 0;
        if (acquire) {
          const id = ids.acquire(hash);
          if (held > 0) assert.equal(id, idOfHash.get(hash), 'a held hash keeps its id');
          idOfHash.set(hash, id);
          holders.set(hash, held + 1);
        } else if (held > 0) {
          ids.release(idOfHash.get(hash)!);
          holders.set(hash, held - 1);
        }
        let live = 0;
        for (const other of hashes) {
          const count = holders.get(other) ?? 0;
          if (count > 0) live++;
          assert.equal(ids.idOf(other), count > 0 ? idOfHash.get(other) : NO_BLOCK_ID, `id of ${other}`);
          if (count > 0) assert.equal(ids.hashOf(idOfHash.get(other)!), other);
        }
        assert.equal(ids.size, live);
      }
    }),
    { numRuns: 200, seed: 1893 },
  );
});

test('hashes alike in their low 32 bits (a crafted log) keep ids of their own, are found, and leave the table whole when released in any order', () => {
  const table = new BlockIds();
  const hashes = Array.from({ length: 5000 }, (_, i) => (BigInt(i + 1) << 32n) | 0x1234n);
  const ids = hashes.map((hash) => table.acquire(hash));
  assert.equal(new Set(ids).size, hashes.length);
  hashes.forEach((hash, i) => assert.equal(table.idOf(hash), ids[i]));
  for (let i = 0; i < hashes.length; i += 2) table.release(ids[i]);
  hashes.forEach((hash, i) => assert.equal(table.idOf(hash), i % 2 === 0 ? NO_BLOCK_ID : ids[i]));
  for (let i = 1; i < hashes.length; i += 2) table.release(ids[i]);
  assert.equal(table.size, 0);
});

test('a large id table grows where it is: held hashes keep their ids, forgotten ones stay forgotten, and every release finds its cell', () => {
  const table = new BlockIds();
  const draw = draws(41);
  const hashOf = (i: number) => (BigInt(i + 1) * 0x9e3779b97f4a7c15n) % (1n << 64n);
  const idOf = new Map<number, number>();
  const cellsOf = () => (table as unknown as { cells: Int32Array }).cells;
  // The first table of 65,536 cells or more is reserved whole (see tableCells); growing past it, with
  // ids let go (and reused) between growths, the table stays in that reservation.
  let reservation: ArrayBufferLike | null = null;
  for (let i = 0; i < 130_000; i++) {
    idOf.set(i, table.acquire(hashOf(i)));
    if (draw(4) === 0) {
      const gone = draw(i + 1);
      if (idOf.has(gone)) {
        table.release(idOf.get(gone)!);
        idOf.delete(gone);
      }
    }
    if (reservation === null && cellsOf().length >= 2 * 65_536) reservation = cellsOf().buffer;
  }
  assert.equal(cellsOf().length, 2 * 262_144, 'the table grew twice past its first reserved size');
  assert.equal(cellsOf().buffer, reservation, 'and stayed where it was');
  assert.equal(table.size, idOf.size);
  for (let i = 0; i < 130_000; i++) assert.equal(table.idOf(hashOf(i)), idOf.get(i) ?? NO_BLOCK_ID, `hash ${i}`);
  for (const id of idOf.values()) table.release(id);
  assert.equal(table.size, 0);
  for (let i = 0; i < 130_000; i += 997) assert.equal(table.idOf(hashOf(i)), NO_BLOCK_ID);
});
