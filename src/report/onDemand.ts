// Read-only arrays whose items are made when read: a report's per-request records are built while
// its digest and its file are written, then dropped, instead of all held at once (on a large run
// they were what raised the process's peak memory as the report was built).
import { inspect } from 'node:util';

/**
 * An array of `length` items, item i made by `make(i)` each time it is read (equal items, not the
 * same object). It reads as an array everywhere (indexes, length, iteration, map/filter/find,
 * Array.isArray, JSON, Object.keys, deep equality); writing to it throws a TypeError.
 */
export function onDemandArray<T>(length: number, make: (index: number) => T): readonly T[] {
  const target: T[] = new Array<T>(length);
  const indexOf = (key: string | symbol): number => {
    if (typeof key !== 'string' || !/^(?:0|[1-9]\d*)$/.test(key)) return -1;
    const index = Number(key);
    return index < length ? index : -1;
  };
  // What console.log and the debugger show: the items, made for the occasion.
  Object.defineProperty(target, inspect.custom, {
    value: (depth: number, options: object) => inspect(Array.from({ length }, (_, i) => make(i)), { ...options, depth }),
  });
  return new Proxy(target, {
    get(array, key, receiver) {
      const index = indexOf(key);
      return index >= 0 ? make(index) : Reflect.get(array, key, receiver);
    },
    has(array, key) {
      return indexOf(key) >= 0 || Reflect.has(array, key);
    },
    getOwnPropertyDescriptor(array, key) {
      const index = indexOf(key);
      if (index < 0) return Reflect.getOwnPropertyDescriptor(array, key);
      return { value: make(index), writable: false, enumerable: true, configurable: true };
    },
    ownKeys(array) {
      return [...Array.from({ length }, (_, i) => String(i)), ...Reflect.ownKeys(array)];
    },
    // Assignment and push come here too (a proxy without a set trap defines the property).
    defineProperty() {
      throw new TypeError('a report\'s items are read-only');
    },
    deleteProperty() {
      throw new TypeError('a report\'s items are read-only');
    },
  });
}
