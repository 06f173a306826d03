// Pictures of a sweep: one vega-lite line chart per metric against each varied parameter (one
// line per value of a second varied parameter; the mean over seeds and any other parameters),
// rendered to SVG in Node, and the HTML page that shows them beside the table of points. Same
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
 * Every chart of a sweep: each metric against each varied parameter. Two varied parameters whose
 * file names would be one ("a/b" and "a_b") are a SweepError naming both.
 */
export function sweepCharts(document: ChartedSweep): SweepChart[] {
  const varied = variedParameters(document);
  const byName = new Map<string, string>();
  for (const parameter of varied) {
    const other = byName.get(safeName(parameter));
    if (other !== undefined) {
      throw new SweepError(`${other} and ${parameter} would have charts of one file name (<metric>--${safeName(parameter)}.svg); vary them in two sweeps`);
    }
    byName.set(safeName(parameter), parameter);
  }
  return varied.flatMap((parameter) => {
    const series = varied.find((other) => other !== parameter && other !== 'seed') ?? null;
    return document.metrics.map((metric) => ({ metric, parameter, series, file: `${safeName(metric)}--${safeName(parameter)}.svg` }));
  });
}

const label = (value: ParameterValue) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The vega-lite spec of one chart (x is ordinal in sweep order, so 0, 4096, 65536 are evenly spaced). */
export function chartSpec(document: SweepDocument, chart: SweepChart): TopLevelSpec {
  const order = (path: string) => [...new Set((document.values[path] ?? []).map(label))];
  const rows = document.points
    .filter((point) => point.metrics[chart.metric] !== null)
    .map((point) => ({ x: label(point.parameters[chart.parameter]), series: chart.series === null ? 'all' : label(point.parameters[chart.series]), y: point.metrics[chart.metric] }));
  const others = document.parameters.filter((p) => p !== chart.parameter && p !== chart.series && (document.values[p]?.length ?? 0) > 1);
  // Points with nothing measured (null) are left out of the lines, and said to be; every value stays on the x axis.
  const left = document.points.length - rows.length;
  const subtitleParts = [others.length > 0 ? `mean over ${others.join(', ')}` : '', left > 0 ? `${left} point(s) with nothing measured left out` : ''].filter(Boolean);
  const subtitle = subtitleParts.length > 0 ? subtitleParts.join('; ') : undefined;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: `${chart.metric} vs ${chart.parameter}`, ...(subtitle ? { subtitle } : {}) },
    width: 420,
    height: 240,
    background: 'white',
    data: { values: rows },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'x', type: 'ordinal', sort: order(chart.parameter), scale: { domain: order(chart.parameter) }, title: chart.parameter, axis: { labelAngle: 0 } },
      y: { field: 'y', type: 'quantitative', aggregate: 'mean', title: chart.metric, axis: { format: '~r' } },
      color: chart.series === null ? { value: '#4c78a8' } : { field: 'series', type: 'nominal', sort: order(chart.series), title: chart.series, legend: { titleLimit: 1000, orient: 'bottom', direction: 'horizontal' } },
    },
  };
}

/** Renders one chart to SVG (ids prefixed by the chart's file name, so a page can inline several). */
export async function renderChart(document: SweepDocument, chart: SweepChart): Promise<string> {
  const { vega, vegaLite } = vegaRenderer();
  const view = new vega.View(vega.parse(vegaLite.compile(chartSpec(document, chart)).spec), { renderer: 'none', logLevel: vega.Error });
  try {
    return normaliseSvgIds(await view.toSVG(), safeName(chart.file));
  } finally {
    view.finalize();
  }
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The HTML page: what varied, the charts (linked from charts/), and every point without wall times. */
export function sweepHtml(document: SweepDocument, charts: readonly SweepChart[]): string {
  const varied = variedParameters(document);
  const byParameter = varied.map((parameter) => {
    const images = charts.filter((chart) => chart.parameter === parameter).map((chart) => `<img src="charts/${escapeHtml(chart.file)}" alt="${escapeHtml(`${chart.metric} vs ${chart.parameter}`)}">`);
    return `<h2>Against ${escapeHtml(parameter)}</h2>\n<div class="charts">\n${images.join('\n')}\n</div>`;
  });
  const header = ['point', ...document.parameters, 'clean', ...document.metrics, 'digest'].map((cell) => `<th>${escapeHtml(cell)}</th>`).join('');
  const rows = document.points.map((point) => {
    const cells = [String(point.index), ...document.parameters.map((p) => label(point.parameters[p])), point.clean ? 'yes' : `no: ${point.problem ?? ''}`, ...document.metrics.map((m) => (point.metrics[m] === null ? '–' : String(point.metrics[m]))), `sha256:${point.digest.replace(/^sha256:/, '').slice(0, 12)}…`];
    return `<tr>${cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`;
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kvqual sweep of ${escapeHtml(document.base)}</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5em}img{border:1px solid #ddd;margin:4px}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}.charts{display:flex;flex-wrap:wrap}</style>
</head>
<body>
<h1>Sweep of ${escapeHtml(document.base)}</h1>
<p>${document.points_total} points over ${document.parameters.map(escapeHtml).join(', ') || 'nothing'}; ${escapeHtml(runsText(document.points))}. Data: <a href="sweep.csv">sweep.csv</a>, <a href="sweep.json">sweep.json</a> (with wall times). Sweep digest ${document.sweep_digest}.</p>
${byParameter.join('\n') || '<p>No parameter takes more than one value, so there is nothing to chart.</p>'}
<h2>Points</h2>
<table>
<tr>${header}</tr>
${rows.join('\n')}
</table>
</body>
</html>
`;
}
