/**
 * The comparison across scenarios, `compareScenarios`: runs of different scenarios, on one stack or each on its own
 * (e.g. write-up 004's Elasticsearch against PostgreSQL, scenarios/elasticsearch-bulk-8000.yaml beside
 * scenarios/elasticsearch-bulk-8000-postgres.yaml; write-up 000's one collector against two, docs/write-ups.md). Each
 * side is a (scenario, stack) pair; its runs are those of its latest complete invocation (eligibility.ts
 * chooseInvocation; the runs of newer incomplete invocations are listed as excluded). The first side is the baseline.
 *
 * What is compared, per matched cell (the same cell id on both sides; two single-cell sides are matched whatever
 * their ids):
 * - metric "rows": rows/s of each run (Summary.rowsPerSecond);
 * - metric "queries": requests/s of each query cell of each run (run.json `query`, harness/runner/query-load.ts),
 *   matched by query cell id ("count@10x50").
 * The ratio contender / baseline of the medians, with its percentile bootstrap interval and verdict, is
 * harness/stats/compare.ts compareSamples (fewer than 3 measured runs on a side is "inconclusive (n=…)"). No A/A
 * noise floor applies: the sides differ on purpose.
 *
 * Only eligible runs count (harness/results/eligibility.ts): status ok, caps enforced, and one machine for all sides
 * (the machine key is taken over the union of the sides' runs, so a side measured on another machine is left out,
 * not compared). Component versions are fingerprinted (fingerprint.ts): a component that both sides run at different
 * versions is refused unless forced; one that only one side runs (Elasticsearch against PostgreSQL) is the point of
 * the comparison and only listed. On one stack the applied limits are part of the fingerprint too.
 */
import { ConfigurationError } from "../../core/errors.ts";
import {
  compareSamples,
  describeSample,
  type SampleComparison,
  type SampleDescription,
} from "../stats/compare.ts";
import { cellSort, ledgerTotals, type LedgerTotals } from "./caps.ts";
import { chooseInvocation, eligibleRuns, type ExcludedRun } from "./eligibility.ts";
import {
  diffFingerprints,
  groupFingerprint,
  refuseVersionMismatch,
  type Fingerprint,
  type FingerprintDifference,
} from "./fingerprint.ts";
import type { ComparisonOptions } from "./options.ts";
import { loadRuns, noResultsError } from "./store.ts";
import type { RunRecord } from "./types.ts";

/** One side of the comparison: a scenario's runs on a stack. */
export interface ScenarioSideSpec {
  scenario: string;
  stack: string;
}

/** What a comparison across scenarios measures: ingest rows/s, or the query phase's requests/s per query cell. */
export type ScenarioMetric = "rows" | "queries";

/** A side as compared: where its runs came from, which were used, and why the others were not. */
export interface ScenarioSide extends ScenarioSideSpec {
  /** "scenario@stack" */
  label: string;
  invocation: string | null;
  runIds: string[];
  statuses: Record<string, number>;
  fingerprint: Fingerprint;
  excluded: ExcludedRun[];
}

/** One side's figures for one compared item (a cell, or a cell's query cell). */
export interface ScenarioItemSide {
  label: string;
  /** the side's cell id */
  cell: string;
  runs: number;
  /** eligible runs with a value */
  measured: number;
  /** rows/s (metric rows) or requests/s (metric queries) of the measured runs */
  values: SampleDescription;
  /** ledger totals over the side's runs of the cell (all of them, as across runs) */
  ledger: LedgerTotals;
  /** metric queries: errors over the measured runs (a wrong answer is an error) */
  queryErrors?: number;
}

/** One compared item: the baseline's figures and each contender's with the ratio to the baseline. */
export interface ScenarioItem {
  /** the baseline's cell id, with the query cell id after " / " for metric queries */
  item: string;
  baseline: ScenarioItemSide;
  contenders: Array<ScenarioItemSide & { comparison: SampleComparison | null; reason: string | null }>;
}

