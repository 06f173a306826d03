// Growing typed arrays: a bigger copy when an index outgrows the array, so structures keyed by
// small integers (block ids, slots) keep their fields in flat arrays instead of objects; arrays by
// block id reserved whole once large (resident only where written); pools of per-request buffers.

/** Length at least `minLength`, doubling from `length` (and at least 16). */
function grownLength(length: number, minLength: number): number {
  let grown = Math.max(length, 16);
  while (grown < minLength) grown *= 2;
  return grown;
}

/**
 * Arrays indexed by block id (one per field of every id) are read at random and may grow to millions
 * of entries. Past ID_ARRAY_RESERVE_FROM entries they are made ID_ARRAY_RESERVED_BYTES long at
 * once: an allocation that large is mapped straight from the operating system, already zero, and
 * only the pages written are ever resident. Memory then follows the highest id in use, page by
 * page, instead of the next power of two, and the array is not copied again (nor left behind for
 * the collector, in pieces the allocator may not give back) until ids outgrow that size. Their
 * readers must treat zero as "nothing here": filling the rest would make every page resident.
 */
const ID_ARRAY_RESERVE_FROM = 1 << 16;
/** Above the largest size glibc's malloc ever serves from its heap (32 MB on 64-bit). */
const ID_ARRAY_RESERVED_BYTES = 1 << 26;

/** The kinds of typed array kept by block id. */
type IdArray = Int32Array | Int16Array | Uint8Array;

/** Makes an array of the same kind as `array`. */
function sameKind<T extends Int32Array | Int16Array | Uint16Array | Uint8Array>(array: T): (length: number) => T {
  const make = array.constructor as new (length: number) => T;
  return (length) => new make(length);
}

/**
 * A zeroed array of at least `minLength` elements made by `make`: the reserved length past
 * ID_ARRAY_RESERVE_FROM, or the doubled one when the system refuses that much address space at once
 * (a machine that does not overcommit memory), as any other array grows.
 */
function grownIdStorage<T extends IdArray>(length: number, minLength: number, bytes: number, make: (length: number) => T): T {
  const doubled = grownLength(length, minLength);
  const reserved = doubled > ID_ARRAY_RESERVE_FROM ? Math.max(doubled, ID_ARRAY_RESERVED_BYTES / bytes) : doubled;
  if (reserved === doubled) return make(doubled);
  try {
    return make(reserved);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return make(doubled);
  }
}

/** A new zeroed Int32Array of at least `minLength` elements, made as arrays by id grow (see ID_ARRAY_RESERVE_FROM): reserved whole when large. */
export function zeroedIdArray(minLength: number): Int32Array<ArrayBuffer> {
  return grownIdStorage(0, minLength, Int32Array.BYTES_PER_ELEMENT, (length) => new Int32Array(length));
}

/**
 * A copy of an array indexed by block id (32, 16 or 8 bits), of the same kind, at least `minLength`
 * long (see ID_ARRAY_RESERVE_FROM): zero beyond the old length, which is never to be filled.
 * `make` makes the new array (the system's allocator by default).
 */
export function grownIdArray<T extends IdArray>(array: T, minLength: number, make: (length: number) => T = sameKind(array)): T {
  const grown = grownIdStorage(array.length, minLength, array.BYTES_PER_ELEMENT, make);
  grown.set(array);
  return grown;
}

/** A copy of `array` at least `minLength` long, zero beyond the old length. */
export function grownInt32(array: Int32Array, minLength: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(grownLength(array.length, minLength));
  grown.set(array);
  return grown;
}

/**
 * Int32Arrays handed back for reuse, by length: a run's per-request buffers return when their
 * requests end and serve later requests of the same size, instead of one new buffer per request
 * left for the garbage collector. A taken array holds whatever it held before.
 */
export class Int32Pool {
  private readonly free = new Map<number, Int32Array[]>();
  /** Elements held in the pool now. */
  private pooled = 0;

  /** `limit`: the most elements the pool keeps (arrays handed back beyond it are left to the collector). */
  constructor(private readonly limit = 1 << 20) {}

  take(length: number): Int32Array {
    const array = this.free.get(length)?.pop();
    if (array === undefined) return new Int32Array(length);
    this.pooled -= length;
    return array;
  }

  /** Hands an array back; the giver must not use it (or any view of it) again. */
  give(array: Int32Array): void {
    if (this.pooled + array.length > this.limit) return;
    this.pooled += array.length;
    let list = this.free.get(array.length);
    if (list === undefined) {
      list = [];
      this.free.set(array.length, list);
    }
    list.push(array);
  }
}

/** A copy of `array` at least `minLength` long, zero beyond the old length. */
export function grownUint8(array: Uint8Array, minLength: number): Uint8Array<ArrayBuffer> {
  const grown = new Uint8Array(grownLength(array.length, minLength));
  grown.set(array);
  return grown;
}

/**
 * Per-slot counts and indexes that are nearly always small: 16 bits each until a value needs more,
 * then 32 (see widenedInt32). Half the bytes of an Int32Array for the fields of millions of slots.
 */
export type NarrowInts = Uint16Array | Int16Array | Int32Array;

/** A copy of `array`, of the same kind, at least `minLength` long, zero beyond the old length. */
export function grownNarrow<T extends NarrowInts>(array: T, minLength: number): T {
  const grown = sameKind(array)(grownLength(array.length, minLength));
  grown.set(array);
  return grown;
}

/** The same values in an Int32Array (a 16-bit field is about to hold a value it cannot), or `array` when it is one already. */
export function widenedInt32(array: NarrowInts): Int32Array {
  return array instanceof Int32Array ? array : Int32Array.from(array);
}
