// Canonical JSON and digests (RPT-1, DET-1): object keys sorted, arrays in order, bigints as
// decimal strings, no undefined; the digest (SHA-256 of the canonical text) identifies a run.
import { createHash } from 'node:crypto';

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
  const hash = createHash('sha256');
  let pending = '';
  writeCanonical(value, '$', (text) => {
    pending += text;
    if (pending.length >= 1 << 16) {
      hash.update(pending);
      pending = '';
    }
  });
  hash.update(pending);
  return `sha256:${hash.digest('hex')}`;
}

/** Writes exactly the text of canonicalJson(value), piece by piece. */
function writeCanonical(value: unknown, path: string, write: (text: string) => void): void {
  if (value === null) return write('null');
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return write(JSON.stringify(value));
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${path}: ${value} has no canonical JSON form`);
      return write(JSON.stringify(Object.is(value, -0) ? 0 : value));
    case 'bigint':
      return write(JSON.stringify(value.toString()));
    case 'object':
      return Array.isArray(value) ? writeArray(value, path, write) : writeObject(value as object, path, write);
    default:
      throw new TypeError(`${path}: a ${typeof value} has no canonical JSON form`);
  }
}

function writeArray(items: unknown[], path: string, write: (text: string) => void): void {
  write('[');
  items.forEach((item, i) => {
    if (i > 0) write(',');
    writeCanonical(item, `${path}[${i}]`, write);
  });
  write(']');
}

function writeObject(value: object, path: string, write: (text: string) => void): void {
  if (value instanceof Map || value instanceof Set) throw new TypeError(`${path}: convert Map/Set to a sorted array first`);
  write('{');
  let first = true;
  for (const key of Object.keys(value).sort()) {
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) continue;
    if (!first) write(',');
    first = false;
    write(`${JSON.stringify(key)}:`);
    writeCanonical(field, `${path}.${key}`, write);
  }
  write('}');
}
