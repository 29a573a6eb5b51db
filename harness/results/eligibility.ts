/**
 * Which runs a comparison may use (compare, report and nightly all go through here): a run counts only when
 *   1. its status is `ok` (not `failed` — a check failed, e.g. rows lost —, `error`, `interrupted`, or still
 *      `running`, i.e. killed before its last write) and it has a summary;
 *   2. its caps were enforced: every host's `limits.<host>.enforced` is `true` or `"partial"` (`false`, a cap the
 *      platform could not apply or read back, or anything else is not). A `"partial"` host (e.g. cgroup v1, which
 *      does not throttle buffered writes: every local disk cap on such a machine) and an `oversubscribed` stack
 *      (docs/decisions/0008) stay in the comparison, flagged in its `flags` column (columns.ts): their caps were
 *      applied, and what they do not hold is named; leaving them out would leave nothing to compare on a cgroup v1
 *      machine or a 2-core one;
 *   3. it ran on the same machine as the runs it is compared with: its machine key (CPU model, kernel, cores,
 *      cgroup version; for nightly also the component versions, `environmentKey`) equals the reference.
 * Every other run is returned as an `ExcludedRun` with its reason, for the terminal's footnote, `--json` and the
 * report. The fields of rule 2 are read defensively (run.json written before they existed, or by a newer harness,
 * may lack them or carry objects): only `enforced === true` or `"partial"` pass.
 */
import type { RunRecord } from "./types.ts";

/** Why a run was left out. */
export type ExclusionKind = "status" | "caps" | "environment";

/** A run a comparison did not use, and why. */
export interface ExcludedRun {
  runId: string;
  /** the stack it ran on ("?" for a record without one) */
  stack: string;
  invocation: string;
  cell: string;
  status: string;
  kind: ExclusionKind;
  /** in words, e.g. "failed: ledger.lost (actual 5)", "caps partially enforced on sink: buffered writes not throttled" */
  reason: string;
}

/** The runs a comparison uses and the ones it left out (with reasons), and the machine key the used runs share. */
export interface Eligible {
  used: RunRecord[];
  excluded: ExcludedRun[];
  /** the reference machine key (the majority among runs that passed rules 1 and 2), null when none did */
  machine: string | null;
}

const firstLine = (s: unknown): string =>
  String(s ?? "")
    .split("\n")[0]!
    .slice(0, 160);

/** Why a run's status keeps it out (rule 1), or null when it is `ok` with a summary. */
export function statusProblem(run: RunRecord): string | null {
  const status = String((run as { status?: unknown }).status);
  if (status === "ok") return run.summary ? null : "ok but no summary (nothing measured)";
  if (status === "failed") {
    const failing = (run.checks ?? [])
      .filter((c) => !c.ok)
      .map((c) => `${c.check} (actual ${c.actual ?? "–"}, expected ${c.expected})`);
    return `failed: ${failing.length ? failing.join(", ") : run.ledger && run.ledger.lost > 0 ? `lost ${run.ledger.lost}` : "a check failed"}`;
  }
  if (status === "error")
    return `error${run.error ? ` ${run.error.code}: ${firstLine(run.error.message)}` : ""}`;
  if (status === "interrupted")
    return run.summary
      ? "interrupted (its measurement is partial)"
      : "interrupted before its measurement began (nothing measured)";
  if (status === "running") return "never finished (run.json still says running: the run was killed)";
  return `status ${status}`;
}

/** A flag's value as words: true → "", an object → its JSON, a string as is. */

/** Why a run's caps keep it out (rule 2), or null when every host's caps were applied (fully or "partial"). */
export function capsProblem(run: RunRecord): string | null {
  const problems: string[] = [];
  for (const [host, raw] of Object.entries(run.limits ?? {})) {
    const l = (raw ?? {}) as { enforced?: unknown; notes?: unknown; reason?: unknown };
    const notes = [l.reason, ...(Array.isArray(l.notes) ? l.notes : [])]
      .filter((x) => typeof x === "string" && x.length > 0)
      .join("; ");
    if (l.enforced !== true && l.enforced !== "partial")
      problems.push(`caps not enforced on ${host}${notes ? `: ${notes}` : ""}`);
  }
  return problems.length ? problems.join("; ") : null;
}

/** The machine a run ran on: CPU model, kernel, machine cores, cgroup version (the sink host's on deployed stacks). */
export function machineKey(run: RunRecord): string {
  const e = (run.environment ?? {}) as Partial<RunRecord["environment"]>;
  return `cpuModel=${e.cpuModel ?? "–"}; kernel=${e.kernel ?? "–"}; cores=${e.cores ?? "–"}; cgroup=${e.cgroup ?? "–"}`;
}

