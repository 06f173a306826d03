// Growing typed arrays: a bigger copy when an index outgrows the array, so structures keyed by
// small integers (block ids, slots) keep their fields in flat arrays instead of objects.

/** Length at least `minLength`, doubling from `length` (and at least 16). */
function grownLength(length: number, minLength: number): number {
  let grown = Math.max(length, 16);
  while (grown < minLength) grown *= 2;
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
