/**
 * The comparison across stacks as a plain table (header, aligned text cells), shared by the HTML report and the
 * Markdown summary; the same columns as `ingestbench compare` prints.
 */
import type { FingerprintDifference, StackRow } from "../results/compare.ts";
import type { SampleComparison, SampleDescription } from "../stats/compare.ts";

export interface TextTable {
  head: string[];
  /** "l" or "r" per column */
  align: Array<"l" | "r">;
  rows: string[][];
}

const int = (n: number | null): string => (n !== null && Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
const fix = (n: number | null, d: number, unit = ""): string => (n !== null && Number.isFinite(n) ? `${n.toFixed(d)}${unit}` : "–");

function cv(d: SampleDescription): string {
  if (d.n < 2 || !Number.isFinite(d.cv)) return "–";
  return `${(d.cv * 100).toFixed(1)} %${d.erratic ? " erratic" : ""}`;
}

function ci(c: SampleComparison | null, isBaseline: boolean): string {
  if (isBaseline) return "baseline";
  if (c === null) return "–";
  if (c.ci === null) return `n=${Math.min(c.n.baseline, c.n.contender)}`;
  return `[${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}] ${c.change === "none" ? "~" : c.change}`;
}

function ledger(r: StackRow): string {
  if (r.measured.length === 0) return "–";
  return r.lost === 0 && r.duplicated === 0 && r.stored === r.sent ? `exact (${int(r.stored)} stored)` : `lost ${int(r.lost)}, dup ${int(r.duplicated)}`;
}

/** The comparison rows as a table; a cell column only when there are several cells. */
export function comparisonTable(rows: StackRow[]): TextTable {
  const withCell = new Set(rows.map((r) => r.cell)).size > 1;
  const confidence = rows.find((r) => r.comparison)?.comparison?.confidence ?? 0.9;
  const head = [
    "stack", ...(withCell ? ["cell"] : []), "runs", "rows/s", "IQR", "CV", "MiB/s", "ratio", `${Math.round(confidence * 100)} % CI`,
    "rows/s/vCPU", "rows/s/GiB", "sink cores", "throttled", "net Mbit/s", "lag p99", "bottleneck", "ledger",
  ];
  const left = new Set(["stack", "cell", `${Math.round(confidence * 100)} % CI`, "bottleneck", "ledger"]);
  return {
    head,
    align: head.map((h) => (left.has(h) ? "l" : "r")),
    rows: rows.map((r) => {
      const statuses = r.runs.filter((x) => x.status !== "ok").map((x) => x.status);
      return [
        r.stack, ...(withCell ? [r.cell] : []), `${r.measured.length}/${r.runs.length}${statuses.length ? ` (${statuses.join(",")})` : ""}`,
        int(r.medianRowsPerSecond), r.rowsPerSecond.n >= 2 ? int(r.rowsPerSecond.iqr) : "–", cv(r.rowsPerSecond), fix(r.medianMiBPerSecond, 2),
        fix(r.ratio, 2, "x"), ci(r.comparison, r.baselineCell !== undefined ? r.cell === r.baselineCell : r.stack === r.baselineStack), int(r.rowsPerSecondPerCore), int(r.rowsPerSecondPerGiB),
        fix(r.sinkCores, 2), r.measured.length === 0 ? "–" : r.throttledShare === null ? "no cap" : fix(r.throttledShare * 100, 0, " %"),
        fix(r.networkMbitPerSecond, 1), r.lagP99Ms === null ? "–" : `${int(r.lagP99Ms)} ms`, r.bottlenecks.join(", ") || "–", ledger(r),
      ];
    }),
  };
}

/** "stack: 1.23x faster (reason)" for every row compared with an interval. */
export function verdicts(rows: StackRow[]): string[] {
  const withCell = new Set(rows.map((r) => r.cell)).size > 1;
  return rows.filter((r) => r.comparison && r.comparison.ci !== null).map((r) =>
    `${r.stack}${withCell ? ` ${r.cell}` : ""}: ${fix(r.ratio, 2, "x")} ${r.comparison!.change === "none" ? "no change" : r.comparison!.change} (${r.comparison!.reason})`);
}

/** "field: stack value; stack value" per environment difference. */
export function differenceLines(differences: FingerprintDifference[]): string[] {
  return differences.map((d) => `${d.kind === "version" ? "component version differs: " : ""}${d.field}: ${Object.entries(d.values).map(([k, v]) => `${k} ${v}`).join("; ")}`);
}
