// The one order of text that results may depend on: UTF-16 code units (JavaScript's `<`), the same
// on every machine. `localeCompare` without a pinned collation follows LANG / LC_ALL, so a sign-off
// or a digest built with it changed with the locale of the machine that ran it (found by an
// outside audit: shards run under two locales could not be merged).

/** Compares two strings by their UTF-16 code units: negative, 0 or positive, in every locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Natural order of identifiers for readers: runs of digits compare as numbers, the rest by
 * compareText, so TIME-2 comes before TIME-10 and G2-9 before G2-10. Locale-free like compareText;
 * equal numbers written differently (`07`, `7`) fall back to compareText, so the order is total.
 */
export function compareNatural(a: string, b: string): number {
  const left = a.match(/\d+|\D+/g) ?? [];
  const right = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const [x, y] = [left[i], right[i]];
    const numbers = /^\d/.test(x) && /^\d/.test(y);
    const order = numbers ? compareDigits(x, y) : compareText(x, y);
    if (order !== 0) return order;
  }
  return left.length - right.length || compareText(a, b);
}

/** Two runs of digits by the numbers they write, of any length (no loss of precision). */
function compareDigits(x: string, y: string): number {
  const [a, b] = [x.replace(/^0+(?=\d)/, ''), y.replace(/^0+(?=\d)/, '')];
  return a.length - b.length || compareText(a, b);
}
