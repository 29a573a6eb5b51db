/**
 * The ledger per stack (and cell): sent, stored, lost and duplicated rows over the runs shown, as grouped bars with
 * their counts written on them (a zero must read as zero, not as a missing bar).
 */
import type { TopLevelSpec } from "vega-lite";
import type { ScenarioReport } from "../data.ts";

export const LEDGER_MEASURES = ["sent", "stored", "lost", "duplicated"] as const;

/** The spec, or null when no run has a ledger. */
export function ledgerSpec(s: ScenarioReport): TopLevelSpec | null {
  const rows = s.rows.filter((r) => r.runs.some((x) => x.ledger !== null));
  if (rows.length === 0) return null;
  const withCell = new Set(rows.map((r) => r.cell)).size > 1;
  const values = rows.flatMap((r) => {
    const group = withCell ? `${r.stack} ${r.cell}` : r.stack;
    return LEDGER_MEASURES.map((m) => ({ group, measure: m, rows: r[m] }));
  });
  const groups = [...new Set(values.map((v) => v.group))];
  const enc = {
    x: {
      field: "group",
      type: "nominal",
      sort: groups,
      title: withCell ? "stack, cell" : "stack",
      axis: { labelAngle: groups.length > 4 ? -30 : 0 },
    },
    xOffset: { field: "measure", type: "nominal", sort: [...LEDGER_MEASURES] },
    y: { field: "rows", type: "quantitative", title: "rows (sum over the runs shown)" },
  };
  return {
    title: `${s.scenario}: ledger`,
    width: { step: 30 },
    height: 240,
    data: { values },
    layer: [
      {
        mark: { type: "bar" },
        encoding: {
          ...enc,
          color: {
            field: "measure",
            type: "nominal",
            sort: [...LEDGER_MEASURES],
            title: null,
            scale: { domain: [...LEDGER_MEASURES], range: ["#9ecae9", "#4c78a8", "#e45756", "#f58518"] },
          },
          tooltip: [{ field: "group" }, { field: "measure" }, { field: "rows", format: "," }],
        },
      },
      {
        mark: { type: "text", dy: -6, fontSize: 9, angle: 0 },
        encoding: { ...enc, text: { field: "rows", type: "quantitative", format: ".3~s" } },
      },
    ],
  } as TopLevelSpec;
}
