// The one-line command that replays exactly one scenario with its seed. It uses the `replay`
// profile, which has no paths of its own: cucumber adds command-line paths to a profile's paths,
// so with the default profile `file:line` would run the whole suite.

/** Quotes a word for a POSIX shell only when it needs it. */
export function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `KVQUAL_SEED=1893 npx cucumber-js --profile replay features/x.feature:24` (no seed: the default one). */
export function replayCommand(seed: number | null, uri: string, line?: number): string {
  const target = line === undefined ? uri : `${uri}:${line}`;
  return `${seed === null ? '' : `KVQUAL_SEED=${seed} `}npx cucumber-js --profile replay ${shellWord(target)}`;
}
