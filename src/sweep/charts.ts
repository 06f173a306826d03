// Pictures of a sweep: one vega-lite line chart per metric against each varied parameter but the
// seed (one line per value of a second varied parameter): the line is the mean over the seeds and
// any other parameters, a band spans their lowest to highest value. Rendered to SVG in Node, with
// the HTML page (at most 1,280 px wide) that shows them beside the table of points. Same
// sweep document (wall times aside, which are never drawn), same bytes. Which charts a sweep has
// (and that no two varied parameters would give one file name) is known before any point runs.
import type { TopLevelSpec } from 'vega-lite';
import { normaliseSvgIds, vegaRenderer } from '../report/figure';
import { runsText, type SweepDocument, type MetricName } from './results';
import { type ParameterValue, SweepError } from './spec';

export interface SweepChart {
  metric: MetricName;
  parameter: string;
  /** The second parameter drawn as one line per value, if the sweep varies one. */
  series: string | null;
  /** File name under charts/. */
  file: string;
}

const safeName = (text: string) => text.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');

/**
 * Whether a file name under charts/ is one a sweep writes (`<metric>--<parameter>.svg`, the metric
 * one of `metrics`): the names an earlier sweep with other parameters may have left, and the only
 * ones a sweep may remove there.
 */
export function isSweepChartName(name: string, metrics: readonly string[]): boolean {
  const match = /^([A-Za-z0-9_]+)--([A-Za-z0-9_]+)\.svg$/.exec(name);
  return match !== null && metrics.some((metric) => safeName(metric) === match[1]);
}

/** What the charts of a sweep depend on: its parameters, their values and the metrics, not its points. */
type ChartedSweep = Pick<SweepDocument, 'parameters' | 'values' | 'metrics'>;

/** Parameters with more than one value, in sweep order. */
export function variedParameters(document: ChartedSweep): string[] {
  return document.parameters.filter((path) => new Set((document.values[path] ?? []).map((value) => JSON.stringify(value))).size > 1);
}

/**
 * The parameters charts are drawn against: every varied one but the seed. A seed is no setting:
 * its runs are folded into each chart (their mean as the line, their range as a band).
 */
export function chartedParameters(document: ChartedSweep): string[] {
  return variedParameters(document).filter((path) => path !== 'seed');
}

/**
 * Metrics with no chart: the infinite-cache ceilings are the trace's own (its blocks, not the
 * cluster's settings), so against a setting they are flat lines; the share of the ceiling realised
 * is charted instead.
 */
const UNCHARTED_METRICS: ReadonlySet<string> = new Set(['prefix_ceiling_token_ratio', 'prefix_ceiling_block_ratio', 'prefix_ceiling_request_ratio']);

/**
 * Every chart of a sweep: each metric (but the ceilings) against each charted parameter. Two charted parameters
 * whose file names would be one ("a/b" and "a_b") are a SweepError naming both.
 */
export function sweepCharts(document: ChartedSweep): SweepChart[] {
  const charted = chartedParameters(document);
  const byName = new Map<string, string>();
  for (const parameter of charted) {
    const other = byName.get(safeName(parameter));
    if (other !== undefined) {
      throw new SweepError(`${other} and ${parameter} would have charts of one file name (<metric>--${safeName(parameter)}.svg); vary them in two sweeps`);
    }
    byName.set(safeName(parameter), parameter);
  }
  return charted.flatMap((parameter) => {
    const series = charted.find((other) => other !== parameter) ?? null;
    return document.metrics.filter((metric) => !UNCHARTED_METRICS.has(metric)).map((metric) => ({ metric, parameter, series, file: `${safeName(metric)}--${safeName(parameter)}.svg` }));
  });
}

const label = (value: ParameterValue) => (typeof value === 'string' ? value : JSON.stringify(value));

/** One drawn value of a chart: at an x value (and series value), the mean of the runs there and their lowest and highest. */
export interface BandRow {
  x: string;
  series: string;
  mean: number;
  min: number;
  max: number;
  /** How many points' values were folded into it. */
  runs: number;
}

