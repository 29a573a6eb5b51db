/**
 * The A/A noise floor's table (`ingestbench aa`, harness/nightly/aa.ts, stores the file this prints): per cell the
 * runs, the ratio B/A with its interval, the half-width and the floor.
 */
import Table from "cli-table3";
import type { NoiseFloorFile } from "../harness/results/noise-floor.ts";
import { fix, pct } from "./format.ts";

/** The noise floor per cell as a table, with a warning for groups that differ (drift between back-to-back runs). */
export function renderNoiseFloor(f: NoiseFloorFile, file: string): string {
  const table = new Table({
    head: [
      "cell",
      "runs A/B",
      "ratio B/A",
      `${Math.round(f.confidence * 100)} % CI`,
      "CI half-width",
      "noise floor",
      "note",
    ],
    style: { head: [], border: [] },
  });
  for (const c of f.cells) {
    const note = c.inconclusive
      ? `inconclusive (n=${c.n.a}/${c.n.b}): floor underestimated, use 3+ replicates`
      : c.ci && (c.ci[0] > 1 || c.ci[1] < 1)
        ? "A and B differ: drift between back-to-back runs"
        : "";
    table.push([
      c.cell,
      `${c.n.a}/${c.n.b}`,
      fix(c.ratio, 3, "x"),
      c.ci ? `[${c.ci[0].toFixed(3)}, ${c.ci[1].toFixed(3)}]` : "–",
      pct(c.halfWidth, 1),
      c.floor === null ? "–" : `±${pct(c.floor, 1)}`,
      note,
    ]);
  }
  return (
    `A/A noise floor of ${f.scenario} on ${f.stack} (group B vs group A, the same stack and cells)\n${table.toString()}\n` +
    `stored in ${file}; compare and nightly now also require a change to exceed it`
  );
}
