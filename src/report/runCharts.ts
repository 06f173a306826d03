// Pictures of one run (`kvqual replay --plot DIR`): the cumulative distributions of TTFT and of
// per-request ITL, request throughput and queue depth (the most requests waiting at once in each
// time bucket) over virtual time, and G1 and G2 reuse over time per worker, as vega-lite line
// charts rendered to SVG in Node. Pure functions of the report: the same run gives the same bytes.
import type { TopLevelSpec } from 'vega-lite';
import { normaliseSvgIds, vegaRenderer } from './figure';
import type { RequestRecord, RunReport } from './report';

export interface RunChart {
  /** File name in the plot folder. */
  file: string;
  spec: TopLevelSpec;
}

/** Time buckets over the run's virtual duration. */
const BUCKETS = 50;

function cdfRows(values: number[]): { value: number; fraction: number }[] {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.map((value, i) => ({ value, fraction: (i + 1) / sorted.length }));
}

function lineSpec(title: string, rows: object[], x: { field: string; title: string }, y: { field: string; title: string }, series?: { field: string; title: string }): TopLevelSpec {
  // Nothing to draw (no finished request has an ITL, say): empty axes over 0..1 that say so, not scales from NaN to NaN.
  const empty = rows.length === 0;
  const scale = empty ? { scale: { domain: [0, 1] } } : {};
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: empty ? `${title}: nothing measured` : title,
    width: 480,
    height: 240,
    background: 'white',
    data: { values: rows },
    mark: { type: 'line', interpolate: series ? 'linear' : 'step-after' },
    encoding: {
      x: { field: x.field, type: 'quantitative', title: x.title, axis: { format: '~r' }, ...scale },
      y: { field: y.field, type: 'quantitative', title: y.title, axis: { format: '~r' }, ...scale },
      ...(series ? { color: { field: series.field, type: 'nominal' as const, title: series.title, legend: { orient: 'bottom' as const, direction: 'horizontal' as const } } } : {}),
    },
  };
}

/** Bucket edges (ms) over [0, end]: BUCKETS equal spans, at least 1 ms each. */
function buckets(end_ms: number): { width: number; starts: number[] } {
  const width = Math.max(end_ms / BUCKETS, 1);
  const starts: number[] = [];
  for (let start = 0; start < Math.max(end_ms, width); start += width) starts.push(start);
  return { width, starts };
}

/** The bucket of an instant: the last bucket takes the run's end too (a request that finishes as the run ends). */
function bucketOf(at_ms: number, width: number, count: number): number {
  return Math.min(Math.max(Math.floor(at_ms / width), 0), count - 1);
}

/** When a finished request ended: its last token, or its prefill pass for a request that wanted no output. */
function finishedMs(record: RequestRecord): number | null {
  if (record.status !== 'finished') return null;
  return record.last_token_ms ?? (record.e2e_ms === null ? null : record.arrival_ms + record.e2e_ms);
}

function throughputRows(records: readonly RequestRecord[], end_ms: number): object[] {
  const { width, starts } = buckets(end_ms);
  const done = starts.map(() => 0);
  for (const record of records) {
    const at = finishedMs(record);
    if (at !== null) done[bucketOf(at, width, starts.length)]++;
  }
  return starts.map((start, i) => ({ time_s: (start + width / 2) / 1000, requests_per_s: done[i] / (width / 1000) }));
}

/**
 * How many requests wait for admission (arrived, not yet admitted into a pass) changes at these
 * instants, by these amounts (arrivals +1, first admissions −1; a request skipped, or failed
 * before any admission, is not counted; one never admitted waits to the end). Instants in order.
 */
function waitingChanges(records: readonly RequestRecord[]): [number, number][] {
  const change = new Map<number, number>();
  const add = (at_ms: number, by: number) => change.set(at_ms, (change.get(at_ms) ?? 0) + by);
  for (const r of records) {
    if (r.status === 'skipped' || (r.first_admission_ms === null && r.status === 'failed')) continue;
    add(r.arrival_ms, 1);
    if (r.first_admission_ms !== null) add(r.first_admission_ms, -1);
  }
  return [...change.entries()].sort(([a], [b]) => a - b);
}

/**
 * The most requests waiting for admission at once in each time bucket (a wait of a few ms inside
 * a bucket of seconds shows, where a sample at the bucket's start would miss it). Arrivals and
 * admissions at one instant are taken together: a request admitted as it arrives never waits.
 * One row per bucket start, and one at the run's end (the last bucket's step drawn to its end).
 */