/**
 * The rows of one chart: the points grouped by their x value and series value (first seen first),
 * each group's measured values folded into their mean, lowest and highest. Points with nothing
 * measured (null) are left out.
 */
export function bandRows(document: SweepDocument, chart: SweepChart): BandRow[] {
  const groups = new Map<string, { x: string; series: string; values: number[] }>();
  for (const point of document.points) {
    const value = point.metrics[chart.metric];
    if (value === null) continue;
    const x = label(point.parameters[chart.parameter]);
    const series = chart.series === null ? 'all' : label(point.parameters[chart.series]);
    const key = JSON.stringify([x, series]);
    const group = groups.get(key) ?? { x, series, values: [] };
    group.values.push(value);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ x, series, values }) => ({
    x,
    series,
    mean: Number((values.reduce((sum, value) => sum + value, 0) / values.length).toFixed(6)),
    min: Math.min(...values),
    max: Math.max(...values),
    runs: values.length,
  }));
}

/** Width of a chart's plot area (px): with its axes and legend the SVG stays within 600 px, so two sit side by side on a 1,280 px page. */
const PLOT_WIDTH = 380;

/** What a chart draws besides its metric's name: its rows, whether several runs fold into a value (a band), and how many points have nothing measured. */
interface ChartData {
  rows: BandRow[];
  banded: boolean;
  left: number;
}

function chartData(document: SweepDocument, chart: SweepChart): ChartData {
  const rows = bandRows(document, chart);
  return { rows, banded: rows.some((row) => row.runs > 1), left: document.points.filter((point) => point.metrics[chart.metric] === null).length };
}

/**
 * The vega-lite spec of one chart (x is ordinal in sweep order, so 0, 4096, 65536 are evenly
 * spaced): a line through the mean of the runs at each value and, where several runs fold into
 * one value (seeds, other parameters), a band from their lowest to their highest.
 */
export function chartSpec(document: SweepDocument, chart: SweepChart): TopLevelSpec {
  return specOf(document, chart, chart.metric, chartData(document, chart));
}

/** The spec of `chart` with `metric` as the metric's name in its title and axis, drawing `data`. */
function specOf(document: SweepDocument, chart: SweepChart, metric: string, { rows, banded, left }: ChartData): TopLevelSpec {
  const order = (path: string) => [...new Set((document.values[path] ?? []).map(label))];
  const folded = variedParameters(document).filter((p) => p !== chart.parameter && p !== chart.series);
  // Points with nothing measured (null) are left out of the lines, and said to be; every value stays on the x axis.
  const subtitleParts = [folded.length > 0 ? `line: mean over ${folded.join(', ')}${banded ? '; band: lowest to highest' : ''}` : '', left > 0 ? `${left} point(s) with nothing measured left out` : ''].filter(Boolean);
  const subtitle = subtitleParts.length > 0 ? subtitleParts.join('; ') : undefined;
  const color = chart.series === null ? { value: '#4c78a8' } : { field: 'series', type: 'nominal' as const, sort: order(chart.series), title: chart.series, legend: { titleLimit: PLOT_WIDTH + 100, labelLimit: PLOT_WIDTH, symbolOpacity: 1, orient: 'bottom' as const, direction: 'horizontal' as const } };
  const y = { type: 'quantitative' as const, title: metric, axis: { format: '~r' } };
  const line = { mark: { type: 'line' as const, point: true }, encoding: { y: { field: 'mean', ...y } } };
  const band = { mark: { type: 'area' as const, opacity: 0.18 }, encoding: { y: { field: 'min', ...y }, y2: { field: 'max' } } };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: `${metric} vs ${chart.parameter}`, limit: PLOT_WIDTH + 160, ...(subtitle ? { subtitle, subtitleLimit: PLOT_WIDTH + 160 } : {}) },
    width: PLOT_WIDTH,
    height: 220,
    background: 'white',
    data: { values: rows },
    encoding: {
      x: { field: 'x', type: 'ordinal', sort: order(chart.parameter), scale: { domain: order(chart.parameter) }, title: chart.parameter, axis: { labelAngle: 0, titleLimit: PLOT_WIDTH } },
      color,
    },
    layer: banded ? [band, line] : [line],
  };
}

