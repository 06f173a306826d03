// The one order of text that results may depend on: UTF-16 code units (JavaScript's `<`), the same
// on every machine. `localeCompare` without a pinned collation follows LANG / LC_ALL, so a sign-off
// or a digest built with it changed with the locale of the machine that ran it (found by an
// outside audit: shards run under two locales could not be merged).

/** Compares two strings by their UTF-16 code units: negative, 0 or positive, in every locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