/** The result of `compareScenarios` (what `ingestbench compare --scenarios … --json` prints). */
export interface ScenariosComparison {
  mode: "scenarios";
  metric: ScenarioMetric;
  sides: ScenarioSide[];
  /** the machine key every used run shares (eligibility.ts machineKey), null when none was eligible */
  machine: string | null;
  items: ScenarioItem[];
  /** cells (or query cells) of a side that no other side has, with the side's label */
  unmatched: Array<{ label: string; item: string }>;
  /**
   * a sweep held against one-cell sides (no cell id in common): the cell each sweep side was compared by, its best
   * (the highest median of the metric over its measured runs) or the one `cell` named
   */
  chosenCells?: Array<{ label: string; cell: string; why: "best" | "named" }>;
  /** environment, version (of components both sides run), limits and workload differences between the sides */
  differences: FingerprintDifference[];
  /** components only some sides run (their version fields, "–" where absent): what the comparison is about */
  components: FingerprintDifference[];
  /** true when component versions differ on a component both sides run and `force` let it through */
  forced: boolean;
  excluded: ExcludedRun[];
  /** metric queries: the labels of sides none of whose runs has a query phase (run.json `query`) */
  withoutQueryPhase?: string[];
}

/** "quickstart", "scenarios/quickstart.yaml" or "quickstart.yml" → "quickstart" (results are stored by scenario name). */
export function scenarioNameOf(arg: string): string {
  const base = arg.trim().split(/[\\/]/).pop() ?? "";
  return base.replace(/\.ya?ml$/i, "");
}

/**
 * Pair scenarios with stacks as the command line gives them: one stack for every scenario, or one stack per scenario
 * in order.
 * @throws ConfigurationError E_FLAG with fewer than 2 scenarios, a stack count that is neither 1 nor the scenario
 *         count, or the same (scenario, stack) twice
 */
export function pairSides(scenarios: string[], stacks: string[]): ScenarioSideSpec[] {
  const names = scenarios.map(scenarioNameOf).filter(Boolean);
  if (names.length < 2)
    throw new ConfigurationError(
      "E_FLAG",
      `--scenarios needs at least two scenarios (comma-separated), got ${names.length}`,
      { field: "scenarios" },
    );
  if (stacks.length !== 1 && stacks.length !== names.length) {
    throw new ConfigurationError(
      "E_FLAG",
      `--scenarios with ${names.length} scenarios takes one stack (--stack S) or one per scenario in order (--stacks A,B), got ${stacks.length}`,
      { field: "stacks" },
    );
  }
  const sides = names.map((scenario, i) => ({
    scenario,
    stack: stacks.length === 1 ? stacks[0]! : stacks[i]!,
  }));
  const seen = new Set<string>();
  for (const s of sides) {
    const key = `${s.scenario}@${s.stack}`;
    if (seen.has(key))
      throw new ConfigurationError(
        "E_FLAG",
        `${key} is given twice: to compare runs of one scenario on one stack use --scenario ${s.scenario} --stack ${s.stack} --baseline …`,
        { field: "scenarios" },
      );
    seen.add(key);
  }
  return sides;
}

/** A run's values for the metric, by item key within its cell ("" for rows/s). */
function runValues(run: RunRecord, metric: ScenarioMetric): Map<string, { value: number; errors: number }> {
  const out = new Map<string, { value: number; errors: number }>();
  if (metric === "rows") {
    const v = run.summary?.rowsPerSecond;
    if (typeof v === "number" && Number.isFinite(v)) out.set("", { value: v, errors: 0 });
  } else {
    for (const c of run.query?.cells ?? [])
      if (Number.isFinite(c.requestsPerSecond))
        out.set(c.id, { value: c.requestsPerSecond, errors: c.errors });
  }
  return out;
}

/**
 * Version differences on components every side runs: those are refused unless forced. A component that only some
 * sides run ("–" on the others) is what the comparison is about and stays a listed difference.
 */
function sharedVersionDifferences(differences: FingerprintDifference[]): FingerprintDifference[] {
  return differences.filter((d) => d.kind === "version" && Object.values(d.values).every((v) => v !== "–"));
}

/**
 * Compare the latest complete invocations of several (scenario, stack) sides, the first as baseline: per matched
 * cell (and query cell for metric "queries"), median rows/s or requests/s, spread, ratio to the baseline with its
 * bootstrap interval (compareSamples: default 90 %, seed 1, deterministic). See the module comment for matching,
 * eligibility and fingerprints.
 * @throws ConfigurationError E_NO_RESULTS when a side has no runs; E_VERSION_MISMATCH when a component both sides run
 *         differs in version and `force` is not set
 */
