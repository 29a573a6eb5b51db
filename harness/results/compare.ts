/**
 * Comparison across stacks (hardware sizes) for one scenario: per stack, the runs of its latest `bench` invocation,
 * their median rows/s and MiB/s, the ratio to the first stack's median, CPU use and cost per row, throttling,
 * network throughput, ingest lag, the bottleneck and the ledger.
 */
import Table from "cli-table3";
import { ConfigurationError } from "../errors.ts";
import { median } from "../stats/descriptive.ts";
import { loadRuns } from "./store.ts";
import type { RunRecord } from "./types.ts";

export interface StackRow {
  stack: string;
  runs: RunRecord[];
  /** runs whose summary exists (status ok or failed checks) */
  measured: RunRecord[];
  medianRowsPerSecond: number;
  medianMiBPerSecond: number;
  /** median rows/s of this stack / of the first stack */
  ratio: number;
  sinkCores: number;
  cpuMsPer1000Rows: number;
  throttledShare: number | null;
  networkMbitPerSecond: number;
  lagP99Ms: number | null;
  bottlenecks: string[];
  lost: number;
  duplicated: number;
  stored: number;
  sent: number;
}

const med = (runs: RunRecord[], f: (r: RunRecord) => number | null | undefined): number =>
  median(runs.map(f).filter((v): v is number => typeof v === "number" && Number.isFinite(v)));

/** Latest invocation's runs for each stack. @throws ConfigurationError when a stack has no runs of the scenario. */
export async function compareStacks(resultsRoot: string, scenario: string, stacks: string[]): Promise<StackRow[]> {
  const rows: StackRow[] = [];
  for (const stack of stacks) {
    const all = await loadRuns(resultsRoot, stack, scenario);
    if (all.length === 0) {
      throw new ConfigurationError("E_NO_RESULTS", `no results for scenario "${scenario}" on stack "${stack}" under ${resultsRoot}/${stack}/${scenario}; run: ingestbench bench --stack ${stack} scenarios/${scenario}.yaml`);
    }
    const latest = all[all.length - 1]!.invocation;
    const runs = all.filter((r) => r.invocation === latest);
    const measured = runs.filter((r) => r.summary !== null);
    rows.push({
      stack, runs, measured,
      medianRowsPerSecond: med(measured, (r) => r.summary?.rowsPerSecond),
      medianMiBPerSecond: med(measured, (r) => r.summary?.mibPerSecond),
      ratio: Number.NaN,
      sinkCores: med(measured, (r) => r.summary?.sinkCores),
      cpuMsPer1000Rows: med(measured, (r) => r.summary?.cpuMsPer1000Rows),
      throttledShare: measured.some((r) => r.summary?.throttledShare != null) ? med(measured, (r) => r.summary?.throttledShare) : null,
      networkMbitPerSecond: med(measured, (r) => r.summary?.sinkNetworkMbitPerSecond),
      lagP99Ms: measured.some((r) => r.summary?.lagP99Ms != null) ? med(measured, (r) => r.summary?.lagP99Ms) : null,
      bottlenecks: [...new Set(measured.map((r) => r.summary!.bottleneck.resource))],
      lost: runs.reduce((s, r) => s + (r.ledger?.lost ?? 0), 0),
      duplicated: runs.reduce((s, r) => s + (r.ledger?.duplicated ?? 0), 0),
      stored: runs.reduce((s, r) => s + (r.ledger?.stored ?? 0), 0),
      sent: runs.reduce((s, r) => s + (r.ledger?.sent ?? 0), 0),
    });
  }
  const base = rows[0]?.medianRowsPerSecond ?? Number.NaN;
  for (const r of rows) r.ratio = r.medianRowsPerSecond / base;
  return rows;
}

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
const fix = (n: number | null, d: number, unit = ""): string => (n !== null && Number.isFinite(n) ? `${n.toFixed(d)}${unit}` : "–");

/** Render rows as a terminal table (cli-table3). */
export function renderComparison(scenario: string, rows: StackRow[]): string {
  const table = new Table({
    head: ["stack", "runs", "rows/s", "MiB/s", "ratio", "sink cores", "CPU ms/1k rows", "throttled", "net Mbit/s", "lag p99", "bottleneck", "ledger"],
    style: { head: [], border: [] },
    colAligns: ["left", "right", "right", "right", "right", "right", "right", "right", "right", "right", "left", "left"],
  });
  for (const r of rows) {
    const statuses = r.runs.filter((x) => x.status !== "ok").map((x) => x.status);
    const ledger = r.measured.length === 0 ? "–"
      : r.lost === 0 && r.duplicated === 0 && r.stored === r.sent ? `exact (${int(r.stored)} stored)`
      : `lost ${int(r.lost)}, dup ${int(r.duplicated)}`;
    table.push([
      r.stack, `${r.measured.length}/${r.runs.length}${statuses.length ? ` (${statuses.join(",")})` : ""}`,
      int(r.medianRowsPerSecond), fix(r.medianMiBPerSecond, 2), fix(r.ratio, 2, "x"), fix(r.sinkCores, 2),
      fix(r.cpuMsPer1000Rows, 1), r.throttledShare === null ? "no cap" : fix(r.throttledShare * 100, 0, " %"),
      fix(r.networkMbitPerSecond, 1), r.lagP99Ms === null ? "–" : `${int(r.lagP99Ms)} ms`, r.bottlenecks.join(", ") || "–", ledger,
    ]);
  }
  return `${scenario}: median over each stack's latest runs; ratio to ${rows[0]?.stack ?? "?"}\n${table.toString()}`;
}
