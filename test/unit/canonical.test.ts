// Tests of canonical JSON and digests (RPT-1, DET-1): sorted keys, bigints as strings, dropped
// undefined fields, and a streamed digest identical to hashing the whole canonical text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, canonicalJsonPretty, digestOf, hasCanonicalForm, sameCanonicalValue, writeCanonicalPretty } from '../../src/report/canonical';

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

test('values found the same by comparison have the same canonical text; values with different texts are never found the same', async () => {
  const fc = (await import('fast-check')).default;
  // Few keys and leaves, so that generated pairs are often equal or nearly so: 0 and -0, 1, 1n and "1", undefined and absent.
  const leaf = fc.constantFrom<unknown>(0, -0, 1, 1n, '1', 'a', null, undefined, true, false);
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
    tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('tree'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('tree'), { maxKeys: 3 })),
  }));
  // An undefined item has no canonical text: two such values are alike in having none.
  const text = (value: unknown) => {
    try {
      return canonicalJson(value);
    } catch {
      return 'no canonical text';
    }
  };
  const copy = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(copy);
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = Object.create(Object.getPrototypeOf(value));
    for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key]);
    return out;
  };
  /** A copy of `value` with its leaf number `k` (mod its leaves) replaced by `by`. */
  const tweak = (value: unknown, k: number, by: unknown): unknown => {
    let seen = 0;
    const leaves = (v: unknown): number => (typeof v === 'object' && v !== null ? Object.values(v).reduce((sum: number, x) => sum + leaves(x), 0) : 1);
    const target = k % Math.max(1, leaves(value));
    const walk = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(walk);
      if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([key, x]) => [key, walk(x)]));
      return seen++ === target ? by : v;
    };
    return walk(value);
  };
  // Pairs of unrelated values, and of a value and a copy with one leaf replaced (often by an equal one).
  const pairs = fc.oneof(fc.tuple(tree, tree), fc.tuple(tree, fc.nat(), leaf).map(([a, k, by]) => [a, tweak(a, k, by)] as [unknown, unknown]));
  let same = 0;
  let apart = 0;
  fc.assert(
    fc.property(pairs, ([a, b]) => {
      assert.equal(sameCanonicalValue(a, copy(a)), true, 'a value and its copy');
      if (sameCanonicalValue(a, b)) {
        same++;
        assert.equal(text(a), text(b));
      } else if (text(a) !== text(b)) apart++;
    }),
    { numRuns: 3000, seed: 1893 },
  );
  assert.ok(same > 100 && apart > 100, `both outcomes are met (${same} the same, ${apart} apart)`);
  // Compared, a value that writes the same text may still be "not shown the same" (its digest must then be computed).
  assert.equal(sameCanonicalValue({ a: 1, b: 2 }, { b: 2, a: 1 }), false);
  assert.equal(sameCanonicalValue(1n, '1'), false);
  assert.equal(sameCanonicalValue({ a: 1 }, new Map([['a', 1]])), false, 'a map writes no text');
  assert.equal(sameCanonicalValue([1, [2, { x: 0 }]], [1, [2, { x: -0 }]]), true);
  assert.equal(sameCanonicalValue([1, [2, { x: 0 }]], [1, [2, { x: 1 }]]), false);
  assert.equal(sameCanonicalValue({ x: undefined }, {}), false);
});

test('hasCanonicalForm says whether the writer writes a value without an error', async () => {
  const fc = (await import('fast-check')).default;
  const leaf = fc.constantFrom<unknown>(0, -0, 1.5, 1n, 'a', null, undefined, true, Number.NaN, Number.POSITIVE_INFINITY, new Map(), new Set([1]), () => 1, Symbol('s'));
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
    tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('tree'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('tree'), { maxKeys: 3 })),
  }));
  const writes = (value: unknown) => {
    try {
      digestOf(value);
      return true;
    } catch (error) {
      assert.ok(error instanceof TypeError, String(error));
      return false;
    }
  };
  let written = 0;
  fc.assert(
    fc.property(tree, (value) => {
      assert.equal(hasCanonicalForm(value), writes(value));
      if (writes(value)) written++;
    }),
    { numRuns: 3000, seed: 1893 },
  );
  assert.ok(written > 300 && written < 2700, `both outcomes are met (${written} written)`);
});