export async function compareScenarios(
  resultsRoot: string,
  specs: ScenarioSideSpec[],
  options: ComparisonOptions & { metric?: ScenarioMetric; cell?: string } = {},
): Promise<ScenariosComparison> {
  const metric = options.metric ?? "rows";
  const loaded: Array<ScenarioSideSpec & { label: string; runs: RunRecord[]; passedOver: ExcludedRun[] }> =
    [];
  for (const s of specs) {
    const all = await loadRuns(resultsRoot, s.stack, s.scenario);
    if (all.length === 0) {
      throw await noResultsError(resultsRoot, s.stack, s.scenario);
    }
    const chosen = chooseInvocation(all);
    loaded.push({
      ...s,
      label: `${s.scenario}@${s.stack}`,
      runs: chosen.runs,
      passedOver: chosen.passedOver,
    });
  }
  // one machine for every side: the reference key is the majority over the union of the sides' runs
  const eligible = eligibleRuns(loaded.flatMap((s) => s.runs));
  const used = new Set(eligible.used.map((r) => r.runId));
  const oneStack = new Set(specs.map((s) => s.stack)).size === 1;
  const sides: ScenarioSide[] = loaded.map((s) => {
    const statuses: Record<string, number> = {};
    for (const r of s.runs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const ids = new Set(s.runs.map((r) => r.runId));
    return {
      scenario: s.scenario,
      stack: s.stack,
      label: s.label,
      invocation: s.runs[0]?.invocation ?? null,
      runIds: s.runs.map((r) => r.runId),
      statuses,
      fingerprint: groupFingerprint(s.runs, { limits: oneStack }),
      excluded: [...eligible.excluded.filter((x) => ids.has(x.runId)), ...s.passedOver],
    };
  });
  const all = diffFingerprints(sides.map((s) => ({ label: s.label, fingerprint: s.fingerprint })));
  const refused = sharedVersionDifferences(all);
  const components = all.filter((d) => d.kind === "version" && !refused.includes(d));
  const differences = all.filter((d) => !components.includes(d));
  refuseVersionMismatch(refused, options.force, `scenarios ${sides.map((s) => s.label).join(" vs ")}`);

  // items per side: cell id → item key → the runs' values
  const itemsOf = (runs: RunRecord[]): Map<string, Map<string, RunRecord[]>> => {
    const cells = new Map<string, Map<string, RunRecord[]>>();
    for (const r of runs) {
      const byItem = cells.get(r.cell) ?? new Map<string, RunRecord[]>();
      cells.set(r.cell, byItem);
      const keys = metric === "rows" ? [""] : [...runValues(r, metric).keys()];
      for (const k of keys) byItem.set(k, [...(byItem.get(k) ?? []), r]);
    }
    return cells;
  };
  const perSide = loaded.map((s) => itemsOf(s.runs));
  const chosenCells = sweepAgainstSingles(perSide, loaded, used, metric, options.cell);
  const single = chosenCells !== undefined || perSide.every((m) => m.size === 1);
  const cellFor = (sideIndex: number, baseCell: string): string | undefined =>
    single ? [...perSide[sideIndex]!.keys()][0] : perSide[sideIndex]!.has(baseCell) ? baseCell : undefined;

  const itemName = (cell: string, key: string): string => (key === "" ? cell : `${cell} / ${key}`);
  const sideOf = (i: number, cell: string, key: string): ScenarioItemSide => {
    const runs = perSide[i]!.get(cell)?.get(key) ?? [];
    const measured = runs.filter((r) => used.has(r.runId));
    const vals = measured.map((r) => runValues(r, metric).get(key)).filter((v) => v !== undefined);
    const side: ScenarioItemSide = {
      label: loaded[i]!.label,
      cell,
      runs: runs.length,
      measured: vals.length,
      values: describeSample(
        vals.map((v) => v.value),
        { erraticCv: options.erraticCv },
      ),
      ledger: ledgerTotals(runs),
    };
    if (metric === "queries") side.queryErrors = vals.reduce((n, v) => n + v.errors, 0);
    return side;
  };

  const items: ScenarioItem[] = [];
  const matched = perSide.map(() => new Set<string>());
  for (const baseCell of [...perSide[0]!.keys()].sort(cellSort)) {
    const contenderCells = loaded.slice(1).map((_, j) => cellFor(j + 1, baseCell));
    if (contenderCells.every((c) => c === undefined)) continue;
    for (const key of [...perSide[0]!.get(baseCell)!.keys()].sort(cellSort)) {
      const baseline = sideOf(0, baseCell, key);
      const contenders: ScenarioItem["contenders"] = [];
      contenderCells.forEach((cell, j) => {
        if (cell === undefined || !perSide[j + 1]!.get(cell)!.has(key)) return;
        matched[j + 1]!.add(itemName(cell, key));
        const side = sideOf(j + 1, cell, key);
        if (baseline.measured === 0 || side.measured === 0) {
          const missing = baseline.measured === 0 ? `the baseline ${baseline.label}` : side.label;
          contenders.push({
            ...side,
            comparison: null,
            reason: `no measured run of ${itemName(cell, key)} in ${missing} (left-out runs are listed as excluded)`,
          });
          return;
        }
        const base = measuredValues(perSide[0]!.get(baseCell)!.get(key)!, used, metric, key);
        const cont = measuredValues(perSide[j + 1]!.get(cell)!.get(key)!, used, metric, key);
        const comparison = compareSamples(base, cont, { ...options, noiseFloor: null });
        contenders.push({ ...side, comparison, reason: comparison.reason });
      });
      if (contenders.length === 0) continue;
      matched[0]!.add(itemName(baseCell, key));
      items.push({ item: itemName(baseCell, key), baseline, contenders });
    }
  }
  const unmatched: ScenariosComparison["unmatched"] = [];
  perSide.forEach((m, i) => {
    for (const [cell, byItem] of m)
      for (const key of byItem.keys())
        if (!matched[i]!.has(itemName(cell, key)))
          unmatched.push({ label: loaded[i]!.label, item: itemName(cell, key) });
  });
  const result: ScenariosComparison = {
    mode: "scenarios",
    metric,
    sides,
    machine: eligible.machine,
    items,
    unmatched,
    differences,
    components,
    forced: refused.length > 0,
    excluded: [...eligible.excluded, ...loaded.flatMap((s) => s.passedOver)],
    ...(chosenCells ? { chosenCells } : {}),
  };
  if (metric === "queries")
    result.withoutQueryPhase = loaded.filter((s) => !s.runs.some((r) => r.query)).map((s) => s.label);
  return result;
}

/**
 * When the sides share no cell id and some of them sweep several cells (write-up 000's chunk_limit_records sweep
 * against its one-cell two-collector scenario): each sweep side is narrowed, in place, to one cell — `named` when it
 * has that cell, else its best, the highest median of the metric over its measured runs — and the chosen cells are
 * returned; undefined when cells match by id (or every side has one cell), as before.
 * @throws ConfigurationError E_FLAG when `named` is given and no sweep side has that cell
 */
function sweepAgainstSingles(
  perSide: Array<Map<string, Map<string, RunRecord[]>>>,
  loaded: ReadonlyArray<{ label: string }>,
  used: ReadonlySet<string>,
  metric: ScenarioMetric,
  named: string | undefined,
): ScenariosComparison["chosenCells"] {
  // rows/s only: a query phase's cells are compared by their own ids (a best cell of queries means nothing)
  const sweeps = perSide.map((m, i) => ({ m, i })).filter(({ m }) => m.size > 1);
  if (sweeps.length === 0 || metric !== "rows") return undefined;
  const ids = perSide.map((m) => new Set(m.keys()));
  const shared = [...ids[0]!].some((c) => ids.slice(1).some((s) => s.has(c)));
  if (shared && named === undefined) return undefined;
  if (named !== undefined && !sweeps.some(({ m }) => m.has(named))) {
    throw new ConfigurationError(
      "E_FLAG",
      `--cell ${named}: no swept side has that cell; its cells: ${sweeps.map(({ m, i }) => `${loaded[i]!.label}: ${[...m.keys()].join(" | ")}`).join("; ")}`,
      { field: "cell" },
    );
  }
  const chosen: NonNullable<ScenariosComparison["chosenCells"]> = [];
  for (const { m, i } of sweeps) {
    let pick: string;
    let why: "best" | "named";
    if (named !== undefined && m.has(named)) {
      pick = named;
      why = "named";
    } else {
      const medianOf = (cell: string): number => {
        const vals = [...m.get(cell)!.values()]
          .flat()
          .filter((r) => used.has(r.runId))
          .flatMap((r) => [...runValues(r, metric).values()].map((v) => v.value))
          .sort((a, b) => a - b);
        return vals.length === 0 ? -Infinity : vals[Math.floor((vals.length - 1) / 2)]!;
      };
      pick = [...m.keys()].sort(cellSort).reduce((a, b) => (medianOf(b) > medianOf(a) ? b : a));
      why = "best";
    }
    for (const cell of [...m.keys()]) if (cell !== pick) m.delete(cell);
    chosen.push({ label: loaded[i]!.label, cell: pick, why });
  }
  return chosen;
}

/** The metric's values of the eligible runs among `runs`. */
function measuredValues(
  runs: RunRecord[],
  used: ReadonlySet<string>,
  metric: ScenarioMetric,
  key: string,
): number[] {
  return runs
    .filter((r) => used.has(r.runId))
    .map((r) => runValues(r, metric).get(key)?.value)
    .filter((v): v is number => v !== undefined);
}
