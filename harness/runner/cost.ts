/**
 * What a run's rows cost the whole stack (docs/cost.md): every host's CPU over the measurement phase, per million
 * distinct rows stored in it, and with a price for every host (the stack's `pricePerHour`, or infra/azure/prices.yaml)
 * dollars per million rows and per GiB ingested. The window is the summary's (harness/runner/summary.ts): from the
 * warmup's last sample to the last measurement sample, so rows = rowsPerSecond × measuredSeconds (distinct rows) and
 * each measurement sample's host windows cover it once.
 */
import type { HostSpec } from "../../core/limits.ts";
import type { SeriesPoint, StackCost, Summary } from "../results/types.ts";

const GiB = 2 ** 30;

/** The summary's figures the cost divides by; `logBytesPerRow` when the run knows its log text's size. */
export type CostSummary = Pick<Summary, "rowsPerSecond" | "measuredSeconds" | "bytesPerRow"> & {
  logBytesPerRow?: number | null;
};

/**
 * Per host, CPU seconds over the measurement phase: Σ cpuCores × dtMs (the window's own wall time, else the time since
 * the previous sample) over the "measure" samples. Hosts absent from every such sample are absent.
 */
export function hostsCoreSeconds(series: readonly SeriesPoint[]): Record<string, number> {
  const out: Record<string, number> = {};
  series.forEach((p, i) => {
    if (p.phase !== "measure") return;
    const sinceLast = i > 0 ? p.t - series[i - 1]!.t : 0;
    for (const [host, w] of Object.entries(p.hosts)) {
      const ms = w.dtMs ?? sinceLast;
      if (Number.isFinite(w.cpuCores) && ms > 0) out[host] = (out[host] ?? 0) + (w.cpuCores * ms) / 1000;
      else out[host] ??= 0;
    }
  });
  return out;
}

/**
 * The stack's cost of the run's rows (StackCost). Dollars need a price for every host that was sampled: a host
 * without one (none set, or a null figure in the price table) leaves only the core-seconds, and `noPrice` names it.
 * @param hosts the stack's hosts (StackSpec.hosts) with their prices
 */
export function stackCost(
  series: readonly SeriesPoint[],
  summary: CostSummary,
  hosts: Readonly<Record<string, HostSpec>>,
): StackCost {
  const coreSeconds = hostsCoreSeconds(series);
  const names = Object.keys(coreSeconds);
  const rows = summary.rowsPerSecond * summary.measuredSeconds;
  const counted = rows > 0 && names.length > 0;
  const total = names.reduce((s, h) => s + coreSeconds[h]!, 0);
  const cost: StackCost = {
    coreSecondsPerMillionRows: counted ? (total / rows) * 1e6 : null,
    hostsCoreSeconds: coreSeconds,
  };
  const unpriced = names.filter((h) => hosts[h]?.price === undefined);
  if (names.length === 0) return { ...cost, noPrice: "no host was sampled in the measurement phase" };
  if (unpriced.length > 0) {
    const why = unpriced.map((h) => `${h}: ${hosts[h]?.noPrice ?? "no pricePerHour in the stack file"}`);
    return { ...cost, noPrice: `no price for every host (${why.join("; ")})` };
  }
  const prices = names.map((h) => hosts[h]!.price!);
  const usdPerHour = prices.reduce((s, p) => s + p.usdPerHour, 0);
  const joined = (f: (p: (typeof prices)[number]) => string) => [...new Set(prices.map(f))].join("; ");
  cost.usdPerHour = usdPerHour;
  cost.prices = { source: joined((p) => p.source), date: joined((p) => p.date) };
  if (!counted) return cost;
  const usd = (usdPerHour * summary.measuredSeconds) / 3600;
  cost.usdPerMillionRows = (usd / rows) * 1e6;
  const log = summary.logBytesPerRow;
  const perRow = log != null && log > 0 ? log : summary.bytesPerRow;
  if (perRow != null && perRow > 0) {
    cost.usdPerGiB = (usd / (rows * perRow)) * GiB;
    cost.usdPerGiBOf = perRow === log ? "log" : "wire";
  }
  return cost;
}
