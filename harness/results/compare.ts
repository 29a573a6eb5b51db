/**
 * Comparisons of results on disk (results/<stack>/<scenario>/<run-id>/run.json).
 *
 * - Across stacks (hardware sizes), `compareStacks`: per stack and cell, the runs of the stack's latest `bench`
 *   invocation; median rows/s and MiB/s with their spread (IQR, coefficient of variation, "erratic" above a
 *   threshold); the ratio of medians to the first stack with a percentile bootstrap interval (Efron & Tibshirani
 *   1993, see harness/stats/bootstrap.ts) over the runs' rows/s; rows/s per vCPU and per GiB of the sink's caps;
 *   CPU use and cost per row, throttling, network, ingest lag, the bottleneck and the ledger.
 * - Across runs on one stack, `compareRuns`: a baseline selection of runs against one or more contender
 *   selections, per cell.
 * - Both apply the honesty rules of harness/stats/compare.ts: fewer than 3 measured runs on a side is
 *   "inconclusive (n=…)", and when an A/A result exists for the stack and scenario (`ingestbench aa`, stored in
 *   results/<stack>/<scenario>.aa/noise-floor.json) a change must also exceed that cell's measured noise floor.
 * - Both compare environment fingerprints (kernel, CPU model, cgroup version, machine cores, Node, component
 *   versions; across runs also the applied limits), list the differences, and refuse mismatched component
 *   versions with a ConfigurationError unless forced.
 */
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import Table from "cli-table3";
import { parseBytes, parseCpu } from "../../core/units.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { DEFAULT_CONFIDENCE } from "../stats/bootstrap.ts";
import { compareSamples, describeSample, type CompareOptions, type SampleComparison, type SampleDescription } from "../stats/compare.ts";
import { writeFileAtomic } from "./store.ts";
import { median } from "../stats/descriptive.ts";
import { loadRuns } from "./store.ts";
import type { RunRecord } from "./types.ts";

/**
 * Statistics options shared by both comparisons, plus `force` (compare despite mismatched component versions) and
 * `noiseFloors` (apply stored A/A noise floors when present; default true). `noiseFloor` itself is set per cell.
 */
export interface ComparisonOptions extends Omit<CompareOptions, "noiseFloor"> {
  force?: boolean;
  noiseFloors?: boolean;
}

// ------------------------------------------------------------------------------------------ noise floors

/**
 * A/A runs (`ingestbench aa`) are stored under results/<stack>/<scenario>.aa/: a scenario directory of their own, so
 * that they never count as a night (nightly's latest/previous) or as a stack's latest bench.
 */
export const AA_SUFFIX = ".aa";

/** One cell's A/A result: group B compared with group A, both the same stack, scenario and cell. */
export interface NoiseFloorCell {
  cell: string;
  /** the noise floor, a fraction: max(CI half-width, |ratio − 1|) (stats/compare.ts noiseFloorOf); null without an interval */
  floor: number | null;
  /** median(B) / median(A) */
  ratio: number;
  /** its bootstrap interval (null with fewer than 2 measured runs in a group) */
  ci: [number, number] | null;
  /** (ci high − ci low) / 2, null without an interval */
  halfWidth: number | null;
  n: { a: number; b: number };
  /** fewer than the minimum sample size in a group: the floor is an underestimate (the interval is too narrow) */
  inconclusive: boolean;
  reason: string;
}

/** results/<stack>/<scenario>.aa/noise-floor.json */
export interface NoiseFloorFile {
  stack: string;
  scenario: string;
  /** invocation of group A ("<iso>/A"); group B is "<iso>/B" */
  invocation: string;
  createdAt: string;
  confidence: number;
  cells: NoiseFloorCell[];
}

export function noiseFloorPath(resultsRoot: string, stack: string, scenario: string): string {
  return path.join(resultsRoot, stack, `${scenario}${AA_SUFFIX}`, "noise-floor.json");
}

/** Write (replace) the stack's and scenario's noise floors. */
export async function writeNoiseFloors(resultsRoot: string, file: NoiseFloorFile): Promise<string> {
  const p = noiseFloorPath(resultsRoot, file.stack, file.scenario);
  await mkdir(path.dirname(p), { recursive: true });
  await writeFileAtomic(p, `${JSON.stringify(file, null, 2)}\n`);
  return p;
}

/**
 * The stored A/A result of a stack and scenario, or null when there is none.
 * @throws ConfigurationError E_NOISE_FLOOR when the file exists but is not readable JSON of the expected shape
 */
export function loadNoiseFloors(resultsRoot: string, stack: string, scenario: string): NoiseFloorFile | null {
  const p = noiseFloorPath(resultsRoot, stack, scenario);
  let text: string;
  try {
    text = readFileSync(p, "utf8");
  } catch {
    return null;
  }
  try {
    const f = JSON.parse(text) as NoiseFloorFile;
    if (!Array.isArray(f.cells)) throw new Error("no cells array");
    return f;
  } catch (e) {
    throw new ConfigurationError("E_NOISE_FLOOR", `${p}: not a noise-floor file (${(e as Error).message}); run ingestbench aa --stack ${stack} again or delete it`);
  }
}

