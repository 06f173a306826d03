// The look every figure of the sign-off shares (the run timelines of figure.ts and the SLO charts
// of sloChart.ts): the vega-lite spec's header and its base config, so that the figures of one
// report read alike.

/** The top of a figure's vega-lite spec: schema, background and padding. */
export const FIGURE_SPEC_HEAD = {
  $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
  background: 'white',
  padding: 8,
} as const;

/** The base config: font, frame, 11 px axis words, bold titles; a figure adds its own legend settings. */
export const FIGURE_CONFIG = {
  font: 'Helvetica, Arial, sans-serif',
  view: { stroke: '#dee2e6' },
  axis: { labelFontSize: 11, titleFontSize: 11, titleColor: '#495057', labelColor: '#495057' },
  title: { color: '#212529', fontWeight: 'bold' },
  concat: { spacing: 26 },
} as const;
