// What an SLO scenario's card says beside its chart (src/report/sloChart.ts draws the chart): each
// claim in one line ("p99 time to first token 1.822 s ≤ SLO 2 s: met"), for signoff.md as the
// chart's text equivalent and for signoff.html as the chart's caption. Plain text; the renderers escape it.
import { sloLine, type SloChart } from '../report/sloChart';

/** The claims of a card, one line each. */
export function sloCardLines(charts: readonly SloChart[]): string[] {
  return charts.map(sloLine);
}

/** How to read the chart, after the claims it shows. */
export const SLO_CHART_READING =
  'Each curve is the share of finished requests at most a value (the CDF); the dashed red line is the SLO limit, each diamond a measured value.';

/** The caption of an SLO scenario's chart: its claims, then how to read it. */
export function sloFigureCaption(charts: readonly SloChart[]): string {
  return `${sloCardLines(charts).join('. ')}. ${SLO_CHART_READING}`;
}

/** The chart's alternative text in signoff.md. */
export const SLO_CHART_ALT = 'CDF of the measured metric with the SLO limit and the measured value';
