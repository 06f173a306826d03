// Tests that a sweep chart drawn from a template (src/sweep/charts.ts: ChartTemplates, one compiled
// and parsed vega spec for the charts that differ only in their metric and rows) is the same SVG,
// byte for byte, as the chart drawn from its own spec: with and without a band, with and without a
// line per value of a second parameter, with points left out for want of a value, with no row at
// all, and with a parameter whose name holds the template's mark; and that the templates are used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChartTemplates, renderChart, sweepCharts } from '../../src/sweep/charts';
import { METRICS, SWEEP_FORMAT, type SweepDocument } from '../../src/sweep/results';
import type { ParameterValue } from '../../src/sweep/spec';

type Metrics = SweepDocument['points'][number]['metrics'];

/** The metrics the documents chart (a few of each kind: counts, times, ratios): every chart is drawn twice. */
const CHARTED: readonly string[] = ['requests_finished', 'ttft_p99_ms', 'e2e_p50_ms', 'prefix_reuse_ratio', 'goodput'].filter((metric) => (METRICS as readonly string[]).includes(metric));

/** A sweep document over the grid `values` (first parameter slowest) charting CHARTED, each point's metric m set by `metric(index, m)`. */
function documentOf(values: Record<string, ParameterValue[]>, metric: (index: number, m: number, name: string) => number | null): SweepDocument {
  const parameters = Object.keys(values);
  let combinations: Record<string, ParameterValue>[] = [{}];
  for (const parameter of parameters) combinations = combinations.flatMap((combination) => values[parameter].map((value) => ({ ...combination, [parameter]: value })));
  return {
    format: SWEEP_FORMAT,
    sweep_digest: 'cd'.repeat(32),
    base: 'b.yaml',
    parameters,
    values,
    metrics: [...CHARTED] as SweepDocument['metrics'],
    points_total: combinations.length,
    points: combinations.map((combination, index) => ({
      index,
      parameters: combination,
      clean: true,
      problem: null,
      metrics: Object.fromEntries(METRICS.map((name, m) => [name, metric(index, m, name)])) as Metrics,
      digest: `sha256:${String(index).padStart(64, '0')}`,
      wall_ms: index,
    })),
  };
}

/** Every chart of `document` drawn both ways: the SVGs must be the same bytes. Returns how many charts came from a template. */
async function sameBothWays(document: SweepDocument): Promise<number> {
  const templates = new ChartTemplates();
  const charts = sweepCharts(document);
  assert.ok(charts.length > 0);
  for (const chart of charts) assert.equal(await renderChart(document, chart, templates), await renderChart(document, chart, null), chart.file);
  return templates.hits;
}

const spread = (index: number, m: number) => (index * 37 + m * 11) % 97 + index / 8;

test('the documents chart a metric of each kind', () => assert.ok(CHARTED.length >= 4));

test('a chart from a template is the chart drawn from its own spec, band and series or neither, and the templates are used', async () => {
  const banded = documentOf({ 'router.kv_event_lag_ms': [0, 3, 20], 'router.host_cache_hit_weight': [0.5, 1], seed: [1, 2] }, spread);
  const hits = await sameBothWays(banded);
  assert.equal(hits, sweepCharts(banded).length - 2, 'all but the first chart against each parameter came from its template');
  assert.ok((await sameBothWays(documentOf({ 'cluster.workers[0].replicas': [1, 2, 4] }, spread))) > 0, 'one parameter, one run per value: a line, no band');
});

test('a chart with points left out, or with nothing measured at all, is the chart drawn from its own spec', async () => {
  // ttft metrics unmeasured at lag 20; goodput never measured (no row).
  const document = documentOf({ 'router.kv_event_lag_ms': [0, 3, 20], seed: [1, 2] }, (index, m, name) => (name.startsWith('goodput') ? null : name.startsWith('ttft') && index >= 4 ? null : spread(index, m)));
  await sameBothWays(document);
});

test("a parameter whose name holds the template's mark is drawn from its own spec, the same", async () => {
  const document = documentOf({ 'workload.prefixes.kvqualChartMetricMark': [4, 8], seed: [1, 2] }, spread);
  assert.equal(await sameBothWays(document), 0, 'no template where the mark is not only the metric');
});
