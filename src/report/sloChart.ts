// The chart of an SLO scenario's card (features/slo/): the cumulative distribution (CDF) of the
// latency it checks over the finished requests, a vertical line at the SLO's limit and a marker at
// the value it measured, titled in words ("p99 time to first token 1.822 s ≤ SLO 2 s: met"). A
// claim that compares two runs draws both runs' CDFs; goodput draws one panel per objective. The
// data (SloChart) travels in the scenario's evidence; this module draws it with vega-lite like
// every other figure (figure.ts renders it, caches it and passes it through the sanitiser) and
// words it for the reports that show no picture.
import { FIGURE_CONFIG, FIGURE_SPEC_HEAD } from './figureStyle';
import type { TopLevelSpec } from 'vega-lite';

/** One run's CDF: `[value, share of requests at most that value]` at each step, in value order. */
export interface CdfRun {
  label: string;
  /** Requests the CDF is over. */
  count: number;
  points: [number, number][];
}

/** A measured value on the chart: a marker on a run's CDF at (value, share), labelled. */
export interface SloMarker {
  run: string;
  value: number;
  share: number;
  label: string;
}

/** One panel: the CDFs of one metric, its SLO line and the measured values. */
export interface SloPanel {
  /** The x axis in words, unit last ("time to first token (ms)"). */
  axis: string;
  runs: CdfRun[];
  /** Where the SLO line stands on the x axis, and what it says ("SLO: at most 2 s"). */
  limit: { value: number; label: string };
  markers: SloMarker[];
}

/** What an SLO step leaves for its card: the claim in one line, whether it held, and what to draw. */
export interface SloChart {
  /** "p99 time to first token 1.822 s ≤ SLO 2 s". */
  sentence: string;
  /** What the sentence leaves out ("time to first token at most 2 s and inter-token latency at most 100 ms"), or absent. */
  detail?: string;
  met: boolean;
  panels: SloPanel[];
}

/** At most this many steps of a CDF are kept (evenly by rank, the last always): enough for a 600-pixel axis. */
export const CDF_STEPS = 400;

/**
 * The empirical CDF of the values as steps `[value, share ≤ value]`, one per distinct value (the
 * last rank of it), starting at `[smallest, 0]`; thinned to about CDF_STEPS by rank.
 */
export function cdfPoints(values: readonly number[]): [number, number][] {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return [];
  const stride = Math.max(1, Math.ceil(n / CDF_STEPS));
  const points: [number, number][] = [[sorted[0], 0]];
  let kept = 0;
  for (let rank = 1; rank <= n; rank++) {
    const lastOfItsValue = rank === n || sorted[rank] !== sorted[rank - 1];
    if (!lastOfItsValue || (rank < n && Math.floor(rank / stride) === Math.floor(kept / stride))) continue;
    points.push([sorted[rank - 1], rank / n]);
    kept = rank;
  }
  return points;
}

/** A duration in ms in words: "1.822 s" from 1 s up, "412.5 ms" below (at most three decimals). */
export function durationWords(value_ms: number): string {
  return value_ms >= 1000 ? `${Number((value_ms / 1000).toFixed(3))} s` : `${Number(value_ms.toFixed(3))} ms`;
}

/** The chart's one-line text equivalent: the claim and whether it held. */
export function sloLine(chart: SloChart): string {
  return `${chart.sentence}${chart.detail === undefined ? '' : ` (${chart.detail})`}: ${verdictWord(chart)}`;
}

const verdictWord = (chart: SloChart) => (chart.met ? 'met' : 'missed');

const WIDTH = 600;
const HEIGHT = 200;
const RUN_COLORS = ['#1c7ed6', '#e8590c'];
const LIMIT_COLOR = '#c92a2a';

/** Rounds an axis end up to 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 × 10^k (finer than a timeline's: a CDF's tail should not leave half the axis empty). */
function niceCeil(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (step * power >= value - 1e-9 * power) return step * power;
  return 10 * power;
}

/** The end of a panel's x axis: past its largest value, the limit and every marker, rounded. */
export function axisEnd(panel: SloPanel): number {
  const largest = Math.max(panel.limit.value, ...panel.markers.map((m) => m.value), ...panel.runs.flatMap((r) => r.points.map(([value]) => value)));
  return niceCeil(largest * 1.05);
}

/** The panel's width in pixels (the x position of a value v is v / axisEnd × PANEL_WIDTH). */
export const PANEL_WIDTH = WIDTH;

/** A rough width (px) of an 11 px label. */
const labelWidth = (text: string) => 6.2 * text.length;

/**
 * The words on a panel, each in a row of its own near the bottom of the plot (where a CDF at the
 * right of the axis leaves room): the SLO line's label in the lowest row, each marker's above,
 * joined to its marker by a dotted line. A label starts right of its x, or ends left of it when it
 * would run past the axis.
 */