/** The machine key and the component versions (running and pinned), sorted: what nightly requires to match. */
export function environmentKey(run: RunRecord): string {
  const versions = Object.entries(run.versions ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, v]) => `${name}=${v?.running ?? "–"} (pinned ${v?.pinned ?? "–"})`);
  return `${machineKey(run)}${versions.length ? `; ${versions.join(", ")}` : ""}`;
}

const excluded = (run: RunRecord, kind: ExclusionKind, reason: string): ExcludedRun => ({
  runId: run.runId,
  stack: typeof run.stack === "string" ? run.stack : "?",
  invocation: run.invocation,
  cell: run.cell,
  status: String(run.status),
  kind,
  reason,
});

/** The most frequent key; ties go to the key of the latest run among the tied (runs are oldest first). */
function majority(runs: RunRecord[], key: (r: RunRecord) => string): string | null {
  const counts = new Map<string, number>();
  for (const r of runs) counts.set(key(r), (counts.get(key(r)) ?? 0) + 1);
  let best: string | null = null;
  for (const r of runs) {
    const k = key(r);
    if (
      best === null ||
      counts.get(k)! > counts.get(best)! ||
      (counts.get(k) === counts.get(best) && k !== best)
    )
      best = k;
  }
  return best;
}

/**
 * Split runs into the ones a comparison uses and the ones it leaves out, with reasons (rules 1–3 of the module
 * comment). `reference` is the machine key the runs must match (default: the majority among the runs that pass
 * rules 1 and 2); `key` the function giving it (default `machineKey`; nightly passes `environmentKey`).
 */
export function eligibleRuns(
  runs: RunRecord[],
  options: { reference?: string | null; key?: (r: RunRecord) => string } = {},
): Eligible {
  const key = options.key ?? machineKey;
  const out: ExcludedRun[] = [];
  const passed: RunRecord[] = [];
  for (const r of runs) {
    const s = statusProblem(r);
    if (s !== null) {
      out.push(excluded(r, "status", s));
      continue;
    }
    const c = capsProblem(r);
    if (c !== null) {
      out.push(excluded(r, "caps", c));
      continue;
    }
    passed.push(r);
  }
  const machine = options.reference ?? majority(passed, key);
  const used: RunRecord[] = [];
  for (const r of passed) {
    if (machine === null || key(r) === machine) used.push(r);
    else out.push(excluded(r, "environment", `other environment: ${key(r)} (the comparison's: ${machine})`));
  }
  return { used, excluded: out, machine: used.length ? machine : null };
}

/** Whether a run completed a measurement (a summary, not interrupted): what makes its invocation count as complete. */
export function completedMeasurement(run: RunRecord): boolean {
  return run.summary != null && run.status !== "interrupted";
}

/** An invocation chosen for a comparison, and the runs of newer invocations passed over for it. */
export interface ChosenInvocation {
  /** null when `all` is empty */
  invocation: string | null;
  /** the chosen invocation's runs (every status; eligibleRuns decides which count) */
  runs: RunRecord[];
  /** the runs of newer invocations that completed no measurement, as excluded runs (kind "status"), so a comparison lists them */
  passedOver: ExcludedRun[];
}

/**
 * The latest invocation that completed a measurement (`back` = 1: the one before it, for "previous"), from runs
 * oldest first (store.ts loadRuns): a run killed before it measured (still "running"), one that failed at start, or
 * one interrupted after a few seconds must not hide the last complete results, and it is not silently skipped
 * either: the runs of newer invocations without a complete measurement come back in `passedOver`. Only when no
 * invocation is complete do the measured ones (then the rest) count, newest first.
 */
export function chooseInvocation(all: readonly RunRecord[], back = 0): ChosenInvocation {
  const order = (runs: readonly RunRecord[]): string[] => [...new Set(runs.map((r) => r.invocation))];
  const complete = order(all.filter(completedMeasurement));
  const measured = order(all.filter((r) => r.summary != null));
  const pool = complete.length > 0 ? complete : measured.length > 0 ? measured : order(all);
  const invocation = pool[pool.length - 1 - back] ?? null;
  if (invocation === null) return { invocation, runs: [], passedOver: [] };
  const newest = pool[pool.length - 1]!;
  const lastOfNewest = all.reduce((at, r, i) => (r.invocation === newest ? i : at), -1);
  const passedOver = all
    .slice(lastOfNewest + 1)
    .filter((r) => !pool.includes(r.invocation))
    .map((r) =>
      excluded(
        r,
        "status",
        `${statusProblem(r) ?? "not complete"}; passed over: its invocation has no complete run here (of this scenario on this stack), so ${newest}, the latest that has, is compared`,
      ),
    );
  return { invocation, runs: all.filter((r) => r.invocation === invocation), passedOver };
}

/** "runId (stack, cell, invocation): reason" lines, for footnotes. */
export function excludedLines(list: readonly ExcludedRun[]): string[] {
  return list.map((x) => `${x.runId} (${x.stack}, ${x.cell}, ${x.invocation}): ${x.reason}`);
}
