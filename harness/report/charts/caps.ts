/**
 * The scenario's first chart: each host's resources against its caps, one facet per stack (and cell). A bar per host
 * and resource is the observed use as a share of the applied cap (../cap-use.ts, scored as the bottleneck scores
 * it), the black rule on its row the threshold at which that resource binds (harness/runner/bottleneck.ts
 * THRESHOLD), and the resource the run's verdict named is red (orange when the verdict was uncertain). A resource
 * without a cap is written "no cap", never drawn as a share.
 */
import type { TopLevelSpec } from "vega-lite";
import { capUses, type CapState, type CapUse } from "../cap-use.ts";
import type { ScenarioReport } from "../data.ts";

/** The states' colours (the bound one stands out). */
export const CAP_STATE_COLORS: { domain: CapState[]; range: string[] } = {
  domain: ["bound", "uncertain", "over threshold", "under threshold", "CPU use"],
  range: ["#d62728", "#ff9f1c", "#b279a2", "#4c78a8", "#9ecae9"],
};

/** The chart's rows: a CapUse with its row label ("sink · memory") and the facet title. */
export type CapRow = CapUse & { row: string; facet: string; label: string; at: number };

/** The rows the chart draws, in facet and row order (exported for the tests: what the chart charts). */
export function capRows(s: ScenarioReport): CapRow[] {
  const { uses, groups } = capUses(s);
  const title = new Map(groups.map((g) => [g.group, g.title]));
  return uses.map((u) => ({
    ...u,
    row: `${u.host} · ${u.resource}`,
    facet: title.get(u.group)!,
    at: u.share ?? 0,
    label:
      u.share === null
        ? u.state === "not read"
          ? "not read"
          : u.bound > 0
            ? "no cap (bound)"
            : "no cap"
        : `${(u.share * 100).toFixed(0)} %${u.bound > 0 ? (u.state === "uncertain" ? " uncertain" : " bound") : ""}`,
  }));
}

/**
 * The spec, or null when no run the comparison used has a measurement window with host readings. One data set,
 * no per-layer filter (vega-lite warns on a facet whose layers filter it): a null share or threshold is not drawn.
 */
export function capsSpec(s: ScenarioReport): TopLevelSpec | null {
  const values = capRows(s);
  if (values.length === 0) return null;
  const facets = [...new Set(values.map((v) => v.facet))];
  const top = Math.max(1.1, ...values.map((v) => (v.share ?? 0) * 1.15));
  const x = { type: "quantitative", scale: { domain: [0, top], nice: false } } as const;
  const y = {
    field: "row",
    type: "nominal",
    sort: [...new Set(values.map((v) => v.row))],
    title: null,
    axis: { labelLimit: 260 },
  };
  const tooltip = [
    { field: "group", title: "stack" },
    { field: "host" },
    { field: "resource" },
    { field: "share", format: ".1%", title: "observed ÷ cap" },
    { field: "threshold", format: ".0%", title: "binds at" },
    { field: "state" },
    { field: "detail" },
  ];
  return {
    title: {
      text: `${s.scenario}: each host's resources against its cap`,
      subtitle: [
        "bar: observed use ÷ applied cap over the measurement (median of the runs); rule: the share at which it binds; red: the bottleneck",
        "CPU binds on throttled periods, not on use; CPU wait: time waiting for a CPU other load held, share of the runnable time",
      ],
    },
    data: { values },
    facet: {
      field: "facet",
      type: "nominal",
      sort: facets,
      title: null,
      header: {
        labelFontSize: 12,
        labelFontWeight: "bold",
        labelLimit: 600,
        labelAnchor: "start",
        labelAlign: "left",
        // the group on one line, what bound it on the next
        labelExpr: "split(datum.label, ' — ')",
      },
    },
    columns: facets.length > 1 ? 2 : 1,
    spec: {
      width: 300,
      height: { step: 16 },
      layer: [
        {
          mark: { type: "bar", height: { band: 0.7 } },
          encoding: {
            x: { ...x, field: "share", title: "observed ÷ cap (rule: binds at)", axis: { format: "%" } },
            y,
            color: {
              field: "state",
              type: "nominal",
              scale: CAP_STATE_COLORS,
              legend: { title: null, orient: "bottom" },
            },
            tooltip,
          },
        },
        {
          // a tick across its row at the threshold: the rule at which the resource binds
          mark: { type: "tick", color: "#222", thickness: 2, bandSize: 14 },
          encoding: { x: { ...x, field: "threshold" }, y, tooltip },
        },
        {
          mark: { type: "text", align: "left", dx: 4, fontSize: 10 },
          encoding: {
            x: { ...x, field: "at" },
            y,
            text: { field: "label" },
            color: {
              condition: { test: "datum.bound > 0", value: "#b00020" },
              value: "#444",
            },
            tooltip,
          },
        },
      ],
    },
  } as unknown as TopLevelSpec;
}
