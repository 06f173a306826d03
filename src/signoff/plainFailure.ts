// An assertion failure as one plain sentence a reviewer reads: what was checked, what was expected
// and what was measured, with the unit when the step recorded the measurement ("H2D wait of r2:
// expected 4 ms, measured 2 ms"). Built from chai's AssertionError (label, relation, expected,
// actual); anything else keeps its own message. Pure: steps/support/plainFailures.ts applies it.

/** The fields of chai's AssertionError this reads. */
export interface AssertionLike {
  name: string;
  message: string;
  actual?: unknown;
  expected?: unknown;
}

const RELATIONS: [RegExp, string][] = [
  [/ to (?:deep )?(?:deeply )?(?:equal|eql)\b/, ''],
  [/ to not (?:deep )?(?:deeply )?(?:equal|eql)\b/, 'anything but '],
  [/ to be (?:above|greater than)\b/, 'more than '],
  [/ to be (?:below|less than)\b/, 'less than '],
  [/ to be at least\b/, 'at least '],
  [/ to be at most\b/, 'at most '],
  [/ to (?:include|contain)\b/, 'something that includes '],
  [/ to not (?:include|contain)\b/, 'something without '],
  [/ to be within\b/, 'within '],
  [/ to be close to\b/, 'close to '],
];

function value(x: unknown, unit: string): string {
  if (x === null || x === undefined) return 'none';
  if (typeof x === 'number') return `${Number.isInteger(x) ? x : Number(x.toFixed(6))}${unit ? ` ${unit}` : ''}`;
  if (typeof x === 'string') {
    const flat = x.replace(/\s*\n\s*/g, ' / ');
    return `"${flat.length > 160 ? `${flat.slice(0, 160)}…` : flat}"`;
  }
  const text = JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  if (Array.isArray(x) && x.length === 0) return 'nothing';
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * One sentence for an assertion failure, or null when the error is not an assertion chai made.
 * `unitOf` gives the unit a step recorded for a measured number (or '').
 */
export function plainSentence(error: AssertionLike, unitOf: (measured: unknown) => string = () => ''): string | null {
  if (error.name !== 'AssertionError' || !('actual' in error) || !('expected' in error)) return null;
  const firstLine = error.message.split('\n')[0];
  const match = /^(?:(.*?): )?expected (.*)$/s.exec(firstLine);
  if (!match) return null;
  const label = match[1] ?? 'the check';
  const rest = ` ${match[2]}`;
  const relation = RELATIONS.find(([pattern]) => pattern.test(rest));
  if (!relation) return null;
  const unit = typeof error.actual === 'number' ? unitOf(error.actual) : '';
  const expectedUnit = typeof error.expected === 'number' ? unit : '';
  // Some chai checks (include on a string) leave `expected` unset: take it from their message.
  const expected =
    error.expected === undefined ? rest.slice(rest.search(relation[0]) + (rest.match(relation[0])![0].length)).trim().replace(/^'(.*)'$/, '"$1"') : value(error.expected, expectedUnit);
  return `${label}: expected ${relation[1]}${expected}, measured ${value(error.actual, unit)}.`;
}
