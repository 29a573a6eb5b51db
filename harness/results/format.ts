/**
 * Cell formatting shared by the terminal tables (ui/comparison.ts), the column definitions
 * (harness/results/columns.ts) and the report (harness/report/table.ts): integers with thousands separators,
 * fixed decimals, percentages, the spread, the interval and verdict, the ledger. A figure that is null or not
 * finite prints as "–".
 */
import type { SampleComparison, SampleDescription } from "../stats/compare.ts";
import type { LedgerTotals } from "./caps.ts";
import type { Bottleneck, Summary } from "./types.ts";

/** "12,345" and "1.20x": the number formatter of ui/format.ts, re-exported for the tables here. */
export { fix, int, sig, usd } from "../../ui/format.ts";
import { fix, int, pct } from "../../ui/format.ts";

/** A confidence level (fraction) as a percentage label: 0.9 → "90 %", 0.975 → "97.5 %". */
export const pctLabel = (c: number): string => `${Number((c * 100).toFixed(1))} %`;

/** "3.1 %", "12.4 % erratic", or "–" with fewer than 2 values. */
export function cvCell(d: SampleDescription): string {
  if (d.n < 2 || !Number.isFinite(d.cv)) return "–";
  return `${pct(d.cv, 1)}${d.erratic ? " erratic" : ""}`;
}

/**
 * "[1.15, 1.25] faster", "[0.97, 1.04] ~", "[0.91, 0.95] inconclusive (n=2/2)", "n=1" (no interval), "baseline", or
 * "–" (nothing to compare with).
 */
export function ciCell(c: SampleComparison | null, isBaseline: boolean): string {
  if (isBaseline) return "baseline";
  if (c === null) return "–";
  if (c.ci === null) return `n=${Math.min(c.n.baseline, c.n.contender)}`;
  const mark = c.inconclusive
    ? `inconclusive (n=${c.n.baseline}/${c.n.contender})`
    : c.change === "none"
      ? "~"
      : c.change;
  return `[${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}] ${mark}`;
}

/**
 * A p99 with the number of samples it rests on: "535 ms (n=30)", "535 ms (n≥30)" when it is a median over runs with
 * different counts (the smallest shown), "535 ms" when the count is unknown (older results), "–" when null. Under 100
 * samples a p99 lies between the two largest samples (docs/design.md, "Rules for the numbers"): read it as the max.
 */
export function p99Cell(ms: number | null, samples: readonly (number | undefined)[]): string {
  if (ms === null || !Number.isFinite(ms)) return "–";
  const known = samples.filter((n): n is number => n !== undefined);
  if (known.length === 0) return `${int(ms)} ms`;
  const min = Math.min(...known);
  return `${int(ms)} ms (n${known.every((n) => n === min) ? "=" : "≥"}${min})`;
}

/** "faster", "slower", "no change" or "inconclusive". */
export function verdictWord(c: SampleComparison): string {
  return c.inconclusive ? "inconclusive" : c.change === "none" ? "no change" : c.change;
}

/**
 * "exact (N stored)" when nothing was lost, duplicated or altered and every sent row was stored, else
 * "lost N, dup M" (", altered K" when stored content differed from what was sent); "–" when no run was measured;
 * "no ledger (N runs)" when no run has a ledger (never "lost 0"), "; K without ledger" when some have none;
 * "; sent inferred" (with "in k/n runs" when not all) where the collector's own count stood in for the sent count.
 */
export function ledgerCell(measured: number, l: LedgerTotals): string {
  const altered = l.altered ?? 0;
  const missing = l.withoutLedger?.length ?? 0;
  if (l.lost === null) return missing > 0 ? `no ledger (${missing} run${missing > 1 ? "s" : ""})` : "–";
  // generator: none: what was sent is the collector's own count (Ledger.inferred), and the cell says so
  const inferred = l.inferred
    ? `; sent inferred${l.inferred < measured ? ` in ${l.inferred}/${measured} runs` : ""}`
    : "";
  const cell =
    measured === 0
      ? "–"
      : l.lost === 0 && l.duplicated === 0 && altered === 0 && l.stored === l.sent
        ? `exact (${int(l.stored)} stored${inferred})`
        : `lost ${int(l.lost)}, dup ${int(l.duplicated ?? 0)}${altered > 0 ? `, altered ${int(altered)}` : ""}${inferred}`;
  return missing > 0 && measured > 0 ? `${cell}; ${missing} without ledger` : cell;
}