function annotations(panel: SloPanel, end: number): { x: number; y: number; share: number; label: string; align: 'left' | 'right'; marker: boolean }[] {
  const rows = [{ x: panel.limit.value, share: 0, label: panel.limit.label, marker: false }, ...panel.markers.map((m) => ({ x: m.value, share: m.share, label: m.label, marker: true }))];
  return rows.map((row, i) => {
    const px = (row.x / end) * WIDTH;
    const align = px + 6 + labelWidth(row.label) <= WIDTH || px - 6 - labelWidth(row.label) < 0 ? ('left' as const) : ('right' as const);
    return { ...row, y: 0.05 + 0.1 * i, align };
  });
}

function panelSpec(panel: SloPanel, title: { text: string; subtitle?: string }): Record<string, unknown> {
  const end = axisEnd(panel);
  const x = { field: 'x', type: 'quantitative', scale: { domain: [0, end], nice: false, zero: true }, axis: { title: panel.axis, format: '~f', grid: true, gridColor: '#eef0f2' } };
  const y = { field: 'y', type: 'quantitative', scale: { domain: [0, 1], nice: false }, axis: { title: 'share of requests at most x', format: '.0%', grid: true, gridColor: '#eef0f2' } };
  const names = panel.runs.map((r) => `${r.label} (${r.count} requests)`);
  const lines = panel.runs.flatMap((run, i) => run.points.map(([value, share]) => ({ run: names[i], x: value, y: share })));
  const words = annotations(panel, end);
  const markers = panel.markers.map((m) => ({ x: m.value, y: m.share, label: m.label }));
  const layers: unknown[] = [
    {
      data: { values: lines },
      mark: { type: 'line', interpolate: 'step-after', strokeWidth: 2, clip: true },
      encoding: { x, y, color: { field: 'run', type: 'nominal', title: null, scale: { domain: names, range: RUN_COLORS.slice(0, names.length) }, legend: { orient: 'bottom', direction: 'horizontal', labelLimit: 320 } } },
    },
    {
      data: { values: [{ x: panel.limit.value }] },
      mark: { type: 'rule', color: LIMIT_COLOR, strokeWidth: 2, strokeDash: [6, 3] },
      encoding: { x, description: { value: `SLO line at ${panel.limit.value}` } },
    },
  ];
  if (markers.length > 0) {
    layers.push(
      {
        data: { values: words.filter((w) => w.marker) },
        mark: { type: 'rule', color: '#868e96', strokeWidth: 1, strokeDash: [2, 2] },
        encoding: { x, y, y2: { field: 'share' } },
      },
      {
        data: { values: markers },
        mark: { type: 'point', shape: 'diamond', filled: true, size: 110, color: '#212529', opacity: 1 },
        encoding: { x, y, description: { field: 'label' } },
      },
    );
  }
  for (const align of ['left', 'right'] as const) {
    const values = words.filter((w) => w.align === align);
    if (values.length === 0) continue;
    layers.push({
      data: { values },
      mark: { type: 'text', align, baseline: 'middle', dx: align === 'left' ? 5 : -5, fontSize: 11, fontWeight: 'bold' },
      encoding: { x, y, text: { field: 'label' }, color: { condition: { test: 'datum.marker', value: '#212529' }, value: LIMIT_COLOR } },
    });
  }
  return { title: { ...title, anchor: 'start', fontSize: 12, subtitleFontSize: 11, subtitleColor: '#495057' }, width: WIDTH, height: HEIGHT, layer: layers };
}

/** A chart's title: the claim and whether it held, with what it leaves out below it. */
function chartTitle(chart: SloChart): { text: string; subtitle?: string } {
  const text = `${chart.sentence}: ${verdictWord(chart)}`;
  return chart.detail === undefined ? { text } : { text, subtitle: chart.detail };
}

/** The vega-lite spec of an SLO scenario's charts (one panel per metric), or null when there is nothing to draw. */
export function sloChartSpec(charts: readonly SloChart[]): TopLevelSpec | null {
  const panels = charts.flatMap((chart) =>
    chart.panels.filter((panel) => panel.runs.some((run) => run.points.length > 0)).map((panel, i) => panelSpec(panel, i === 0 ? chartTitle(chart) : { text: panel.axis })),
  );
  if (panels.length === 0) return null;
  return {
    ...FIGURE_SPEC_HEAD,
    config: { ...FIGURE_CONFIG, legend: { labelFontSize: 11 } },
    vconcat: panels,
    resolve: { scale: { x: 'independent', color: 'independent' }, legend: { color: 'independent' } },
  } as unknown as TopLevelSpec;
}
