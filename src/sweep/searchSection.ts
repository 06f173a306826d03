// The `search` section of sweep.json and of a shard's result: the search as the sweep file gave it,
// the base config's text (the winner's config is written from it) and, per point run, the values
// of the metrics the search reads. Owns its schema, merging the sections of shards, and reading a
// document's points back as the search's results, so `sweep merge` answers the search as the
// unsharded sweep does.
import { z } from 'zod';
import { SweepError } from './spec';
import type { Evaluate, PointResult } from './search';

export const SearchSectionSchema = z.strictObject({
  /** The sweep file's `search`, as written. */
  spec: z.record(z.string(), z.unknown()),
  /** The base config's text (YAML). */
  base_config: z.string(),
  /** Point index → metric key ("p99 ttft_ms", "goodput") → value (null: not measured). */
  values: z.record(z.string().regex(/^(0|[1-9]\d*)$/, 'a point index'), z.record(z.string(), z.number().nullable())),
});
export type SearchSection = z.infer<typeof SearchSectionSchema>;

/** Merges the search sections of a sweep's shards: each must ask the same search of the same base; the values are pooled. */
export function mergeSearchSections(shards: readonly { file: string; search: SearchSection | undefined }[]): SearchSection | undefined {
  const [first] = shards;
  if (first === undefined || first.search === undefined) {
    const other = shards.find((shard) => shard.search !== undefined);
    if (other) throw new SweepError(`${other.file}: has a search, but ${first.file} does not, though both name one sweep; the file is damaged`);
    return undefined;
  }
  const values: SearchSection['values'] = {};
  for (const { file, search } of shards) {
    if (search === undefined || JSON.stringify(search.spec) !== JSON.stringify(first.search.spec) || search.base_config !== first.search.base_config) {
      throw new SweepError(`${file}: its search differs from ${first.file}'s, though both name one sweep; the file is damaged`);
    }
    Object.assign(values, search.values);
  }
  return { ...first.search, values: Object.fromEntries(Object.entries(values).sort(([a], [b]) => Number(a) - Number(b))) };
}

/** The search's view of a sweep document's points: an Evaluate that reads each result from the document (never runs anything). */
export function documentResults(points: readonly { index: number; clean: boolean }[], section: SearchSection): Evaluate {
  const clean = new Map(points.map((point) => [point.index, point.clean]));
  return (indices) => {
    const results = new Map<number, PointResult>();
    for (const index of indices) {
      const values = section.values[String(index)];
      if (values === undefined || !clean.has(index)) throw new SweepError(`point ${index}: the search needs its result, and the sweep holds none`);
      results.set(index, { clean: clean.get(index)!, values });
    }
    return Promise.resolve(results);
  };
}
