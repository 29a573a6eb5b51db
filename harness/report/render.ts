/**
 * Vega-Lite specs to static SVG at build time, in Node, without a browser or canvas: vega-lite compiles the spec
 * to Vega, a headless Vega View (renderer "none") renders it with View.toSVG(). Text widths are estimated (no
 * canvas), which is enough for axis labels and legends.
 */
import type { TopLevelSpec } from "vega-lite";

/** Shared look: system fonts, no chart border, light grid. */
export const CHART_CONFIG = {
  font: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
  view: { stroke: null },
  axis: { gridColor: "#e6e6e6", labelFontSize: 11, titleFontSize: 12, titleFontWeight: "normal" },
  legend: {
    labelFontSize: 11,
    titleFontSize: 12,
    titleFontWeight: "normal",
    orient: "bottom",
    direction: "horizontal",
  },
  title: { fontSize: 14, fontWeight: "bold", anchor: "start" },
} as const;

/**
 * Render a Vega-Lite spec to an SVG string. Element ids (clip paths, gradients) are prefixed with `idPrefix`, so
 * that many SVGs inlined in one HTML page do not share ids.
 */
export async function renderSvg(spec: TopLevelSpec, idPrefix: string): Promise<string> {
  // loaded on first chart, not at the top: vega and vega-lite cost ~0.7 s to import, which commands without a report skip
  const [{ parse, View }, { compile }] = await Promise.all([import("vega"), import("vega-lite")]);
  const { spec: vegaSpec } = compile({
    ...spec,
    config: { ...CHART_CONFIG, ...(spec.config ?? {}) },
  } as TopLevelSpec);
  const view = new View(parse(vegaSpec), { renderer: "none" });
  try {
    const svg = await view.toSVG();
    return svg
      .replace(/\bid="([^"]+)"/g, (_, id: string) => `id="${idPrefix}-${id}"`)
      .replace(/url\(#([^)]+)\)/g, (_, id: string) => `url(#${idPrefix}-${id})`)
      .replace(/href="#([^"]+)"/g, (_, id: string) => `href="#${idPrefix}-${id}"`);
  } finally {
    view.finalize();
  }
}
