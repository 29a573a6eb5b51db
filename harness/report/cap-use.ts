/**
 * Each host's resources against its caps, per stack (and cell): the figures the resources-against-caps chart
 * (./charts/caps.ts) draws. For every run the comparison used, the measurement windows of series.jsonl are scored
 * host by host exactly as the bottleneck scores them (harness/runner/bottleneck.ts hostCandidates), against the
 * limits the platform applied and read back (harness/results/caps.ts appliedHostLimits over run.json `limits`):
 * - CPU used: mean cores ÷ the CPU cap (no threshold: a capped CPU binds on throttling, not on use);
 * - CPU throttled: share of CFS periods throttled (binds at THRESHOLD.cpu);
 * - CPU wait: the wait for a CPU other load held, share of the runnable time (binds at THRESHOLD.contention);
 * - memory: largest working set ÷ the memory limit; disk: the most used of the disk caps; network: the busiest
 *   windows' max(rx, tx) ÷ the shaped rate (each binds at its THRESHOLD).
 * A resource without a cap has no share ("no cap"), never a share of something else. The bound resource is the
 * one the run's stored verdict (summary.bottleneck) names.
 */
import type { HostLimits } from "../../core/limits.ts";
import { hostSchema } from "../../infra/stack/schema.ts";
import { appliedHostLimits } from "../results/caps.ts";
import { bottleneckLabel } from "../results/format.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";
import { hostCandidates, THRESHOLD } from "../runner/bottleneck.ts";
import type { HostWindow } from "../observers/types.ts";
import { mean, median } from "../stats/descriptive.ts";
import type { ScenarioReport } from "./data.ts";

export const CAP_RESOURCES = ["CPU used", "CPU throttled", "CPU wait", "memory", "disk", "network"] as const;
export type CapResource = (typeof CAP_RESOURCES)[number];

/**
 * How a resource stands: named by the verdict (or its uncertain candidate), over or under its threshold, a CPU's use
 * of its cap (no threshold of its own: it binds on throttling), or no figure.
 */
export type CapState =
  "bound" | "uncertain" | "over threshold" | "under threshold" | "CPU use" | "no cap" | "not read";

/** One host's resource in one stack (and cell): its share of the cap, the threshold that binds, its state. */
export interface CapUse {
  /** facet: the stack, with the cell when the scenario has several */
  group: string;
  stack: string;
  cell: string;
  host: string;
  resource: CapResource;
  /** median over the group's runs of observed ÷ cap (0..1, above 1 possible); null: no cap (or not read) */
  share: number | null;
  /** the score at which the resource binds (bottleneck.ts THRESHOLD); null for CPU used */
  threshold: number | null;
  state: CapState;
  /** runs whose verdict named this host and resource, of `runs` */
  bound: number;
  runs: number;
  /** what the share rests on, in words (the bottleneck's evidence of the group's first run) */
  detail: string;
}

/** The pipeline's order: load generator, collectors, application, sink, the rest by name. */
export function hostOrder(a: string, b: string): number {
  const rank = (h: string): number =>
    h === "loadgen" ? 0 : /^collector/.test(h) ? 1 : /^app/.test(h) ? 2 : h === "sink" ? 3 : 4;
  return rank(a) - rank(b) || a.localeCompare(b, "en", { numeric: true });
}

/** A host's requested limits from run.json (the stack file's words), parsed as the stack file is; {} if unreadable. */
function requestedLimits(requested: Record<string, unknown> | undefined): HostLimits {
  const keys = ["cpu", "memory", "disk", "network"];
  const picked = Object.fromEntries(Object.entries(requested ?? {}).filter(([k]) => keys.includes(k)));
  const parsed = hostSchema.safeParse(picked);
  return parsed.success ? parsed.data : {};
}

interface Use {
  share: number | null;
  threshold: number | null;
  detail: string;
}

/** One run's uses per "host resource" key, and whether each host's CPU is capped. */
function runUses(run: RunRecord, series: readonly SeriesPoint[]): Map<string, Use> {
  const out = new Map<string, Use>();
  const measure = series.filter((p) => p.phase === "measure");
  const hosts = [...new Set(measure.flatMap((p) => Object.keys(p.hosts ?? {})))];
  const machine = run.environment;
  for (const host of hosts) {
    const ws = measure.flatMap((p): HostWindow[] => (p.hosts?.[host] ? [p.hosts[host]!] : []));
    const limits = appliedHostLimits(run.limits?.[host], requestedLimits(run.limits?.[host]?.requested), {
      cores: machine.cores,
      memoryBytes: machine.memoryBytes,
    });
    const found = hostCandidates(host, ws, limits, machine.cores);
    const of = (r: string): typeof found => found.filter((c) => c.resource === r);
    const top = (r: string): (typeof found)[number] | undefined => of(r).sort((a, b) => b.score - a.score)[0];
    const set = (resource: CapResource, use: Use): void => void out.set(`${host} ${resource}`, use);
    const noCap = (what: string): Use => ({
      share: null,
      threshold: null,
      detail: `${host} ${what}: no cap`,
    });
    const cores = mean(ws.map((w) => w.cpuCores));
    const cap = limits.cpu ? limits.cpu.quotaUs / limits.cpu.periodUs : null;
    set(
      "CPU used",
      cap === null
        ? {
            share: null,
            threshold: null,
            detail: `${host} used ${cores.toFixed(2)} of the machine's ${machine.cores} cores: no cap`,
          }
        : { share: cores / cap, threshold: null, detail: `${host} used ${cores.toFixed(2)} of ${cap} cores` },
    );
    const cpu = top("cpu");
    set(
      "CPU throttled",
      cap !== null && cpu
        ? { share: cpu.score, threshold: THRESHOLD.cpu, detail: cpu.evidence }
        : noCap("CPU throttling"),
    );
    const wait = top("contention");
    set(
      "CPU wait",
      wait
        ? { share: wait.score, threshold: THRESHOLD.contention, detail: wait.evidence }
        : { share: null, threshold: null, detail: `${host}: no run delay read` },
    );
    for (const r of ["memory", "disk", "network"] as const) {
      const c = top(r);
      set(r, c ? { share: c.score, threshold: THRESHOLD[r], detail: c.evidence } : noCap(r));
    }
  }
  return out;
}

