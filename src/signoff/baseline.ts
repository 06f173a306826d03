// What changed since an earlier sign-off (`npm run qualify -- --baseline <signoff.json>`):
// scenarios added, removed or renamed, results, digests and measured values changed (old → new).
// Pure: the caller reads the file (jsonSchema.ts checks it).
import type { BaselineDiff, SignoffJson } from './jsonSchema';
import { compareText } from '../order';

export type { BaselineDiff };

/** A scenario of the baseline or of this run, as the comparison sees it. */
export interface Compared {
  key: string;
  uri: string;
  name: string;
  status: string;
  digest: string | null;
  measurements: { label: string; text: string }[];
  /** Its steps as written, one per line (a renamed scenario keeps them). */
  steps: string;
}

/**
 * What changed since the baseline: scenarios added, removed, renamed or moved (matched by file and
 * name, then by file and steps or by place, then by name and steps in another file: renamed and
 * moved ones are listed with where they were and are), results changed, digests changed, measured values changed (old → new).
 */
export function diffBaseline(baseline: SignoffJson, current: Compared[]): BaselineDiff {
  const before = baseline.scenarios.map((s) => ({
    key: s.key,
    uri: s.uri,
    name: s.name,
    status: s.status,
    digest: s.digest,
    measurements: s.measurements,
    steps: stepsText(s.steps),
  }));
  const pairs: [Compared, Compared][] = [];
  const leftBefore = new Set(before);
  const leftNow = new Set(current);
  for (const now of current) {
    const same = [...leftBefore].find((b) => b.uri === now.uri && b.name === now.name);
    if (same) {
      pairs.push([same, now]);
      leftBefore.delete(same);
      leftNow.delete(now);
    }
  }
  const renamed: BaselineDiff['renamed'] = [];
  for (const now of [...leftNow]) {
    // Renamed: the same steps in the same file, else the same place (file and line).
    const same = [...leftBefore].find((b) => b.uri === now.uri && b.steps === now.steps) ?? [...leftBefore].find((b) => b.key === now.key);
    if (same) {
      pairs.push([same, now]);
      renamed.push({ key: now.key, name: now.name, before: same.name, after: now.name });
      leftBefore.delete(same);
      leftNow.delete(now);
    }
  }
  for (const now of [...leftNow]) {
    // Moved: the same name and steps in another file (a feature file moved or split); named by both places.
    const same = [...leftBefore].find((b) => b.name === now.name && b.steps === now.steps);
    if (same) {
      pairs.push([same, now]);
      renamed.push({ key: now.key, name: now.name, before: same.key, after: now.key });
      leftBefore.delete(same);
      leftNow.delete(now);
    }
  }
  const results: BaselineDiff['results'] = [];
  const digests: BaselineDiff['digests'] = [];
  const measurements: BaselineDiff['measurements'] = [];
  for (const [b, now] of pairs) {
    if (b.status !== now.status) results.push({ key: now.key, name: now.name, before: b.status, after: now.status });
    if (b.digest !== now.digest) digests.push({ key: now.key, name: now.name, before: b.digest, after: now.digest });
    const old = new Map(b.measurements.map((m) => [m.label, m.text]));
    for (const m of now.measurements) {
      const was = old.get(m.label);
      if (was !== undefined && was !== m.text) measurements.push({ key: now.key, name: now.name, before: was, after: m.text });
      if (was === undefined) measurements.push({ key: now.key, name: now.name, before: null, after: m.text });
      old.delete(m.label);
    }
    for (const [, text] of old) measurements.push({ key: now.key, name: now.name, before: text, after: null });
  }
  const byKey = (a: { key: string }, b: { key: string }) => compareText(a.key, b.key);
  return {
    campaign: baseline.campaign,
    date: baseline.date,
    commit: baseline.subject.commit,
    verdict: baseline.verdict,
    added: [...leftNow].map((s) => ({ key: s.key, name: s.name, before: null, after: s.status })).sort(byKey),
    removed: [...leftBefore].map((s) => ({ key: s.key, name: s.name, before: s.status, after: null })).sort(byKey),
    renamed: renamed.sort(byKey),
    results: results.sort(byKey),
    digests: digests.sort(byKey),
    measurements,
  };
}

/** A scenario's steps as written, one per line, for matching a renamed scenario. */
export function stepsText(steps: { kind: string; keyword: string; text: string }[]): string {
  return steps
    .filter((step) => step.kind === 'step')
    .map((step) => `${step.keyword} ${step.text}`)
    .join('\n');
}

/** "2 added, 1 removed, …" or "nothing changed". */
export function baselineSummary(diff: BaselineDiff): string {
  const parts = [
    [diff.added.length, `scenario${diff.added.length === 1 ? '' : 's'} added`],
    [diff.removed.length, `scenario${diff.removed.length === 1 ? '' : 's'} removed`],
    [diff.renamed.length, `scenario${diff.renamed.length === 1 ? '' : 's'} renamed`],
    [diff.results.length, `result${diff.results.length === 1 ? '' : 's'} changed`],
    [diff.digests.length, `digest${diff.digests.length === 1 ? '' : 's'} changed`],
    [diff.measurements.length, `measured value${diff.measurements.length === 1 ? '' : 's'} changed`],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} ${what}`);
  return parts.length ? parts.join(', ') : 'nothing changed';
}