/**
 * The parsed vega specs of the charts drawn in this process, by template: a chart's spec with a
 * mark in place of its metric's name and of its rows. The charts of one sweep against one
 * parameter differ only in those (18 metrics, one template), and compiling the vega-lite spec and
 * parsing the vega one is about half of drawing a chart; vega reads the name and the rows only
 * when it runs (the name is text in the title and the axis, the rows the inline data), so a
 * template filled in draws the same bytes as the chart's own spec (a test compares every chart of
 * its sweeps both ways). Bounded: a process drawing many sweeps keeps the latest templates.
 */
export class ChartTemplates {
  private readonly parsed = new Map<string, unknown>();
  hits = 0;

  constructor(private readonly capacity = 64) {}

  /** The parsed spec of `key`, compiled from `spec` the first time. */
  runtime(key: string, spec: () => TopLevelSpec): unknown {
    const known = this.parsed.get(key);
    if (known !== undefined) {
      this.hits++;
      return known;
    }
    const runtime = parsedSpec(spec());
    if (this.parsed.size >= this.capacity) this.parsed.delete(this.parsed.keys().next().value!);
    this.parsed.set(key, runtime);
    return runtime;
  }
}

const CHART_TEMPLATES = new ChartTemplates();

/** A vega-lite spec compiled to vega and parsed: what a vega View draws. */
function parsedSpec(spec: TopLevelSpec): ReturnType<ReturnType<typeof vegaRenderer>['vega']['parse']> {
  const { vega, vegaLite } = vegaRenderer();
  return vega.parse(vegaLite.compile(spec).spec);
}

/** The mark standing for a metric's name in a template (letters only: the same text in JSON and in vega's generated code). */
const METRIC_MARK = 'kvqualChartMetricMark';
/** The rows a template is compiled with (of a chart's shape; vega-lite copies inline data as it is). */
const ROWS_MARK: BandRow[] = [{ x: 'kvqual-chart-rows-mark', series: 'kvqual-chart-rows-mark', mean: 0, min: 0, max: 0, runs: 1 }];

/**
 * A copy of a parsed template with the metric's name for its mark in every text and `rows` as its
 * inline data (the one `$ingest`); null when the template is not one (no single `$ingest`).
 */
function filledTemplate(template: unknown, metric: string, rows: BandRow[]): unknown {
  let ingests = 0;
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string') return value.includes(METRIC_MARK) ? value.split(METRIC_MARK).join(metric) : value;
    if (Array.isArray(value)) return value.map(fill);
    if (value === null || typeof value !== 'object') return value;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      if (key === '$ingest') {
        ingests++;
        copy[key] = rows.map((row) => ({ ...row }));
      } else copy[key] = fill(field);
    }
    return copy;
  };
  const filled = fill(template);
  return ingests === 1 ? filled : null;
}

/** The parsed vega spec of a chart: from its template when its metric's name can stand in one, else compiled from its own spec. */
function chartRuntime(document: SweepDocument, chart: SweepChart, templates: ChartTemplates | null): unknown {
  const data = chartData(document, chart);
  const own = () => parsedSpec(specOf(document, chart, chart.metric, data));
  if (templates === null || !/^[A-Za-z0-9_]+$/.test(chart.metric)) return own();
  const template = specOf(document, chart, METRIC_MARK, { ...data, rows: ROWS_MARK });
  const key = JSON.stringify(template);
  // The mark stands only for the metric: in the title and each layer's y axis, nowhere else (a parameter so named).
  if (key.split(METRIC_MARK).length - 1 !== 1 + (data.banded ? 2 : 1)) return own();
  return filledTemplate(templates.runtime(key, () => template), chart.metric, data.rows) ?? own();
}

