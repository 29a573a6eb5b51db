/**
 * Storage per stack (and cell): the sink's bytes on disk per million stored rows (run.json `storage`,
 * harness/runner/storage.ts; the median over the runs the comparison used, StackRow.storageBytesPerMillionRows), a
 * bar each, written on the bar with the compression ratio where the sink reports the uncompressed size.
 */
import type { TopLevelSpec } from "vega-lite";
import { med } from "../../results/caps.ts";
import type { RunRecord } from "../../results/types.ts";
import type { ScenarioReport } from "../data.ts";

/** One bar: a stack (and cell) and its median bytes per million rows and compression (null when not reported). */
export interface StorageBar {
  group: string;
  bytesPerMillionRows: number;
  mibPerMillionRows: number;
  compression: number | null;
  label: string;
}

const compressionOf = (r: RunRecord): number | undefined => {
  const s = r.storage;
  return s && "compression" in s ? s.compression : undefined;
};

/** The bars (exported for the tests: what the chart charts); [] when no run says its storage. */
export function storageBars(s: ScenarioReport): StorageBar[] {
  const withCell = new Set(s.rows.map((r) => r.cell)).size > 1;
  return s.rows.flatMap((r) => {
    const b = r.storageBytesPerMillionRows;
    if (b === null || !Number.isFinite(b)) return [];
    const c = med(r.measured, compressionOf);
    const compression = Number.isFinite(c) ? c : null;
    const mib = b / 2 ** 20;
    return [
      {
        group: withCell ? `${r.stack} ${r.cell}` : r.stack,
        bytesPerMillionRows: b,
        mibPerMillionRows: mib,
        compression,
        label: `${mib.toFixed(1)} MiB${compression === null ? "" : `, ${compression.toFixed(1)}x`}`,
      },
    ];
  });
}

/** The spec, or null when no stack's runs say their storage. */
export function storageSpec(s: ScenarioReport): TopLevelSpec | null {
  const values = storageBars(s);
  if (values.length === 0) return null;
  const x = {
    field: "group",
    type: "nominal",
    sort: values.map((v) => v.group),
    title: null,
    axis: { labelAngle: values.length > 4 ? -30 : 0, labelLimit: 160 },
  };
  const y = { field: "mibPerMillionRows", type: "quantitative", title: "MiB on disk per million rows" };
  return {
    title: {
      text: `${s.scenario}: storage per million rows`,
      subtitle:
        "the sink's bytes on disk after the run (median of the runs); label: compression where reported",
    },
    width: { step: 90 },
    height: 220,
    data: { values },
    layer: [
      {
        mark: { type: "bar", color: "#72b7b2" },
        encoding: {
          x,
          y,
          tooltip: [
            { field: "group", title: "stack" },
            { field: "bytesPerMillionRows", format: ",.0f" },
            { field: "compression", format: ".2f" },
          ],
        },
      },
      { mark: { type: "text", dy: -7, fontSize: 11 }, encoding: { x, y, text: { field: "label" } } },
    ],
  } as unknown as TopLevelSpec;
}