/** The "host resource" key a run's verdict names, and whether it was uncertain; null for latency and client. */
function boundKey(run: RunRecord, uses: Map<string, Use>): { key: string; uncertain: boolean } | null {
  const b = run.summary?.bottleneck;
  if (!b) return null;
  let resource: string = b.resource;
  const uncertain = resource === "uncertain";
  if (uncertain) {
    const c = b.candidates.find((x) => x.host === b.host && Math.abs(x.score - b.score) < 1e-9);
    if (!c) return null;
    resource = c.resource;
  }
  const capped = uses.get(`${b.host} CPU throttled`)?.share != null;
  const name: Partial<Record<string, CapResource>> = {
    cpu: capped ? "CPU throttled" : "CPU used",
    contention: "CPU wait",
    memory: "memory",
    disk: "disk",
    network: "network",
  };
  return name[resource] ? { key: `${b.host} ${name[resource]}`, uncertain } : null;
}

function stateOf(u: Omit<CapUse, "state">, uncertain: number): CapState {
  if (u.bound > 0) return uncertain === u.bound ? "uncertain" : "bound";
  if (u.share === null) return u.resource === "CPU wait" ? "not read" : "no cap";
  if (u.threshold === null) return "CPU use";
  return u.threshold !== null && u.share >= u.threshold ? "over threshold" : "under threshold";
}

/** One group's rows, in host and resource order. */
function groupUses(
  group: string,
  stack: string,
  cell: string,
  runs: ReadonlyArray<{ run: RunRecord; series: readonly SeriesPoint[] }>,
): CapUse[] {
  const perRun = runs.map((r) => {
    const uses = runUses(r.run, r.series);
    return { uses, bound: boundKey(r.run, uses) };
  });
  const keys = [...new Set(perRun.flatMap((r) => [...r.uses.keys()]))];
  const hosts = [...new Set(keys.map((k) => k.split(" ")[0]!))].sort(hostOrder);
  const out: CapUse[] = [];
  for (const host of hosts)
    for (const resource of CAP_RESOURCES) {
      const key = `${host} ${resource}`;
      const uses = perRun.flatMap((r) => (r.uses.has(key) ? [r.uses.get(key)!] : []));
      if (uses.length === 0) continue;
      const shares = uses.flatMap((u) => (u.share === null ? [] : [u.share]));
      const named = perRun.filter((r) => r.bound?.key === key);
      const u = {
        group,
        stack,
        cell,
        host,
        resource,
        share: shares.length ? median(shares) : null,
        threshold: uses[0]!.threshold,
        bound: named.length,
        runs: runs.length,
        detail: uses[0]!.detail + (runs.length > 1 ? ` (first of ${runs.length} runs; share: median)` : ""),
      };
      out.push({ ...u, state: stateOf(u, named.filter((r) => r.bound!.uncertain).length) });
    }
  return out;
}

/** A group's facet title: the group and what bound its runs ("large — bound: cpu (sink)"). */
export interface CapGroup {
  group: string;
  title: string;
}

/**
 * The scenario's resources against caps: per stack (and cell, when there are several) over the runs its comparison
 * used (StackRow.measured), one CapUse per observed host and resource; groups in row order with their titles.
 */
export function capUses(s: ScenarioReport): { uses: CapUse[]; groups: CapGroup[] } {
  const withCell = new Set(s.rows.map((r) => r.cell)).size > 1;
  const series = new Map(s.runs.map((r) => [r.run.runId, r.series]));
  const uses: CapUse[] = [];
  const groups: CapGroup[] = [];
  for (const row of s.rows) {
    const runs = row.measured
      .map((run) => ({ run, series: series.get(run.runId) ?? [] }))
      .filter((r) => r.series.some((p) => p.phase === "measure" && p.hosts));
    if (runs.length === 0) continue;
    const group = withCell ? `${row.stack} ${row.cell}` : row.stack;
    const got = groupUses(group, row.stack, row.cell, runs);
    if (got.length === 0) continue;
    uses.push(...got);
    const verdicts = [
      ...new Set(
        runs.map(
          ({ run }) => `${bottleneckLabel(run.summary!.bottleneck)} (${run.summary!.bottleneck.host})`,
        ),
      ),
    ];
    groups.push({ group, title: `${group} — bound: ${verdicts.join("; ")}` });
  }
  return { uses, groups };
}