/**
 * Renders one chart to SVG (ids prefixed by the chart's file name, so a page can inline several),
 * from a template of `templates` (see ChartTemplates; null draws it from its own spec).
 */
export async function renderChart(document: SweepDocument, chart: SweepChart, templates: ChartTemplates | null = CHART_TEMPLATES): Promise<string> {
  const { vega } = vegaRenderer();
  const view = new vega.View(chartRuntime(document, chart, templates) as ReturnType<typeof vega.parse>, { renderer: 'none', logLevel: vega.Error });
  try {
    return normaliseSvgIds(await view.toSVG(), safeName(chart.file));
  } finally {
    view.finalize();
  }
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A column heading that may wrap after a dot, an underscore or a bracket (long field paths would widen the table past the page). */
const headingHtml = (text: string) => escapeHtml(text).replace(/([._\]])(?=.)/g, '$1<wbr>');

/** What the page says where there are no charts: why. */
function noChartsText(document: SweepDocument): string {
  return variedParameters(document).includes('seed')
    ? '<p>Only the seed varies, so there is nothing to chart against; the table below gives each run.</p>'
    : '<p>No parameter takes more than one value, so there is nothing to chart.</p>';
}

/**
 * The HTML page, at most 1,280 px wide (charts two to a row, the table of points scrolling inside
 * the page if it is wider): what varied, a capacity search's answer (`searchHtml`,
 * see searchReport.ts) if the sweep has one, the charts (linked from charts/), and every point
 * without wall times.
 */
export function sweepHtml(document: SweepDocument, charts: readonly SweepChart[], searchHtml = ''): string {
  const byParameter = chartedParameters(document).map((parameter) => {
    const images = charts.filter((chart) => chart.parameter === parameter).map((chart) => `<img src="charts/${escapeHtml(chart.file)}" alt="${escapeHtml(`${chart.metric} vs ${chart.parameter}`)}">`);
    return `<h2>Against ${escapeHtml(parameter)}</h2>\n<div class="charts">\n${images.join('\n')}\n</div>`;
  });
  const folded = variedParameters(document).includes('seed') && byParameter.length > 0 ? ' Each chart draws the mean over the seeds as its line and their lowest to highest value as a band.' : '';
  const header = ['point', ...document.parameters, 'clean', ...document.metrics, 'report digest (sha256)'].map((cell) => `<th>${headingHtml(cell)}</th>`).join('');
  const rows = document.points.map((point) => {
    const cells = [String(point.index), ...document.parameters.map((p) => label(point.parameters[p])), point.clean ? 'yes' : `no: ${point.problem ?? ''}`, ...document.metrics.map((m) => (point.metrics[m] === null ? '–' : String(point.metrics[m]))), `${point.digest.replace(/^sha256:/, '').slice(0, 12)}…`];
    return `<tr>${cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`;
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kvqual sweep of ${escapeHtml(document.base)}</title>
<style>*{box-sizing:border-box}body{font-family:system-ui,sans-serif;margin:1.5em auto;padding:0 1em;max-width:1280px}p{overflow-wrap:anywhere}img{border:1px solid #ddd;max-width:100%;height:auto}.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,560px),1fr));gap:8px}.points{overflow-x:auto}table{border-collapse:collapse;font-size:11px}td,th{border:1px solid #ccc;padding:2px 4px;text-align:right}th{vertical-align:bottom;font-weight:600}</style>
</head>
<body>
<h1>Sweep of ${escapeHtml(document.base)}</h1>
<p>${document.points_total} points over ${document.parameters.map(escapeHtml).join(', ') || 'nothing'}; ${escapeHtml(runsText(document.points))}.${folded} Data: <a href="sweep.csv">sweep.csv</a>, <a href="sweep.json">sweep.json</a> (with wall times). Sweep digest ${document.sweep_digest}.</p>
${searchHtml}${byParameter.join('\n') || noChartsText(document)}
<h2>Points</h2>
<div class="points">
<table>
<tr>${header}</tr>
${rows.join('\n')}
</table>
</div>
</body>
</html>
`;
}
