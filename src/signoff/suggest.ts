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

/** A step a suggestion can name: its phrase, the phrase in words, and the level of scenario it fits. */
export interface StepCandidate {
  phrase: string;
  words: string;
  level: 'router' | 'engine' | 'either';
}

const LEVEL_WORDS = { router: 'router-level', engine: 'engine-level', either: 'either level' } as const;

/**
 * The `count` steps nearest to a step's text, those that fit the scenario's level (its own or
 * either) first, each group nearest first; with no level known, nearest first.
 */
export function nearestSteps(text: string, candidates: readonly StepCandidate[], level: 'router' | 'engine' | null, count = 3): StepCandidate[] {
  const fits = (c: StepCandidate) => level === null || c.level === level || c.level === 'either';
  const seen = new Set<string>();
  return candidates
    .filter((c) => !seen.has(c.phrase) && seen.add(c.phrase))
    .map((candidate, index) => ({ candidate, index, score: phraseDistance(text, candidate.phrase) }))
    .sort((x, y) => Number(fits(y.candidate)) - Number(fits(x.candidate)) || x.score - y.score || x.index - y.index)
    .slice(0, count)
    .map((entry) => entry.candidate);
}

/**
 * What an undefined step says, suggestions first in words (those of the scenario's level first),
 * then, for developers, the definition cucumber would start one from (`snippet`).
 */
export function undefinedStepMessage(text: string, suggestions: readonly StepCandidate[], level: 'router' | 'engine' | null, snippet: string): string {
  const lines = [
    suggestions.length === 0
      ? `No step matches "${text}", and no step is defined at all.`
      : `No step matches "${text}". Did you mean${level === null ? '' : ` (this scenario is ${LEVEL_WORDS[level]}: steps that fit it first)`}:`,
    ...suggestions.map((s) => `  - ${s.words}   (${LEVEL_WORDS[s.level]})`),
    'Every step, with its level and a real example, is in docs/steps.md.',
  ];
  return snippet === '' ? lines.join('\n') : [...lines, '', 'For developers, a new step definition would start as:', snippet].join('\n');
}
