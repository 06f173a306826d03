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

/** A copy of `array` at least `minLength` long, zero beyond the old length. */
export function grownUint8(array: Uint8Array, minLength: number): Uint8Array<ArrayBuffer> {
  const grown = new Uint8Array(grownLength(array.length, minLength));
  grown.set(array);
  return grown;
}
