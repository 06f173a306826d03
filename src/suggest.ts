// "Did you mean …?": the nearest of some valid names to a misspelt one (Levenshtein distance from
// fastest-levenshtein), with a name that only adds or drops a suffix such as "_ms" counted as near.
import { distance } from 'fastest-levenshtein';

/** The valid name closest to `name`, or null when none is close enough to be what was meant. */
export function nearestName(name: string, candidates: readonly string[]): string | null {
  const lower = name.toLowerCase();
  let best: { candidate: string; distance: number } | null = null;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const affix = other.length > 3 && lower.length > 3 && (other.startsWith(lower) || lower.startsWith(other));
    const edits = affix ? 1 : distance(lower, other);
    if (best === null || edits < best.distance) best = { candidate, distance: edits };
  }
  if (best === null) return null;
  return best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.candidate : null;
}

/** "; did you mean kv_event_lag_ms?" or nothing. */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const nearest = nearestName(name, candidates);
  return nearest === null ? '' : `; did you mean ${nearest}?`;
}
