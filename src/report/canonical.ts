// Canonical JSON and digests (RPT-1, DET-1): object keys sorted, arrays in order, bigints as
// decimal strings, no undefined; the digest (SHA-256 of the canonical text) identifies a run.
import { createHash, Hash } from 'node:crypto';

export type Canonical = null | boolean | number | string | Canonical[] | { [key: string]: Canonical };

/** Converts a value to its canonical form: sorted keys, bigint → string, undefined fields dropped. */
export function canonicalize(value: unknown, path = '$'): Canonical {
  if (value === null) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${path}: ${value} has no canonical JSON form`);
      return Object.is(value, -0) ? 0 : value;
    case 'bigint':
      return value.toString();
    case 'object': {
      if (Array.isArray(value)) return value.map((item, i) => canonicalize(item, `${path}[${i}]`));
      if (value instanceof Map || value instanceof Set) throw new TypeError(`${path}: convert Map/Set to a sorted array first`);
      const out: { [key: string]: Canonical } = {};
      for (const key of Object.keys(value as object).sort()) {
        const field = (value as Record<string, unknown>)[key];
        if (field === undefined) continue;
        out[key] = canonicalize(field, `${path}.${key}`);
      }
      return out;
    }
    default:
      throw new TypeError(`${path}: a ${typeof value} has no canonical JSON form`);
  }
}

/** Canonical JSON text (compact, sorted keys). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value));
}

/** Canonical JSON text, indented for people. Same content as canonicalJson. */
export function canonicalJsonPretty(value: unknown): string {
  return JSON.stringify(canonicalize(value), null, 2);
}

/** SHA-256 of the canonical JSON, as "sha256:<hex>". Streams the text into the hash, never building it whole. */
export function digestOf(value: unknown): string {
  const writer = new CanonicalWriter(createHash('sha256'));
  writer.value(value, null, '$');
  writer.flush();
  return `sha256:${writer.hash.digest('hex')}`;
}

/**
 * Where a value sits, for error messages only: its parent's location and its key or index. The
 * path text ("$.a[3].b") is built only when an error is thrown, not for every value written.
 */
interface Location {
  parent: Location | null;
  step: string | number;
}

function pathOf(parent: Location | null, step: string | number): string {
  const steps: (string | number)[] = [step];
  for (let at = parent; at !== null; at = at.parent) steps.push(at.step);
  let path = '';
  for (let i = steps.length - 1; i >= 0; i--) {
    const part = steps[i];
    path += typeof part === 'number' ? `[${part}]` : i === steps.length - 1 ? part : `.${part}`;
  }
  return path;
}

/** An object's own keys in sorted order, each with its JSON text and colon, for one key list. */
interface KeyOrder {
  keys: string[];
  sorted: string[];
  labels: string[];
}

/** Writes exactly the text of canonicalJson(value), piece by piece, into a hash. */
class CanonicalWriter {
  private pending = '';
  /** Sorted key orders by the object's first key, for objects of the same shape written again and again. */
  private readonly orders = new Map<string, KeyOrder[]>();

  constructor(readonly hash: Hash) {}

  flush(): void {
    this.hash.update(this.pending);
    this.pending = '';
  }

  private write(text: string): void {
    this.pending += text;
    if (this.pending.length >= 1 << 16) this.flush();
  }

  value(value: unknown, parent: Location | null, step: string | number): void {
    if (value === null) return this.write('null');
    switch (typeof value) {
      case 'boolean':
        return this.write(value ? 'true' : 'false');
      case 'string':
        return this.write(JSON.stringify(value));
      case 'number':
        if (!Number.isFinite(value)) throw new TypeError(`${pathOf(parent, step)}: ${value} has no canonical JSON form`);
        return this.write(JSON.stringify(Object.is(value, -0) ? 0 : value));
      case 'bigint':
        return this.write(JSON.stringify(value.toString()));
      case 'object':
        return Array.isArray(value) ? this.array(value, { parent, step }) : this.object(value as object, parent, step);
      default:
        throw new TypeError(`${pathOf(parent, step)}: a ${typeof value} has no canonical JSON form`);
    }
  }

  private array(items: unknown[], at: Location): void {
    this.write('[');
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.write(',');
      this.value(items[i], at, i);
    }
    this.write(']');
  }

  private object(value: object, parent: Location | null, step: string | number): void {
    if (value instanceof Map || value instanceof Set) throw new TypeError(`${pathOf(parent, step)}: convert Map/Set to a sorted array first`);
    const order = this.orderOf(Object.keys(value));
    const at: Location = { parent, step };
    this.write('{');
    let first = true;
    for (let i = 0; i < order.sorted.length; i++) {
      const key = order.sorted[i];
      const field = (value as Record<string, unknown>)[key];
      if (field === undefined) continue;
      if (!first) this.write(',');
      first = false;
      this.write(order.labels[i]);
      this.value(field, at, key);
    }
    this.write('}');
  }

  /** The sorted order of a key list, remembered for the next object with the same keys. */
  private orderOf(keys: string[]): KeyOrder {
    const head = keys.length === 0 ? '' : keys[0];
    let known = this.orders.get(head);
    if (known === undefined) {
      known = [];
      this.orders.set(head, known);
    }
    for (const order of known) if (sameKeys(order.keys, keys)) return order;
    const sorted = [...keys].sort();
    const order: KeyOrder = { keys, sorted, labels: sorted.map((key) => `${JSON.stringify(key)}:`) };
    if (known.length < 8) known.push(order);
    return order;
  }
}

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
