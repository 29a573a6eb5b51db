/**
 * What a report shows, gathered from results on disk: per scenario, the comparison across stacks
 * (`compareStacks`: each stack's latest invocation; component versions that differ are listed, not refused) and
 * the runs it covers with their series.
 */
import { variantsTable, type VariantsComparison } from "../results/across-variants.ts";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { ConfigurationError } from "../../core/errors.ts";
import { compareStacks, type StackRow } from "../results/across-stacks.ts";
import type { ExcludedRun } from "../results/eligibility.ts";
import { stackDifferences, type FingerprintDifference } from "../results/fingerprint.ts";
import { CAPACITY_SUFFIX, loadCapacity, type CapacityFile } from "../results/capacity.ts";
import { loadRuns, runDir } from "../results/store.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";

export interface ReportRun {
  run: RunRecord;
  series: SeriesPoint[];
  /** "stack cell r1" (cell left out when there is no matrix) */
  label: string;
}

/** The parameters a scenario's matrix sweeps (keys of run.scenarioConfig.cell), in the file's order. */
export interface Sweep {
  keys: string[];
}

export interface ScenarioReport {
  scenario: string;
  stacks: string[];
  rows: StackRow[];
  runs: ReportRun[];
  /** null without a matrix (one cell) */
  sweep: Sweep | null;
  differences: FingerprintDifference[];
  /** write-up 003's table per stack, for a scenario with an application under test (harness/results/across-variants.ts) */
  variants?: VariantsComparison[];
  /** runs of the stacks' latest invocations left out of every figure (not ok, caps not enforced, another machine), with reasons */
  excluded: ExcludedRun[];
  /** for a `<scenario>.capacity` directory: each stack's stored capacity search (harness/results/capacity.ts), in stack order */
  capacity?: CapacityFile[];
}

export interface ReportData {
  resultsRoot: string;
  generatedAt: string;
  scenarios: ScenarioReport[];
}

export interface ReportSelection {
  /** only this scenario (default: every scenario found) */
  scenario?: string;
  /**
   * only these stacks, in this order (the first is the baseline of ratios); default: every stack that ran the
   * scenario, in the order its latest runs started (`bench --stack a,b` runs a first: a is the baseline)
   */
  stacks?: string[];
}

async function subdirs(p: string): Promise<string[]> {
  try {
    return (await readdir(p, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * A run's series.jsonl, tolerating what an interrupted run leaves: no file (failed before its first window) or a
 * truncated last line (killed in the middle of an append); lines that do not parse are left out.
 */
export async function readSeries(dir: string): Promise<SeriesPoint[]> {
  let text: string;
  try {
    text = await readFile(path.join(dir, "series.jsonl"), "utf8");
  } catch {
    return [];
  }
  const out: SeriesPoint[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const p = JSON.parse(line) as SeriesPoint;
      if (p !== null && typeof p === "object" && typeof p.elapsedS === "number") out.push(p);
    } catch {
      /* truncated line */
    }
  }
  return out;
}

/** The values a run's cell gives to the swept parameters (scenarioConfig.cell, written by the planner). */
export function cellValues(run: RunRecord): Record<string, unknown> {
  const cfg = run.scenarioConfig;
  if (cfg !== null && typeof cfg === "object" && "cell" in cfg) {
    const cell = (cfg as { cell: unknown }).cell;
    if (cell !== null && typeof cell === "object" && !Array.isArray(cell))
      return cell as Record<string, unknown>;
  }
  return {};
}

function sweepOf(runs: RunRecord[]): Sweep | null {
  const keys: string[] = [];
  for (const r of runs) for (const k of Object.keys(cellValues(r))) if (!keys.includes(k)) keys.push(k);
  const cells = new Set(runs.map((r) => r.cell));
  return keys.length > 0 && cells.size > 1 ? { keys } : null;
}

/**
 * Load what the report shows from resultsRoot (results/<stack>/<scenario>/<run-id>/).
 * @throws ConfigurationError E_NO_RESULTS when nothing matches the selection
 */
export async function loadReportData(
  resultsRoot: string,
  selection: ReportSelection = {},
): Promise<ReportData> {
  const allStacks = await subdirs(resultsRoot);
  const stacks = selection.stacks?.length ? selection.stacks : allStacks;
  const scenarioNames = new Set<string>();
  for (const s of stacks) for (const sc of await subdirs(path.join(resultsRoot, s))) scenarioNames.add(sc);
  const wanted = selection.scenario === undefined ? [...scenarioNames].sort() : [selection.scenario];
  const scenarios: ScenarioReport[] = [];
  for (const scenario of wanted) {
    const started = new Map<string, string>();
    for (const s of stacks) {
      const all = await loadRuns(resultsRoot, s, scenario);
      if (all.length === 0) continue;
      // as compareStacks picks them: the latest invocation that measured something
      const measured = all.filter((r) => r.summary !== null);
      const latest = (measured.length > 0 ? measured : all).at(-1)!.invocation;
      started.set(
        s,
        all
          .filter((r) => r.invocation === latest)
          .map((r) => r.startedAt)
          .sort()[0] ?? "",
      );
    }
    const present = [...started.keys()];
    if (!selection.stacks?.length)
      present.sort((a, b) => started.get(a)!.localeCompare(started.get(b)!) || a.localeCompare(b));
    if (present.length === 0) continue;
    // the report shows what was measured: differing component versions are listed, not refused
    const rows = await compareStacks(resultsRoot, scenario, present, { force: true });
    const seen = new Set<string>();
    const records: RunRecord[] = [];
    for (const r of rows)
      for (const run of r.runs)
        if (!seen.has(run.runId)) {
          seen.add(run.runId);
          records.push(run);
        }
    const sweep = sweepOf(records);
    const runs: ReportRun[] = [];
    for (const run of records) {
      const series = await readSeries(runDir(resultsRoot, run.stack, run.scenario, run.runId));
      runs.push({
        run,
        series,
        label: `${run.stack}${sweep || run.cell !== "default" ? ` ${run.cell}` : ""} r${run.replicate}`,
      });
    }
    const variants: VariantsComparison[] = [];
    for (const st of present) {
      const v = variantsTable(await loadRuns(resultsRoot, st, scenario), scenario, st);
      if (v.invocation !== null) variants.push(v);
    }
    const capacity = scenario.endsWith(CAPACITY_SUFFIX)
      ? present.flatMap(
          (st) => loadCapacity(resultsRoot, st, scenario.slice(0, -CAPACITY_SUFFIX.length)) ?? [],
        )
      : [];
    scenarios.push({
      scenario,
      stacks: present,
      rows,
      runs,
      sweep,
      differences: stackDifferences(rows),
      excluded: rows.flatMap((r) => r.excluded),
      ...(variants.length ? { variants } : {}),
      ...(capacity.length ? { capacity } : {}),
    });
  }
  if (scenarios.length === 0) {
    const what = [
      selection.scenario ? `scenario "${selection.scenario}"` : "any scenario",
      selection.stacks?.length ? `stacks ${selection.stacks.join(", ")}` : "any stack",
    ].join(" on ");
    throw new ConfigurationError(
      "E_NO_RESULTS",
      `no results for ${what} under ${resultsRoot}; run: ingestbench bench --stack <stack> scenarios/<scenario>.yaml`,
    );
  }
  return { resultsRoot, generatedAt: new Date().toISOString(), scenarios };
}
