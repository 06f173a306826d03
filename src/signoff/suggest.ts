// "Did you mean": the existing step phrases nearest to a step that matched none (a typo, a word
// changed). Phrases are cucumber expressions ("conversation {string} resumes at {duration} with
// {int} more tokens"); a step's text has values where they have parameters, so both are reduced
// to a common form (every parameter, quoted string and number becomes one placeholder, optional
// text "(s)" is kept) and ranked by edit distance over characters and over words. Pure.

const PLACEHOLDER = '§';

/** The comparable form of a phrase or a step's text. */
export function comparable(text: string): string {
  return text
    .toLowerCase()
    .replace(/\{[^}]*\}/g, PLACEHOLDER)
    .replace(/"[^"]*"|'[^']*'/g, PLACEHOLDER)
    .replace(/\((\w+)\)/g, '$1')
    .replace(/\d+(?:\.\d+)?(?:[- ]?(?:ns|us|µs|ms|s|tokens?|blocks?|gb\/s)\b)?/g, PLACEHOLDER)
    .replace(/\s+/g, ' ')
    .trim();
}

function distance<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** How far a step's text is from a phrase: 0 the same, 1 nothing in common. */
export function phraseDistance(text: string, phrase: string): number {
  const a = comparable(text);
  const b = comparable(phrase);
  const chars = distance(a, b) / Math.max(a.length, b.length, 1);
  const wa = a.split(' ');
  const wb = b.split(' ');
  const words = distance(wa, wb) / Math.max(wa.length, wb.length, 1);
  return (chars + words) / 2;
}

/** The `count` phrases nearest to a step's text, nearest first (ties in the phrases' order). */
export function nearestPhrases(text: string, phrases: string[], count = 3): string[] {
  const unique = [...new Set(phrases)];
  return unique
    .map((phrase, index) => ({ phrase, index, score: phraseDistance(text, phrase) }))
    .sort((x, y) => x.score - y.score || x.index - y.index)
    .slice(0, count)
    .map((entry) => entry.phrase);
}

/** The "did you mean" text for an undefined step, as the console and the reports print it. */
export function didYouMean(text: string, phrases: string[]): string {
  const nearest = nearestPhrases(text, phrases);
  if (nearest.length === 0) return `No step matches "${text}", and no step is defined at all.`;
  return [`No step matches "${text}". Did you mean:`, ...nearest.map((p) => `  - ${p}`), 'Every phrase, with its parameters and an example, is listed in docs/steps.md.'].join('\n');
}
