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
  const hash: Hash = createHash('sha256');
  const writer = new CanonicalWriter((bytes) => hash.update(bytes), false);
  writer.value(value, null, '$');
  writer.done();
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Whether for-in over a plain object gives its own keys and nothing more: Object's prototype has no
 * enumerable key (nothing in this process added one when this module loaded).
 */
const PLAIN_PROTOTYPE_CLEAN = (() => {
  for (const key in Object.prototype) return key === undefined;
  return true;
})();

/**
 * True when `a` and `b` are the same value to the canonical writer, found by comparing them, not
 * by writing them: equal primitives, or arrays of the same length and items, or objects of the same
 * prototype with the same own keys in the same order and the same fields. Then both have the
 * same canonical text (and digest), or both have none. False means only "not shown the same": two
 * values with one text (keys in another order, a bigint and its decimal string) may still differ
 * here, so a digest compared this way must be computed when this is false.
 */
export function sameCanonicalValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameCanonicalValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const prototype = Object.getPrototypeOf(a);
  if (prototype !== Object.getPrototypeOf(b)) return false;
  const others = Object.keys(b);
  let i = 0;
  if (prototype === Object.prototype && PLAIN_PROTOTYPE_CLEAN) {
    // a's own keys in order, walked without listing them when for-in gives exactly those (the
    // fuzzer compares thousands of reports: one list less of garbage each, and a's fields read
    // from its key cache).
    for (const key in a) {
      if (key !== others[i++] || !sameCanonicalValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
    }
    return i === others.length;
  }
  const keys = Object.keys(a);
  if (keys.length !== others.length) return false;
  for (; i < keys.length; i++) {
    const key = keys[i];
    if (others[i] !== key || !sameCanonicalValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * True when the canonical writer writes `value` without an error (digestOf would not throw): no
 * number that is not finite, no Map or Set, and no function, symbol or undefined where a value is
 * written (an undefined field is left out). Checked by walking it, without writing.
 */
export function hasCanonicalForm(value: unknown): boolean {
  switch (typeof value) {
    case 'boolean':
    case 'string':
    case 'bigint':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!hasCanonicalForm(value[i])) return false;
        return true;
      }
      if (value instanceof Map || value instanceof Set) return false;
      if (Object.getPrototypeOf(value) === Object.prototype && PLAIN_PROTOTYPE_CLEAN) {
        // A plain object's own keys, walked without listing them (see sameCanonicalValue).
        for (const key in value) {
          const field = (value as Record<string, unknown>)[key];
          if (field !== undefined && !hasCanonicalForm(field)) return false;
        }
        return true;
      }
      const keys = Object.keys(value);
      for (let i = 0; i < keys.length; i++) {
        const field = (value as Record<string, unknown>)[keys[i]];
        if (field !== undefined && !hasCanonicalForm(field)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Writes exactly the text of canonicalJsonPretty(value) to `sink`, in pieces of about 64 KB, never
 * building it whole (a report of a large run is written as it is produced).
 */
export function writeCanonicalPretty(value: unknown, sink: (text: string) => void): void {
  const writer = new CanonicalWriter((bytes) => sink(bytes.toString('utf8')), true);
  writer.value(value, null, '$');
  writer.done();
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
  /** The key order of canonicalJsonPretty's text (see orderOf), and its labels. */
  prettySorted: string[];
  prettyLabels: string[];
}

/**
 * A writer's buffer, kept from the last writer that finished: a run writes a digest and a report,
 * a fuzz campaign thousands of small ones, and a new 128 KB buffer each time made the collector
 * run for memory that was free again at once. A writer started while another is under way gets
 * its own.
 */
let spareBuffer: Buffer | null = null;

function takeBuffer(): Buffer {
  const buffer = spareBuffer ?? Buffer.allocUnsafe(2 * PIECE_BYTES);
  spareBuffer = null;
  return buffer;
}

/**
 * Key orders shared by every writer (a run writes its digest and its report, and a fuzz campaign
 * thousands of small reports, all of the same few shapes), for up to SHARED_ORDER_HEADS first keys;
 * a writer keeps the orders of any further first keys (objects keyed by names or ids) to itself.
 */
const SHARED_ORDERS = new Map<string, KeyOrder[]>();
const SHARED_ORDER_HEADS = 4096;

/** A key JavaScript orders as an array index: a canonical decimal integer below 2^32 − 1. */
function isArrayIndex(key: string): boolean {
  if (!/^(0|[1-9]\d*)$/.test(key)) return false;
  return Number(key) < 4294967295;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** About how many bytes the writer hands its sink at a time. */
const PIECE_BYTES = 1 << 16;

/**
 * Writes exactly the text of canonicalJson(value) (or, pretty, of canonicalJsonPretty: two-space
 * indentation as JSON.stringify(…, null, 2) lays it out), piece by piece, into a sink.
 */
class CanonicalWriter {
  /** The UTF-8 bytes written since the last flush: a piece is encoded whole, so a flush never splits a character. */
  private readonly bytes = takeBuffer();
  private used = 0;
  /** Sorted key orders by the object's first key, once SHARED_ORDERS is full (see orderOf). */
  private readonly orders = new Map<string, KeyOrder[]>();
  /** Newline and indentation of each depth (pretty only). */
  private readonly breaks: string[] = ['\n'];
  private depth = 0;

  constructor(
    /** Given each piece as a view of the writer's buffer, valid until the sink returns. */
    private readonly sink: (bytes: Buffer) => void,
    private readonly pretty: boolean,
  ) {}

  flush(): void {
    if (this.used > 0) this.sink(this.bytes.subarray(0, this.used));
    this.used = 0;
  }

  /** Gives the writer's buffer back for the next writer (the writer is not used again). */
  done(): void {
    this.flush();
    spareBuffer = this.bytes;
  }

  /** Pretty: a line break and the indentation of the current depth. */
  private newline(): void {
    if (!this.pretty) return;
    while (this.breaks.length <= this.depth) this.breaks.push(`${this.breaks[this.breaks.length - 1]}  `);
    this.write(this.breaks[this.depth]);
  }

  /** Appends a piece as UTF-8: ASCII (nearly all of it) byte by byte, anything else through Buffer.write. */
  private write(text: string): void {
    const length = text.length;
    if (this.used + 3 * length > this.bytes.length) {
      this.flush();
      if (3 * length > this.bytes.length) return this.sink(Buffer.from(text, 'utf8'));
    }
    const bytes = this.bytes;
    let at = this.used;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) {
        at = this.used + bytes.write(text, this.used, 'utf8');
        break;
      }
      bytes[at++] = code;
    }
    this.used = at;
    if (this.used >= PIECE_BYTES) this.flush();
  }

  /**
   * A string as JSON.stringify writes it: a printable ASCII string without a quote or backslash
   * (nearly every string of a report) byte by byte between quotes, any other through JSON.stringify.
   */
  private string(text: string): void {
    const length = text.length;
    if (this.used + length + 2 > this.bytes.length) this.flush();
    if (length + 2 > this.bytes.length) return this.write(JSON.stringify(text));
    const bytes = this.bytes;
    let at = this.used;
    bytes[at++] = QUOTE;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code < 0x20 || code >= 0x7f || code === QUOTE || code === BACKSLASH) return this.write(JSON.stringify(text));
      bytes[at++] = code;
    }
    bytes[at++] = QUOTE;
    this.used = at;
    if (this.used >= PIECE_BYTES) this.flush();
  }

  value(value: unknown, parent: Location | null, step: string | number): void {
    if (value === null) return this.write('null');
    switch (typeof value) {
      case 'boolean':
        return this.write(value ? 'true' : 'false');
      case 'string':
        return this.string(value);
      case 'number':
        if (!Number.isFinite(value)) throw new TypeError(`${pathOf(parent, step)}: ${value} has no canonical JSON form`);
        // JSON writes a finite number as its ToString, and -0 as 0.
        return this.write(value === 0 ? '0' : String(value));
      case 'bigint':
        return this.string(value.toString());
      case 'object':
        return Array.isArray(value) ? this.array(value, { parent, step }) : this.object(value as object, parent, step);
      default:
        throw new TypeError(`${pathOf(parent, step)}: a ${typeof value} has no canonical JSON form`);
    }
  }

  private array(items: unknown[], at: Location): void {
    this.write('[');
    if (items.length === 0) return this.write(']');
    this.depth++;
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.write(',');
      this.newline();
      this.value(items[i], at, i);
    }
    this.depth--;
    this.newline();
    this.write(']');
  }

  private object(value: object, parent: Location | null, step: string | number): void {
    if (value instanceof Map || value instanceof Set) throw new TypeError(`${pathOf(parent, step)}: convert Map/Set to a sorted array first`);
    const order = this.orderOf(Object.keys(value));
    const at: Location = { parent, step };
    this.write('{');
    let first = true;
    this.depth++;
    const keys = this.pretty ? order.prettySorted : order.sorted;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const field = (value as Record<string, unknown>)[key];
      if (field === undefined) continue;
      if (!first) this.write(',');
      first = false;
      this.newline();
      this.write(this.pretty ? order.prettyLabels[i] : order.labels[i]);
      this.value(field, at, key);
    }
    this.depth--;
    if (!first) this.newline();
    this.write('}');
  }

  /** The sorted order of a key list, remembered for the next object with the same keys. */
  private orderOf(keys: string[]): KeyOrder {
    const head = keys.length === 0 ? '' : keys[0];
    let known = SHARED_ORDERS.get(head) ?? this.orders.get(head);
    if (known === undefined) {
      known = [];
      (SHARED_ORDERS.size < SHARED_ORDER_HEADS ? SHARED_ORDERS : this.orders).set(head, known);
    }
    for (const order of known) if (sameKeys(order.keys, keys)) return order;
    const sorted = [...keys].sort();
    // canonicalJsonPretty builds a new object from the sorted keys, and JavaScript lists an object's
    // integer-like keys first, in numeric order: the pretty text keeps that order, byte for byte.
    const integerLike = sorted.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b));
    const prettySorted = [...integerLike, ...sorted.filter((key) => !isArrayIndex(key))];
    const order: KeyOrder = {
      keys,
      sorted,
      labels: sorted.map((key) => `${JSON.stringify(key)}:`),
      prettySorted,
      prettyLabels: prettySorted.map((key) => `${JSON.stringify(key)}: `),
    };
    if (known.length < 8) known.push(order);
    return order;
  }
}

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
