// "Did you mean …?": the nearest of some valid names to a misspelt one (Damerau–Levenshtein edit
// distance, with a name that only adds or drops a suffix such as "_ms" counted as near too).

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The valid name closest to `name`, or null when none is close enough to be what was meant. */
export function nearestName(name: string, candidates: readonly string[]): string | null {
  const lower = name.toLowerCase();
  let best: { candidate: string; distance: number } | null = null;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const affix = other.length > 3 && lower.length > 3 && (other.startsWith(lower) || lower.startsWith(other));
    const distance = affix ? 1 : editDistance(lower, other);
    if (best === null || distance < best.distance) best = { candidate, distance };
  }
  if (best === null) return null;
  return best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.candidate : null;
}

/** "; did you mean kv_event_lag_ms?" or nothing. */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const nearest = nearestName(name, candidates);
  return nearest === null ? '' : `; did you mean ${nearest}?`;
}