export function queueRows(records: readonly RequestRecord[], end_ms: number): { time_s: number; waiting: number }[] {
  const { width, starts } = buckets(end_ms);
  const changes = waitingChanges(records);
  const peaks: number[] = [];
  let level = 0;
  let next = 0;
  for (let bucket = 0; bucket < starts.length; bucket++) {
    let peak = level;
    for (; next < changes.length && bucketOf(changes[next][0], width, starts.length) === bucket; next++) {
      level += changes[next][1];
      peak = Math.max(peak, level);
    }
    peaks.push(peak);
  }
  const rows = starts.map((start, i) => ({ time_s: start / 1000, waiting: peaks[i] }));
  return [...rows, { time_s: (starts.at(-1)! + width) / 1000, waiting: peaks.at(-1)! }];
}

/** Reused tokens (G1 or G2) per worker, by the bucket of each request's first admission. */
function reuseRows(records: readonly RequestRecord[], end_ms: number, tier: 'g1' | 'host'): object[] {
  const { width, starts } = buckets(end_ms);
  const workers = [...new Set(records.map((r) => r.worker_id).filter((w): w is number => w !== null))].sort((a, b) => a - b);
  const tokens = new Map(workers.map((worker) => [worker, starts.map(() => 0)]));
  for (const r of records) {
    if (r.worker_id === null || r.first_admission_ms === null) continue;
    tokens.get(r.worker_id)![bucketOf(r.first_admission_ms, width, starts.length)] += tier === 'g1' ? r.g1_reused_tokens : r.host_reused_tokens;
  }
  const rows: object[] = [];
  for (const worker of workers) starts.forEach((start, i) => rows.push({ time_s: (start + width / 2) / 1000, tokens: tokens.get(worker)![i], worker: `worker ${worker}` }));
  return rows;
}

/** The charts of a run, in the order they are made, and what each shows (kvqual replay names them so). */
export const RUN_CHART_FILES = [
  { file: 'ttft-cdf.svg', what: 'TTFT, cumulative distribution' },
  { file: 'itl-cdf.svg', what: 'ITL, cumulative distribution' },
  { file: 'throughput.svg', what: 'requests finished per second over time' },
  { file: 'queue-depth.svg', what: 'most requests waiting for admission at once, over time' },
  { file: 'g1-reuse.svg', what: 'G1 tokens reused per worker over time' },
  { file: 'g2-reuse.svg', what: 'G2 tokens restored per worker over time' },
] as const;

/** The charts of a run, in a fixed order (RUN_CHART_FILES). */
export function runCharts(report: RunReport): RunChart[] {
  // The records once, as an array: the charts walk them many times (a report makes them on each read).
  const records = [...report.per_request];
  const end_ms = report.summary.virtual_duration_ms;
  const finished = records.filter((r) => r.status === 'finished');
  const ttft = finished.map((r) => r.ttft_ms).filter((v): v is number => v !== null);
  const itl = finished.map((r) => r.inter_token_latency_ms).filter((v): v is number => v !== null);
  const bucket = `${plainBucketText(buckets(end_ms).width)} buckets`;
  const time = { field: 'time_s', title: 'virtual time (s)' };
  const specs = [
    lineSpec('TTFT, cumulative distribution over finished requests', cdfRows(ttft), { field: 'value', title: 'TTFT (ms)' }, { field: 'fraction', title: 'fraction of requests' }),
    lineSpec('ITL (each request’s mean gap), cumulative distribution', cdfRows(itl), { field: 'value', title: 'ITL (ms)' }, { field: 'fraction', title: 'fraction of requests' }),
    lineSpec('Requests finished per second of virtual time', throughputRows(records, end_ms), time, { field: 'requests_per_s', title: 'requests / s' }),
    lineSpec(`Requests waiting for admission: the most at once in each of ${bucket}`, queueRows(records, end_ms), time, { field: 'waiting', title: 'requests waiting (most at once)' }),
    lineSpec('G1 tokens reused at admission, per worker', reuseRows(records, end_ms, 'g1'), time, { field: 'tokens', title: 'tokens' }, { field: 'worker', title: 'worker' }),
    lineSpec('G2 tokens restored at admission, per worker', reuseRows(records, end_ms, 'host'), time, { field: 'tokens', title: 'tokens' }, { field: 'worker', title: 'worker' }),
  ];
  return RUN_CHART_FILES.map((chart, i) => ({ file: chart.file, spec: specs[i] }));
}

/** A bucket's span in words: "20 ms", "1.5 s". */
function plainBucketText(width_ms: number): string {
  return width_ms >= 1000 ? `${Number((width_ms / 1000).toPrecision(3))} s` : `${Number(width_ms.toPrecision(3))} ms`;
}

/** Renders one chart to SVG (element ids prefixed by its file name). */
export async function renderRunChart(chart: RunChart): Promise<string> {
  const { vega, vegaLite } = vegaRenderer();
  const view = new vega.View(vega.parse(vegaLite.compile(chart.spec).spec), { renderer: 'none', logLevel: vega.Error });
  try {
    return normaliseSvgIds(await view.toSVG(), chart.file.replace(/\W+/g, '_'));
  } finally {
    view.finalize();
  }
}
