// Tests of canonical JSON and digests (RPT-1, DET-1): sorted keys, bigints as strings, dropped
// undefined fields, and a streamed digest identical to hashing the whole canonical text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, canonicalJsonPretty, digestOf, writeCanonicalPretty } from '../../src/report/canonical';

const whole = (value: unknown) => `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;

test('canonical JSON sorts keys, keeps array order, writes bigints as strings and drops undefined', () => {
  assert.equal(canonicalJson({ b: 1, a: [3, 1, { d: undefined, c: 18446744073709551615n }], e: -0 }), '{"a":[3,1,{"c":"18446744073709551615"}],"b":1,"e":0}');
  assert.throws(() => canonicalJson({ x: Number.NaN }), /\$\.x: NaN/);
  assert.throws(() => canonicalJson({ m: new Map() }), /\$\.m: convert Map\/Set/);
});

test('the streamed digest equals the digest of the whole canonical text', () => {
  const values: unknown[] = [
    null,
    'text with "quotes" and ünïcode',
    { z: [1.5, -0, true, null, 'x'], a: { nested: { deeper: [1n, 2n] } }, skipped: undefined },
    Array.from({ length: 5000 }, (_, i) => ({ id: `r${i}`, ms: i / 7, tags: ['a', 'b'], big: BigInt(i) ** 3n })),
  ];
  for (const value of values) assert.equal(digestOf(value), whole(value));
});

test('a digest changes with any value and not with key order', () => {
  assert.equal(digestOf({ a: 1, b: 2 }), digestOf({ b: 2, a: 1 }));
  assert.notEqual(digestOf({ a: 1, b: 2 }), digestOf({ a: 1, b: 3 }));
});

test('the streamed pretty writer gives exactly canonicalJsonPretty, for generated values and a whole run report', async () => {
  const fc = (await import('fast-check')).default;
  const streamed = (value: unknown) => {
    let text = '';
    writeCanonicalPretty(value, (piece) => (text += piece));
    return text;
  };
  fc.assert(
    fc.property(fc.jsonValue(), (value) => streamed(value) === canonicalJsonPretty(value)),
    { numRuns: 500, seed: 1893 },
  );
  for (const value of [{}, [], { a: [] }, { b: {} }, [[]], [{}], { z: 1, a: { y: [1, 2, { c: 3 }], x: null } }, 5n, 'text']) {
    assert.equal(streamed(value), canonicalJsonPretty(value));
  }
  // A report large enough to cross the writer's 64 KB pieces.
  const big = { rows: Array.from({ length: 3000 }, (_, i) => ({ id: `r${i}`, values: [i, i / 3, -i], nested: { ok: i % 2 === 0 } })) };
  const pieces: string[] = [];
  writeCanonicalPretty(big, (piece) => pieces.push(piece));
  assert.ok(pieces.length > 1, 'written in pieces');
  assert.equal(pieces.join(''), canonicalJsonPretty(big));
});

test('text beyond ASCII is written as UTF-8 whole, across pieces, in the file and in the digest', () => {
  const words = ['ünïcode', '名前', 'emoji 😀 pair', 'lone \ud800 surrogate', 'plain', 'x'.repeat(70_000), `${'é'.repeat(30_000)}`];
  const value = { rows: Array.from({ length: 4000 }, (_, i) => ({ [words[i % 5]]: words[(i + 1) % 5], i })), long: words.slice(5) };
  const pieces: string[] = [];
  writeCanonicalPretty(value, (piece) => pieces.push(piece));
  assert.ok(pieces.length > 2, 'written in several pieces');
  assert.equal(pieces.join(''), canonicalJsonPretty(value));
  assert.ok(!pieces.some((piece) => piece.includes('\ufffd')), 'no character split between pieces');
  assert.equal(digestOf(value), whole(value));
});

test('writers that share a buffer or run inside one another, and one that failed, write the same text as alone', () => {
  const big = { rows: Array.from({ length: 3000 }, (_, i) => ({ id: `r${i}`, values: [i, i * 2, `x${i}`] })), name: 'ünïcode' };
  const small = { b: 2, a: [1, { d: 4, c: 3 }] };
  const smallDigest = `sha256:${createHash('sha256').update(canonicalJson(small)).digest('hex')}`;
  let text = '';
  const nested: string[] = [];
  // A digest made inside the pretty writer's sink, while the pretty writer holds its buffer.
  writeCanonicalPretty(big, (piece) => {
    text += piece;
    nested.push(digestOf(small));
  });
  assert.equal(text, canonicalJsonPretty(big));
  assert.ok(nested.length > 1 && nested.every((digest) => digest === smallDigest));
  assert.throws(() => digestOf({ bad: Number.NaN, rows: big.rows }), /\$\.bad: NaN has no canonical JSON form/);
  assert.equal(digestOf(small), smallDigest, 'after a writer failed');
  assert.equal(digestOf(big), `sha256:${createHash('sha256').update(canonicalJson(big)).digest('hex')}`);
  assert.equal(digestOf(small), smallDigest, 'after a large digest');
});
