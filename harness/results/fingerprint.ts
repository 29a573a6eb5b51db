/**
 * Environment fingerprints of runs (kernel, CPU model, cgroup version, machine cores, Node, the run's timing,
 * component versions; optionally the applied limits), the differences between labelled groups of runs, and the
 * refusal to compare mismatched component versions unless forced.
 */
import { ConfigurationError } from "../../core/errors.ts";
import type { RunRecord } from "./types.ts";

/**
 * A flat environment fingerprint: "kernel", "cpuModel", "cgroup", "cores", "node", "versions.<component>.running",
 * "versions.<component>.pinned" and, with limits, "limits.<host>.enforced" and "limits.<host>.<applied key>"
 * (interface names, which carry the run id, are left out). Values are strings; several runs with different values
 * give the distinct values joined by " | ".
 */
export type Fingerprint = Record<string, string>;

/** A field whose value differs between groups (or within one). `kind` "version" differences are refused unless forced. */
export interface FingerprintDifference {
  field: string;
  kind: "environment" | "version" | "limits" | "workload";
  /** group label (stack, or run selection) → value ("–" when absent) */
  values: Record<string, string>;
}

/** A scenario's `source` in words: "file Apache_2k.log", or "seeded text" without one. */
function sourceWords(config: { source?: unknown }): string {
  const src = config.source as { file?: unknown } | undefined;
  if (src === undefined || src === null) return "seeded text";
  if (typeof src.file === "string") return `file ${src.file.split("/").at(-1)}`;
  return JSON.stringify(src);
}

/** The fingerprint of one run; `limits: true` adds the applied limits of every host. */
export function runFingerprint(run: RunRecord, options: { limits?: boolean } = {}): Fingerprint {
  const e = run.environment;
  const fp: Fingerprint = {
    kernel: String(e?.kernel ?? "–"),
    cpuModel: String(e?.cpuModel ?? "–"),
    cgroup: String(e?.cgroup ?? "–"),
    cores: String(e?.cores ?? "–"),
    node: String(e?.node ?? "–"),
  };
  // the run's timing as it ran (command-line overrides included): a 3 s run beside a 30 s one is listed, not hidden
  const timing = (run.scenarioConfig as { run?: Record<string, unknown> } | null | undefined)?.run;
  for (const [k, v] of Object.entries(timing ?? {})) fp[`workload.${k}`] = String(v);
  // what the lines were: a replay of a log file beside seeded text is another test, listed whenever they meet
  if (run.scenarioConfig) fp["workload.source"] = sourceWords(run.scenarioConfig as { source?: unknown });
  for (const [name, v] of Object.entries(run.versions ?? {})) {
    fp[`versions.${name}.running`] = String(v.running);
    fp[`versions.${name}.pinned`] = String(v.pinned);
  }
  if (options.limits) {
    for (const [host, l] of Object.entries(run.limits ?? {})) {
      fp[`limits.${host}.enforced`] = String(l.enforced);
      for (const [k, v] of Object.entries(l.applied))
        if (!/Interface$/.test(k)) fp[`limits.${host}.${k}`] = String(v);
    }
  }
  return fp;
}

/** The fingerprint of a group of runs: per field, the distinct values (sorted) joined by " | ". */
export function groupFingerprint(runs: RunRecord[], options: { limits?: boolean } = {}): Fingerprint {
  const values = new Map<string, Set<string>>();
  for (const r of runs) {
    for (const [k, v] of Object.entries(runFingerprint(r, options))) {
      if (!values.has(k)) values.set(k, new Set());
      values.get(k)!.add(v);
    }
  }
  const fp: Fingerprint = {};
  for (const [k, set] of values) fp[k] = [...set].sort().join(" | ");
  return fp;
}

const kindOf = (field: string): FingerprintDifference["kind"] =>
  field.startsWith("versions.")
    ? "version"
    : field.startsWith("limits.")
      ? "limits"
      : field.startsWith("workload.")
        ? "workload"
        : "environment";

/**
 * Fields whose values differ between labelled fingerprints, or hold several values within one ("a | b").
 * Ordered environment, versions, limits; fields in first-seen order.
 */
export function diffFingerprints(
  groups: Array<{ label: string; fingerprint: Fingerprint }>,
): FingerprintDifference[] {
  const fields: string[] = [];
  for (const g of groups) for (const k of Object.keys(g.fingerprint)) if (!fields.includes(k)) fields.push(k);
  const out: FingerprintDifference[] = [];
  for (const field of fields) {
    const values: Record<string, string> = {};
    for (const g of groups) values[g.label] = g.fingerprint[field] ?? "–";
    const distinct = new Set(Object.values(values));
    if (distinct.size > 1 || [...distinct].some((v) => v.includes(" | ")))
      out.push({ field, kind: kindOf(field), values });
  }
  const rank = { environment: 0, version: 1, limits: 2, workload: 3 } as const;
  return out.sort((a, b) => rank[a.kind] - rank[b.kind]);
}

/** "field: label value; label value" (no kind marker). */
export const describeDifference = (d: FingerprintDifference): string =>
  `${d.field}: ${Object.entries(d.values)
    .map(([label, v]) => `${label} ${v}`)
    .join("; ")}`;

/** @throws ConfigurationError E_VERSION_MISMATCH when a difference is of kind "version" and not forced */
export function refuseVersionMismatch(
  differences: FingerprintDifference[],
  force: boolean | undefined,
  what: string,
): void {
  const versions = differences.filter((d) => d.kind === "version");
  if (versions.length === 0 || force) return;
  throw new ConfigurationError(
    "E_VERSION_MISMATCH",
    `refusing to compare ${what}: component versions differ\n${versions.map((d) => `  ${describeDifference(d)}`).join("\n")}\n` +
      "compare anyway with --force (force: true); the differences are then listed with the result",
  );
}

/**
 * The differences between stacks, each stack's fingerprint taken once (from its first row) in the rows' order of
 * first appearance; rows are those of compareStacks (one per stack and cell, every row of a stack carries the
 * stack's fingerprint).
 */
export function stackDifferences(
  rows: ReadonlyArray<{ stack: string; fingerprint: Fingerprint }>,
): FingerprintDifference[] {
  const groups: Array<{ label: string; fingerprint: Fingerprint }> = [];
  for (const r of rows)
    if (!groups.some((g) => g.label === r.stack)) groups.push({ label: r.stack, fingerprint: r.fingerprint });
  return diffFingerprints(groups);
}