/** How a bottleneck verdict (harness/runner/bottleneck.ts) is shown (terminal, compare, report): "host contention" for contention, the uncertain list as is. */
export function bottleneckLabel(b: Pick<Bottleneck, "resource" | "evidence">): string {
  if (b.resource === "contention") return "host contention";
  if (b.resource === "uncertain") return b.evidence.match(/^uncertain \([^)]*\)/)?.[0] ?? "uncertain";
  return b.resource;
}

/**
 * "3.12 log MiB/s, 4.81 wire MiB/s": the log lines' own bytes (Summary.logMibPerSecond, write-up 004's unit) and the
 * encoded bytes sent (mibPerSecond: protocol framing and tracking fields included); "4.81 wire MiB/s" alone when the
 * log bytes are not known (older results, an application under test); "log and wire MiB/s not known (why)" when no
 * byte is known (Summary.bytesUnknown: a `generator: none` run, harness/runner/self-load.ts; in older results a 0
 * over 0 bytes per row), never a false 0.
 */
export function mibText(
  s: Pick<Summary, "mibPerSecond" | "bytesPerRow" | "bytesUnknown" | "logMibPerSecond">,
): string {
  if (s.mibPerSecond === null || (s.mibPerSecond === 0 && s.bytesPerRow === 0))
    return `log and wire MiB/s not known (${s.bytesUnknown ?? "no bytes were counted as sent"})`;
  const wire = fix(s.mibPerSecond, 2, " wire MiB/s");
  return typeof s.logMibPerSecond === "number" ? `${logMibText(s.logMibPerSecond)}, ${wire}` : wire;
}

/** "3.12 log MiB/s" (Summary.logMibPerSecond). */
export function logMibText(logMibPerSecond: number): string {
  return fix(logMibPerSecond, 2, " log MiB/s");
}

/**
 * The kernel release of an environment fingerprint's `kernel` ("Linux 6.18.44-fc-v1045", os.type() and os.release(),
 * harness/runner/environment.ts) for the machine lines: "6.18.44-fc-v1045" (the line already says "kernel").
 */
export function kernelRelease(kernel: string): string {
  return kernel.replace(/^[A-Za-z_]+\s+(?=\d)/, "");
}

/** The machine fields of a run's environment or of a fingerprint (harness/results/fingerprint.ts; "a | b" when runs differ). */
export interface MachineFields {
  cpuModel?: string | number | null;
  cores?: string | number | null;
  kernel?: string | null;
  cgroup?: string | number | null;
}

/**
 * One machine in words, as `bench` prints it: "<cpu model>, 2 cores, kernel 6.18.44-fc-v1045, cgroup v1".
 * Missing fields (run.json written before they existed) print as "–"; a cgroup already "v1" is not prefixed twice.
 */
export function machineText(m: MachineFields): string {
  const v = (x: unknown): string => (x === undefined || x === null || x === "" ? "–" : String(x));
  const cgroup = v(m.cgroup);
  return `${v(m.cpuModel)}, ${v(m.cores)} cores, kernel ${kernelRelease(v(m.kernel))}, cgroup ${/^v/.test(cgroup) || cgroup === "–" ? cgroup : `v${cgroup}`}`;
}

/**
 * The line naming the machine(s) a comparison's figures were measured on: "measured on X" when every group ran on
 * one machine, else "measured on: A X; B Y" per group (e.g. a stack per VM size). Groups: stacks, run selections.
 */
export function measuredOnLine(groups: ReadonlyArray<{ label: string; machine: MachineFields }>): string {
  const texts = groups.map((g) => ({ label: g.label, text: machineText(g.machine) }));
  const distinct = [...new Set(texts.map((t) => t.text))];
  if (distinct.length <= 1) return `measured on ${distinct[0] ?? "– (no runs)"}`;
  const seen = new Set<string>();
  const per = texts.filter((t) => (seen.has(t.label) ? false : (seen.add(t.label), true)));
  return `measured on: ${per.map((t) => `${t.label} ${t.text}`).join("; ")}`;
}

/**
 * A machine key (harness/results/eligibility.ts machineKey: "cpuModel=…; kernel=…; cores=…; cgroup=…") as the
 * "measured on …" line machineText gives.
 */
export function machineKeyLine(key: string): string {
  const fields: Record<string, string> = {};
  for (const part of key.split("; ")) {
    const i = part.indexOf("=");
    if (i > 0) fields[part.slice(0, i)] = part.slice(i + 1);
  }
  return `measured on ${machineText({ cpuModel: fields.cpuModel, cores: fields.cores, kernel: fields.kernel, cgroup: fields.cgroup })}`;
}
