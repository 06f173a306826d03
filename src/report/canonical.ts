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

/** SHA-256 of the canonical JSON, as "sha256:<hex>". */
export function digestOf(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}