/** Noise floor per cell (fraction) of a stack, from its stored A/A result; cells without an interval are left out. */
function floorsOf(resultsRoot: string, stack: string, scenario: string, use: boolean | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (use === false) return out;
  for (const c of loadNoiseFloors(resultsRoot, stack, scenario)?.cells ?? []) if (c.floor !== null && Number.isFinite(c.floor)) out.set(c.cell, c.floor);
  return out;
}

/** The sink host's caps as applied: CPU in cores (cfsQuotaUs / cfsPeriodUs), memory in bytes; null when uncapped. */
export interface SinkCaps {
  cores: number | null;
  memoryBytes: number | null;
}

export interface StackRow {
  stack: string;
  /** the first stack, which ratios refer to */
  baselineStack: string;
  /** with a single stack and several cells: the first cell, which ratios refer to instead (how the swept parameter moves throughput) */
  baselineCell?: string;
  /** matrix cell id ("default" without a matrix) */
  cell: string;
  runs: RunRecord[];
  /** runs whose summary exists (status ok or failed checks) */
  measured: RunRecord[];
  medianRowsPerSecond: number;
  medianMiBPerSecond: number;
  /** median rows/s of this stack / of the first stack (same cell) */
  ratio: number;
  /** spread of the measured runs' rows/s (n, median, IQR, min, max, CV, erratic) */
  rowsPerSecond: SampleDescription;
  /** ratio to the first stack with its bootstrap interval and verdict; null for the first stack itself */
  comparison: SampleComparison | null;
  /** the sink's caps (from the latest measured run) */
  caps: SinkCaps;
  /** median over runs of rows/s ÷ sink cores, and ÷ sink GiB of memory; null when uncapped */
  rowsPerSecondPerCore: number | null;
  rowsPerSecondPerGiB: number | null;
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
  /** environment fingerprint of the stack's runs (all its cells) */
  fingerprint: Fingerprint;
}

// ------------------------------------------------------------------------------------------------ helpers

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

const med = (runs: RunRecord[], f: (r: RunRecord) => number | null | undefined): number =>
  median(runs.map(f).filter(finite));

/** Cell ids in natural order ("batch=1000" before "batch=8000" before "batch=50000"). */
const cellSort = (a: string, b: string): number => a.localeCompare(b, "en", { numeric: true });

/** cgroup v1 reports "no memory limit" as a number near 2^63. */
const UNLIMITED_BYTES = 2 ** 60;

/**
 * The sink host's caps from run.json `limits.<host>`: cores = applied cfsQuotaUs / cfsPeriodUs, memory = applied
 * memoryLimitBytes; when the host is enforced but a value was not read back, the requested value (parsed with
 * core/units.ts). Null when uncapped (absent, negative quota, or cgroup v1's "unlimited" near 2^63).
 */
export function sinkCaps(run: RunRecord, host = "sink"): SinkCaps {
  const l = run.limits[host];
  if (!l) return { cores: null, memoryBytes: null };
  const q = l.applied.cfsQuotaUs;
  const p = l.applied.cfsPeriodUs;
  let cores = finite(q) && finite(p) && q > 0 && p > 0 ? q / p : null;
  const m = l.applied.memoryLimitBytes;
  let memoryBytes = finite(m) && m > 0 && m < UNLIMITED_BYTES ? m : null;
  if (l.enforced) {
    const req = l.requested;
    if (cores === null && req.cpu !== undefined && !("cfsQuotaUs" in l.applied)) {
      try {
        const c = parseCpu(req.cpu as Parameters<typeof parseCpu>[0]);
        cores = c.quotaUs / c.periodUs;
      } catch { /* not a cap we can read: leave uncapped */ }
    }
    if (memoryBytes === null && req.memory !== undefined && !("memoryLimitBytes" in l.applied)) {
      try {
        memoryBytes = parseBytes(req.memory as string | number);
      } catch { /* idem */ }
    }
  }
  return { cores, memoryBytes };
}

/** Median over runs of rows/s divided by a per-run cap (cores or GiB); null when no run has the cap. */
function perCap(runs: RunRecord[], cap: (c: SinkCaps) => number | null): number | null {
  const xs: number[] = [];
  for (const r of runs) {
    const c = cap(sinkCaps(r));
    const v = r.summary?.rowsPerSecond;
    if (c !== null && c > 0 && finite(v)) xs.push(v / c);
  }
  return xs.length ? median(xs) : null;
}
const perCore = (runs: RunRecord[]): number | null => perCap(runs, (c) => c.cores);
const perGiB = (runs: RunRecord[]): number | null => perCap(runs, (c) => (c.memoryBytes === null ? null : c.memoryBytes / 2 ** 30));

const rowsPerSecondOf = (runs: RunRecord[]): number[] => runs.map((r) => r.summary?.rowsPerSecond).filter(finite);

// ------------------------------------------------------------------------------------------ fingerprints

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

/** The fingerprint of one run; `limits: true` adds the applied limits of every host. */
export function runFingerprint(run: RunRecord, options: { limits?: boolean } = {}): Fingerprint {
  const e = run.environment;
  const fp: Fingerprint = {
    kernel: String(e?.kernel ?? "–"), cpuModel: String(e?.cpuModel ?? "–"), cgroup: String(e?.cgroup ?? "–"),
    cores: String(e?.cores ?? "–"), node: String(e?.node ?? "–"),
  };
  // the run's timing as it ran (command-line overrides included): a 3 s run beside a 30 s one is listed, not hidden
  const timing = (run.scenarioConfig as { run?: Record<string, unknown> } | null | undefined)?.run;
  for (const [k, v] of Object.entries(timing ?? {})) fp[`workload.${k}`] = String(v);
  for (const [name, v] of Object.entries(run.versions ?? {})) {
    fp[`versions.${name}.running`] = String(v.running);
    fp[`versions.${name}.pinned`] = String(v.pinned);
  }
  if (options.limits) {
    for (const [host, l] of Object.entries(run.limits ?? {})) {
      fp[`limits.${host}.enforced`] = String(l.enforced);
      for (const [k, v] of Object.entries(l.applied)) if (!/Interface$/.test(k)) fp[`limits.${host}.${k}`] = String(v);
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
  field.startsWith("versions.") ? "version" : field.startsWith("limits.") ? "limits" : field.startsWith("workload.") ? "workload" : "environment";

/**
 * Fields whose values differ between labelled fingerprints, or hold several values within one ("a | b").
 * Ordered environment, versions, limits; fields in first-seen order.
 */
export function diffFingerprints(groups: Array<{ label: string; fingerprint: Fingerprint }>): FingerprintDifference[] {
  const fields: string[] = [];
  for (const g of groups) for (const k of Object.keys(g.fingerprint)) if (!fields.includes(k)) fields.push(k);
  const out: FingerprintDifference[] = [];
  for (const field of fields) {
    const values: Record<string, string> = {};
    for (const g of groups) values[g.label] = g.fingerprint[field] ?? "–";
    const distinct = new Set(Object.values(values));
    if (distinct.size > 1 || [...distinct].some((v) => v.includes(" | "))) out.push({ field, kind: kindOf(field), values });
  }
  const rank = { environment: 0, version: 1, limits: 2, workload: 3 } as const;
  return out.sort((a, b) => rank[a.kind] - rank[b.kind]);
}

const describeDifference = (d: FingerprintDifference): string =>
  `${d.field}: ${Object.entries(d.values).map(([label, v]) => `${label} ${v}`).join("; ")}`;

/** @throws ConfigurationError E_VERSION_MISMATCH when a difference is of kind "version" and not forced */
function refuseVersionMismatch(differences: FingerprintDifference[], force: boolean | undefined, what: string): void {
  const versions = differences.filter((d) => d.kind === "version");
  if (versions.length === 0 || force) return;
  throw new ConfigurationError(
    "E_VERSION_MISMATCH",
    `refusing to compare ${what}: component versions differ\n${versions.map((d) => `  ${describeDifference(d)}`).join("\n")}\n`
      + "compare anyway with --force (force: true); the differences are then listed with the result",
  );
}

// -------------------------------------------------------------------------------------- across stacks

/**
 * Per stack and cell, the runs of the stack's latest invocation: medians, spread, ratio to the first stack's same
 * cell with a bootstrap interval over the runs' rows/s (`compareSamples`, default 90 %, seed 1: deterministic),
 * per-vCPU and per-GiB figures and the environment fingerprint. Rows are ordered by cell (natural order), then
 * by stack as given. Limits differ between stacks by design and are not part of the fingerprint here.
 * @throws ConfigurationError E_NO_RESULTS when a stack has no runs of the scenario; E_VERSION_MISMATCH when the
 *         stacks' component versions differ and `force` is not set
 */
export async function compareStacks(resultsRoot: string, scenario: string, stacks: string[], options: ComparisonOptions = {}): Promise<StackRow[]> {
  const perStack: Array<{ stack: string; runs: RunRecord[] }> = [];
  for (const stack of stacks) {
    const all = await loadRuns(resultsRoot, stack, scenario);
    if (all.length === 0) {
      throw new ConfigurationError("E_NO_RESULTS", `no results for scenario "${scenario}" on stack "${stack}" under ${resultsRoot}/${stack}/${scenario}; run: ingestbench bench --stack ${stack} scenarios/${scenario}.yaml`);
    }
    // the latest invocation that completed a measurement: a run killed before it measured (still "running"), one
    // that failed at start, or one interrupted after a few seconds must not hide the last complete results; only when
    // there are none does an interrupted measurement count (it is labelled so)
    const complete = all.filter((r) => r.summary !== null && r.status !== "interrupted");
    const measured = all.filter((r) => r.summary !== null);
    const pool = complete.length > 0 ? complete : measured.length > 0 ? measured : all;
    const latest = pool[pool.length - 1]!.invocation;
    perStack.push({ stack, runs: all.filter((r) => r.invocation === latest) });
  }
  const fingerprints = new Map(perStack.map((s) => [s.stack, groupFingerprint(s.runs)]));
  refuseVersionMismatch(diffFingerprints(perStack.map((s) => ({ label: s.stack, fingerprint: fingerprints.get(s.stack)! }))), options.force, `stacks ${stacks.join(", ")}`);

  const cells = [...new Set(perStack.flatMap((s) => s.runs.map((r) => r.cell)))].sort(cellSort);
  const floors = new Map(perStack.map((s) => [s.stack, floorsOf(resultsRoot, s.stack, scenario, options.noiseFloors)]));
  // across stacks the noise of both sides counts: the larger of the two stacks' A/A floors for the cell
  const floorFor = (stack: string, cell: string): number | null => {
    const xs = [floors.get(perStack[0]!.stack)!.get(cell), floors.get(stack)!.get(cell)].filter(finite);
    return xs.length ? Math.max(...xs) : null;
  };
  const rows: StackRow[] = [];
  for (const cell of cells) {
    let baseline: RunRecord[] | null = null;
    for (const { stack, runs: stackRuns } of perStack) {
      const runs = stackRuns.filter((r) => r.cell === cell);
      if (runs.length === 0) continue;
      const measured = runs.filter((r) => r.summary !== null);
      const isFirst = stack === perStack[0]!.stack;
      if (isFirst) baseline = measured;
      const values = rowsPerSecondOf(measured);
      const lastMeasured = measured[measured.length - 1] ?? runs[runs.length - 1]!;
      rows.push({
        stack, baselineStack: perStack[0]!.stack, cell, runs, measured,
        medianRowsPerSecond: med(measured, (r) => r.summary?.rowsPerSecond),
        medianMiBPerSecond: med(measured, (r) => r.summary?.mibPerSecond),
        ratio: Number.NaN,
        rowsPerSecond: describeSample(values, { erraticCv: options.erraticCv }),
        comparison: isFirst || baseline === null ? null : compareSamples(rowsPerSecondOf(baseline), values, { ...options, noiseFloor: floorFor(stack, cell) }),
        caps: sinkCaps(lastMeasured),
        rowsPerSecondPerCore: perCore(measured),
        rowsPerSecondPerGiB: perGiB(measured),
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
        fingerprint: fingerprints.get(stack)!,
      });
    }
    const base = rows.find((r) => r.cell === cell && r.stack === perStack[0]!.stack)?.medianRowsPerSecond ?? Number.NaN;
    for (const r of rows) if (r.cell === cell) r.ratio = r.medianRowsPerSecond / base;
  }
  if (perStack.length === 1 && cells.length > 1) sweepRatios(rows, options);
  return rows;
}

// ----------------------------------------------------------------------------------------- formatting

const int = (n: number | null): string => (n !== null && Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
const fix = (n: number | null, d: number, unit = ""): string => (n !== null && Number.isFinite(n) ? `${n.toFixed(d)}${unit}` : "–");
const pctLabel = (c: number): string => `${Number((c * 100).toFixed(1))} %`;

/** "3.1 %", "12.4 % erratic", or "–" with fewer than 2 values. */
function cvCell(d: SampleDescription): string {
  if (d.n < 2 || !Number.isFinite(d.cv)) return "–";
  return `${(d.cv * 100).toFixed(1)} %${d.erratic ? " erratic" : ""}`;
}

/**
 * One stack, several cells: ratios and comparisons against the first cell, so that the table reads as "how the swept
 * parameter moves throughput" (with the same bootstrap interval and rules as between stacks; no A/A floor applies,
 * the cells differ on purpose).
 */
function sweepRatios(rows: StackRow[], options: ComparisonOptions): void {
  const first = rows[0]!;
  for (const r of rows) {
    r.baselineCell = first.cell;
    r.ratio = r.medianRowsPerSecond / first.medianRowsPerSecond;
    r.comparison = r === first ? null : compareSamples(rowsPerSecondOf(first.measured), rowsPerSecondOf(r.measured), options);
  }
}

/**
 * "[1.15, 1.25] faster", "[0.97, 1.04] ~", "[0.91, 0.95] inconclusive (n=2/2)", "n=1" (no interval), "baseline", or
 * "–" (nothing to compare with).
 */
function ciCell(c: SampleComparison | null, isBaseline: boolean): string {
  if (isBaseline) return "baseline";
  if (c === null) return "–";
  if (c.ci === null) return `n=${Math.min(c.n.baseline, c.n.contender)}`;
  const mark = c.inconclusive ? `inconclusive (n=${c.n.baseline}/${c.n.contender})` : c.change === "none" ? "~" : c.change;
  return `[${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}] ${mark}`;
}

/** "faster", "slower", "no change" or "inconclusive". */
export function verdictWord(c: SampleComparison): string {
  return c.inconclusive ? "inconclusive" : c.change === "none" ? "no change" : c.change;
}

function ledgerCell(measured: number, lost: number, duplicated: number, stored: number, sent: number): string {
  return measured === 0 ? "–"
    : lost === 0 && duplicated === 0 && stored === sent ? `exact (${int(stored)} stored)`
    : `lost ${int(lost)}, dup ${int(duplicated)}`;
}

function differencesBlock(differences: FingerprintDifference[]): string {
  if (differences.length === 0) return "";
  return `\nenvironment differences (${differences.some((d) => d.kind === "version") ? "component versions differ: compared with --force" : "listed for the record"}):\n`
    + differences.map((d) => `  ${d.kind === "version" ? "!! " : ""}${describeDifference(d)}`).join("\n");
}

/**
 * Render stack rows as a terminal table (cli-table3): runs, rows/s with IQR and CV ("erratic" above the threshold),
 * MiB/s, ratio with its interval ("n=1" without one), rows/s per vCPU and per GiB ("–" when uncapped), CPU,
 * throttling, network, lag, bottleneck and ledger; a cell column when there are several cells; then the verdicts
 * and the environment differences between the stacks.
 */
export function renderComparison(scenario: string, rows: StackRow[]): string {
  const confidence = rows.find((r) => r.comparison)?.comparison?.confidence ?? DEFAULT_CONFIDENCE;
  const cells = new Set(rows.map((r) => r.cell));
  const withCell = cells.size > 1;
  const head = [
    "stack", ...(withCell ? ["cell"] : []), "runs", "rows/s", "IQR", "CV", "MiB/s", "ratio", `${pctLabel(confidence)} CI`,
    "rows/s/vCPU", "rows/s/GiB", "sink cores", "CPU ms/1k rows", "throttled", "net Mbit/s", "lag p99", "bottleneck", "ledger",
  ];
  const table = new Table({
    head,
    style: { head: [], border: [] },
    colAligns: head.map((h) => (["stack", "cell", "bottleneck", "ledger", `${pctLabel(confidence)} CI`].includes(h) ? "left" : "right")),
  });
  for (const r of rows) {
    const statuses = r.runs.filter((x) => x.status !== "ok").map((x) => x.status);
    table.push([
      r.stack, ...(withCell ? [r.cell] : []), `${r.measured.length}/${r.runs.length}${statuses.length ? ` (${statuses.join(",")})` : ""}`,
      int(r.medianRowsPerSecond), r.rowsPerSecond.n >= 2 ? int(r.rowsPerSecond.iqr) : "–", cvCell(r.rowsPerSecond),
      fix(r.medianMiBPerSecond, 2), fix(r.ratio, 2, "x"), ciCell(r.comparison, r.baselineCell !== undefined ? r.cell === r.baselineCell : r.stack === r.baselineStack),
      int(r.rowsPerSecondPerCore), int(r.rowsPerSecondPerGiB),
      fix(r.sinkCores, 2), fix(r.cpuMsPer1000Rows, 1), r.measured.length === 0 ? "–" : r.throttledShare === null ? "no cap" : fix(r.throttledShare * 100, 0, " %"),
      fix(r.networkMbitPerSecond, 1), r.lagP99Ms === null ? "–" : `${int(r.lagP99Ms)} ms`, r.bottlenecks.join(", ") || "–",
      ledgerCell(r.measured.length, r.lost, r.duplicated, r.stored, r.sent),
    ]);
  }
  const verdicts = rows.filter((r) => r.comparison && r.comparison.ci !== null)
    .map((r) => `  ${r.stack}${withCell ? ` ${r.cell}` : ""}: ${fix(r.ratio, 2, "x")} ${verdictWord(r.comparison!)} (${r.comparison!.reason})`);
  const stackFps: Array<{ label: string; fingerprint: Fingerprint }> = [];
  for (const r of rows) if (!stackFps.some((s) => s.label === r.stack)) stackFps.push({ label: r.stack, fingerprint: r.fingerprint });
  const ratioTo = rows[0]?.baselineCell !== undefined ? `the first cell, ${rows[0].baselineCell}` : `${rows[0]?.stack ?? "?"}${withCell ? " (same cell)" : ""}`;
  return `${scenario}: median over each stack's latest runs; ratio to ${ratioTo}\n${table.toString()}`
    + (verdicts.length ? `\nverdicts:\n${verdicts.join("\n")}` : "")
    + differencesBlock(diffFingerprints(stackFps));
}

/** JSON-ready form of stack rows (run records replaced by their ids; NaN becomes null when stringified). */
export function stackComparisonJson(scenario: string, rows: StackRow[]): object {
  const stackFps: Array<{ label: string; fingerprint: Fingerprint }> = [];
  for (const r of rows) if (!stackFps.some((s) => s.label === r.stack)) stackFps.push({ label: r.stack, fingerprint: r.fingerprint });
  return {
    mode: "stacks", scenario, baseline: rows[0]?.stack ?? null,
    rows: rows.map(({ runs, measured, ...rest }) => ({ ...rest, runIds: runs.map((r) => r.runId), measuredRunIds: measured.map((r) => r.runId) })),
    differences: diffFingerprints(stackFps),
  };
}

// ----------------------------------------------------------------------------------------- across runs

export interface RunsSelection {
  /** run id prefix, invocation prefix, "latest" or "previous" (the invocation before the latest) */
  baseline: string;
  /** one or more selections as for baseline; default ["latest"] */
  contenders?: string[];
}

/** A selection of runs on one stack. */
export interface RunGroup {
  /** the selector as given */
  label: string;
  invocations: string[];
  runIds: string[];
  statuses: Record<string, number>;
  caps: SinkCaps;
  fingerprint: Fingerprint;
}

/** One group's figures in one cell (rows/s; per vCPU and per GiB of the sink caps, null when uncapped). */
export interface CellSide {
  label: string;
  runs: number;
  measured: number;
  rowsPerSecond: SampleDescription;
  medianMiBPerSecond: number;
  rowsPerSecondPerCore: number | null;
  rowsPerSecondPerGiB: number | null;
  lost: number;
  duplicated: number;
  stored: number;
  sent: number;
}

export interface CellComparison {
  cell: string;
  baseline: CellSide;
  /** per contender: its figures and the comparison with the baseline (null when a side has no measured run) */
  contenders: Array<CellSide & { comparison: SampleComparison | null; reason: string | null }>;
}

export interface RunsComparison {
  mode: "runs";
  scenario: string;
  stack: string;
  baseline: RunGroup;
  contenders: RunGroup[];
  cells: CellComparison[];
  /** environment, version and limit differences between the groups */
  differences: FingerprintDifference[];
  /** true when versions differ and the comparison went ahead because of `force` */
  forced: boolean;
  /** significant changes over all cells and contenders */
  significant: { faster: number; slower: number };
  /** comparisons without a verdict: fewer than 3 measured runs on a side */
  inconclusive: number;
  /** the A/A noise floors applied, per cell (fraction); empty when no A/A result is stored */
  noiseFloors: Record<string, number>;
}

/** Runs matching a selector: "latest"/"previous" invocation, else runs whose run id or invocation starts with it. */
function selectRuns(all: RunRecord[], selector: string): RunRecord[] {
  const invocations: string[] = [];
  for (const r of all) if (!invocations.includes(r.invocation)) invocations.push(r.invocation);
  invocations.sort();
  if (selector === "latest" || selector === "previous") {
    const inv = invocations[invocations.length - (selector === "latest" ? 1 : 2)];
    return inv === undefined ? [] : all.filter((r) => r.invocation === inv);
  }
  return all.filter((r) => r.runId.startsWith(selector) || r.invocation.startsWith(selector));
}

function cellSide(label: string, runs: RunRecord[], erraticCv: number | undefined): CellSide {
  const measured = runs.filter((r) => r.summary !== null);
  return {
    label, runs: runs.length, measured: measured.length,
    rowsPerSecond: describeSample(rowsPerSecondOf(measured), { erraticCv }),
    medianMiBPerSecond: med(measured, (r) => r.summary?.mibPerSecond),
    rowsPerSecondPerCore: perCore(measured), rowsPerSecondPerGiB: perGiB(measured),
    lost: runs.reduce((s, r) => s + (r.ledger?.lost ?? 0), 0),
    duplicated: runs.reduce((s, r) => s + (r.ledger?.duplicated ?? 0), 0),
    stored: runs.reduce((s, r) => s + (r.ledger?.stored ?? 0), 0),
    sent: runs.reduce((s, r) => s + (r.ledger?.sent ?? 0), 0),
  };
}

/**
 * Compare runs on one stack: a baseline selection against contender selections (each a run id prefix, an
 * invocation prefix, "latest" or "previous"), per cell: medians, spread, ratio contender / baseline with a
 * bootstrap interval and verdict (`compareSamples`), per-vCPU and per-GiB figures. Fingerprints include the
 * applied limits; all differences are listed.
 * @throws ConfigurationError E_NO_RESULTS (nothing stored for the scenario on the stack), E_NO_RUNS (a selector
 *         matches no run; the message lists recent invocations), E_SELECTOR_OVERLAP (a run is in two selections),
 *         E_VERSION_MISMATCH (component versions differ and `force` is not set)
 */
export async function compareRuns(
  resultsRoot: string, scenario: string, stack: string, selection: RunsSelection, options: ComparisonOptions = {},
): Promise<RunsComparison> {
  const all = await loadRuns(resultsRoot, stack, scenario);
  if (all.length === 0) {
    throw new ConfigurationError("E_NO_RESULTS", `no results for scenario "${scenario}" on stack "${stack}" under ${resultsRoot}/${stack}/${scenario}`);
  }
  const selectors = [selection.baseline, ...(selection.contenders?.length ? selection.contenders : ["latest"])];
  const picked = selectors.map((sel) => {
    const runs = selectRuns(all, sel);
    if (runs.length === 0) {
      const recent = [...new Set(all.map((r) => r.invocation))].sort().slice(-5);
      throw new ConfigurationError("E_NO_RUNS", `no run of "${scenario}" on "${stack}" matches "${sel}" (a run id prefix, an invocation prefix, latest or previous); recent invocations: ${recent.join(", ")}`);
    }
    return { label: sel, runs };
  });
  const owner = new Map<string, string>();
  for (const p of picked) {
    for (const r of p.runs) {
      const other = owner.get(r.runId);
      if (other !== undefined) throw new ConfigurationError("E_SELECTOR_OVERLAP", `run ${r.runId} is selected by both "${other}" and "${p.label}": a run cannot be compared with itself`);
      owner.set(r.runId, p.label);
    }
  }
  const groups: RunGroup[] = picked.map((p) => {
    const statuses: Record<string, number> = {};
    for (const r of p.runs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const measured = p.runs.filter((r) => r.summary !== null);
    return {
      label: p.label,
      invocations: [...new Set(p.runs.map((r) => r.invocation))].sort(),
      runIds: p.runs.map((r) => r.runId), statuses,
      caps: sinkCaps(measured[measured.length - 1] ?? p.runs[p.runs.length - 1]!),
      fingerprint: groupFingerprint(p.runs, { limits: true }),
    };
  });
  const differences = diffFingerprints(groups.map((g) => ({ label: g.label, fingerprint: g.fingerprint })));
  refuseVersionMismatch(differences, options.force, `runs ${selectors.join(" vs ")} of "${scenario}" on "${stack}"`);

  const cells = [...new Set(picked.flatMap((p) => p.runs.map((r) => r.cell)))].sort(cellSort);
  const floors = floorsOf(resultsRoot, stack, scenario, options.noiseFloors);
  const significant = { faster: 0, slower: 0 };
  let inconclusive = 0;
  const out: CellComparison[] = cells.map((cell) => {
    const base = picked[0]!.runs.filter((r) => r.cell === cell);
    const baseSide = cellSide(picked[0]!.label, base, options.erraticCv);
    const baseValues = rowsPerSecondOf(base.filter((r) => r.summary !== null));
    return {
      cell, baseline: baseSide,
      contenders: picked.slice(1).map((p) => {
        const runs = p.runs.filter((r) => r.cell === cell);
        const side = cellSide(p.label, runs, options.erraticCv);
        const values = rowsPerSecondOf(runs.filter((r) => r.summary !== null));
        if (baseValues.length === 0 || values.length === 0) {
          const missing = baseValues.length === 0 ? `the baseline "${picked[0]!.label}"` : `"${p.label}"`;
          return { ...side, comparison: null, reason: `no measured run of cell ${cell} in ${missing}` };
        }
        const comparison = compareSamples(baseValues, values, { ...options, noiseFloor: floors.get(cell) ?? null });
        if (comparison.significant) significant[comparison.change === "faster" ? "faster" : "slower"]++;
        if (comparison.inconclusive) inconclusive++;
        return { ...side, comparison, reason: comparison.reason };
      }),
    };
  });
  return {
    mode: "runs", scenario, stack, baseline: groups[0]!, contenders: groups.slice(1), cells: out, differences,
    forced: differences.some((d) => d.kind === "version"), significant, inconclusive,
    noiseFloors: Object.fromEntries(floors),
  };
}

/**
 * Render an across-runs comparison: one table row per cell and group (baseline first) with runs, rows/s, IQR, CV,
 * ratio to the baseline, interval and verdict, per-vCPU and per-GiB figures and the ledger; then the selections,
 * the count of significant changes, and the environment differences.
 */
export function renderRunsComparison(c: RunsComparison): string {
  const confidence = c.cells.flatMap((x) => x.contenders).find((x) => x.comparison)?.comparison?.confidence ?? DEFAULT_CONFIDENCE;
  const head = ["cell", "runs of", "runs", "rows/s", "IQR", "CV", "MiB/s", "ratio", `${pctLabel(confidence)} CI`, "rows/s/vCPU", "rows/s/GiB", "ledger"];
  const table = new Table({
    head, style: { head: [], border: [] },
    colAligns: head.map((h) => (["cell", "runs of", "ledger", `${pctLabel(confidence)} CI`].includes(h) ? "left" : "right")),
  });
  const sideCells = (s: CellSide): string[] => [
    `${s.measured}/${s.runs}`, int(s.rowsPerSecond.median), s.rowsPerSecond.n >= 2 ? int(s.rowsPerSecond.iqr) : "–", cvCell(s.rowsPerSecond),
    fix(s.medianMiBPerSecond, 2),
  ];
  const notes: string[] = [];
  for (const cell of c.cells) {
    const b = cell.baseline;
    table.push([cell.cell, `${b.label} (baseline)`, ...sideCells(b), b.measured ? "1.00x" : "–", "baseline", int(b.rowsPerSecondPerCore), int(b.rowsPerSecondPerGiB), ledgerCell(b.measured, b.lost, b.duplicated, b.stored, b.sent)]);
    for (const k of cell.contenders) {
      table.push([
        cell.cell, k.label, ...sideCells(k), fix(k.comparison?.ratio ?? null, 2, "x"), ciCell(k.comparison, false),
        int(k.rowsPerSecondPerCore), int(k.rowsPerSecondPerGiB), ledgerCell(k.measured, k.lost, k.duplicated, k.stored, k.sent),
      ]);
      if (k.reason) notes.push(`  ${cell.cell} ${k.label}: ${k.comparison && (k.comparison.change !== "none") ? `${k.comparison.change}, ` : ""}${k.reason}`);
    }
  }
  const groups = [c.baseline, ...c.contenders].map((g) => `  ${g.label}: ${g.runIds.length} runs, invocation${g.invocations.length > 1 ? "s" : ""} ${g.invocations.join(", ")}`);
  return `${c.scenario} on ${c.stack}: runs compared with the baseline "${c.baseline.label}", per cell\n${groups.join("\n")}\n${table.toString()}`
    + (notes.length ? `\nverdicts:\n${notes.join("\n")}` : "")
    + `\nsignificant changes: ${c.significant.slower} slower, ${c.significant.faster} faster${c.inconclusive ? `; ${c.inconclusive} inconclusive (fewer than 3 measured runs on a side)` : ""}`
    + (Object.keys(c.noiseFloors).length ? `\nA/A noise floors applied (results/${c.stack}/${c.scenario}${AA_SUFFIX}/noise-floor.json): ${Object.entries(c.noiseFloors).map(([cell, f]) => `${cell} ±${(f * 100).toFixed(1)} %`).join(", ")}` : "")
    + differencesBlock(c.differences);
}

// ------------------------------------------------------------------------------------------- command

export interface CompareCommandFlags {
  scenario: string;
  /** comma-separated stack names: the first is the baseline; exactly one in across-runs mode */
  stacks: string;
  baseline?: string;
  /** contender selectors (each may be comma-separated) */
  contender?: string[];
  force?: boolean;
  json?: boolean;
}

/**
 * The `ingestbench compare` command: across stacks (`--stacks a,b`) or, with `--baseline` (and `--contender`),
 * across runs on one stack. Returns the text to print (a table, or JSON with `--json`).
 * @throws ConfigurationError E_FLAG for inconsistent flags, and whatever compareStacks / compareRuns throw
 */
export async function compareCommand(resultsRoot: string, flags: CompareCommandFlags): Promise<string> {
  const stacks = flags.stacks.split(",").map((s) => s.trim()).filter(Boolean);
  const contenders = (flags.contender ?? []).flatMap((c) => c.split(",")).map((s) => s.trim()).filter(Boolean);
  const options: ComparisonOptions = { force: Boolean(flags.force) };
  if (flags.baseline !== undefined || contenders.length > 0) {
    if (flags.baseline === undefined) throw new ConfigurationError("E_FLAG", "--contender needs --baseline <invocation-or-run-id-prefix>", { field: "baseline" });
    if (stacks.length !== 1) throw new ConfigurationError("E_FLAG", `--baseline/--contender compare runs on one stack: give exactly one name in --stacks, got ${stacks.length}`, { field: "stacks" });
    const result = await compareRuns(resultsRoot, flags.scenario, stacks[0]!, { baseline: flags.baseline, contenders }, options);
    return flags.json ? JSON.stringify(result, null, 2) : renderRunsComparison(result);
  }
  const rows = await compareStacks(resultsRoot, flags.scenario, stacks, options);
  return flags.json ? JSON.stringify(stackComparisonJson(flags.scenario, rows), null, 2) : renderComparison(flags.scenario, rows);
}
