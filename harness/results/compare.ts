/**
 * The `ingestbench compare` command, and the one place the comparison API can be imported from as a whole. The
 * parts live by concern:
 * - harness/results/across-stacks.ts: `compareStacks`, hardware sizes against the first stack;
 * - harness/results/across-runs.ts: `compareRuns`, selections of runs on one stack against a baseline;
 * - harness/results/across-scenarios.ts: `compareScenarios`, runs of different scenarios (on one stack or several);
 * - harness/results/across-variants.ts: `compareVariants`, write-up 003's table of an application's variants;
 * - harness/results/noise-floor.ts: the A/A noise-floor store (results/<stack>/<scenario>.aa/noise-floor.json);
 * - harness/results/caps.ts: the sink's caps and rows/s per vCPU and per GiB;
 * - harness/results/eligibility.ts: which runs a comparison uses (ok, caps enforced, one machine) and why others not;
 * - harness/results/fingerprint.ts: environment fingerprints, their differences, the version-mismatch refusal;
 * - harness/results/columns.ts: the columns of the comparison across stacks, shared by terminal and report;
 * - harness/results/format.ts, ui/comparison.ts, ui/capacity.ts, ui/query-table.ts: cell formatting and terminal
 *   rendering.
 */
import { ConfigurationError } from "../../core/errors.ts";
import { compareRuns } from "./across-runs.ts";
import { compareScenarios, pairSides, type ScenarioMetric } from "./across-scenarios.ts";
import { compareStacks, latestInvocationRuns, stackComparisonJson } from "./across-stacks.ts";
import { renderQueryTables } from "../../ui/query-table.ts";
import { loadRuns, noResultsError } from "./store.ts";
import type { ComparisonOptions } from "./options.ts";
import {
  renderComparison,
  renderRunsComparison,
  renderScenariosComparison,
  renderVariantsComparison,
} from "../../ui/comparison.ts";
import { compareVariants } from "./across-variants.ts";
import { CAPACITY_SUFFIX, loadCapacity } from "./capacity.ts";
import { renderCapacity, renderCapacityComparison } from "../../ui/capacity.ts";

export type { CellComparison, CellSide, RunGroup, RunsComparison, RunsSelection } from "./across-runs.ts";
export { compareRuns } from "./across-runs.ts";
export type {
  ScenarioItem,
  ScenarioItemSide,
  ScenarioMetric,
  ScenarioSide,
  ScenarioSideSpec,
  ScenariosComparison,
} from "./across-scenarios.ts";
export { compareScenarios, pairSides, scenarioNameOf } from "./across-scenarios.ts";
export type { StackRow } from "./across-stacks.ts";
export { compareStacks, stackComparisonJson } from "./across-stacks.ts";
export type { SinkCaps } from "./caps.ts";
export { sinkCaps } from "./caps.ts";
export type { Eligible, ExcludedRun, ExclusionKind } from "./eligibility.ts";
export { capsProblem, eligibleRuns, environmentKey, machineKey, statusProblem } from "./eligibility.ts";
export type { Fingerprint, FingerprintDifference } from "./fingerprint.ts";
export { diffFingerprints, groupFingerprint, runFingerprint } from "./fingerprint.ts";
export { verdictWord } from "./format.ts";
export type { NoiseFloorCell, NoiseFloorFile } from "./noise-floor.ts";
export { AA_SUFFIX, loadNoiseFloors, noiseFloorPath, writeNoiseFloors } from "./noise-floor.ts";
export type { ComparisonOptions } from "./options.ts";
export {
  renderComparison,
  renderRunsComparison,
  renderScenariosComparison,
  renderVariantsComparison,
} from "../../ui/comparison.ts";
export type { VariantFigure, VariantRow, VariantsComparison } from "./across-variants.ts";
export { compareVariants, variantsTable } from "./across-variants.ts";

export interface CompareCommandFlags {
  /** one scenario (across stacks or across runs); exactly one of scenario and scenarios */
  scenario?: string;
  /** comma-separated scenario names or files (across scenarios); the first is the baseline */
  scenarios?: string;
  /** across scenarios: "rows" (ingest rows/s, default) or "queries" (the query phase's requests/s per query cell) */
  metric?: string;
  /** across scenarios: the cell a sweep side is compared by (default: its best, when no cell id is shared) */
  cell?: string;
  /** comma-separated stack names: the first is the baseline; exactly one in across-runs mode */
  stacks: string;
  baseline?: string;
  /** contender selectors (each may be comma-separated) */
  contender?: string[];
  force?: boolean;
  json?: boolean;
  /** across stacks, in the terminal: every column (harness/results/columns.ts), not the default dozen */
  wide?: boolean;
  /** across stacks, in the terminal: the columns named (comma-separated keys or headers) */
  columns?: string;
  /** across stacks, in the terminal: the width the default table fits (harness/results/columns.ts terminalWidth); absent: no fitting */
  width?: number;
  /** write-up 003's table: the variants of an application under test, on one stack (with --scenario) */
  variants?: boolean;
}

/**
 * The `ingestbench compare` command: across stacks (`--stacks a,b`), with `--baseline` (and `--contender`) across
 * runs on one stack, or with `--scenarios a,b` across scenarios (one stack for all, or one per scenario). Returns the text to print (a table, or JSON with `--json`).
 * @throws ConfigurationError E_FLAG for inconsistent flags, and whatever compareStacks / compareRuns throw
 */
export async function compareCommand(resultsRoot: string, flags: CompareCommandFlags): Promise<string> {
  const stacks = flags.stacks
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const contenders = (flags.contender ?? [])
    .flatMap((c) => c.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
  const options: ComparisonOptions = { force: Boolean(flags.force) };
  if (flags.scenarios !== undefined) {
    if (flags.scenario !== undefined)
      throw new ConfigurationError(
        "E_FLAG",
        "give --scenario (one scenario) or --scenarios (several), not both",
        { field: "scenarios" },
      );
    if (flags.baseline !== undefined || contenders.length > 0)
      throw new ConfigurationError(
        "E_FLAG",
        "--baseline/--contender select runs of one scenario; with --scenarios each side's latest complete invocation is compared",
        { field: "baseline" },
      );
    const metric = flags.metric ?? "rows";
    if (metric !== "rows" && metric !== "queries")
      throw new ConfigurationError("E_FLAG", `--metric is rows or queries, got "${metric}"`, {
        field: "metric",
      });
    const result = await compareScenarios(resultsRoot, pairSides(flags.scenarios.split(","), stacks), {
      ...options,
      metric: metric as ScenarioMetric,
      ...(flags.cell !== undefined ? { cell: flags.cell } : {}),
    });
    return flags.json ? JSON.stringify(result, null, 2) : renderScenariosComparison(result);
  }
  if (flags.scenario === undefined)
    throw new ConfigurationError(
      "E_FLAG",
      "compare needs --scenario NAME (across stacks or runs) or --scenarios A,B (across scenarios)",
      { field: "scenario" },
    );
  // a capacity search's steps run at different rates: they are a curve, not replicates (./capacity.ts)
  const searched = flags.scenario.endsWith(CAPACITY_SUFFIX)
    ? flags.scenario.slice(0, -CAPACITY_SUFFIX.length)
    : null;
  if (searched !== null) {
    const rows = stacks.map((stack) => ({ stack, file: loadCapacity(resultsRoot, stack, searched) }));
    if (rows.every((r) => r.file === null)) {
      throw new ConfigurationError(
        "E_NO_RESULTS",
        `no capacity search of scenario "${searched}" on ${stacks.join(", ")} under ${resultsRoot}; run: ingestbench capacity --stack ${stacks[0]} scenarios/${searched}.yaml`,
        { field: "scenario" },
      );
    }
    if (flags.json) return JSON.stringify(rows, null, 2);
    return rows.length === 1 ? renderCapacity(rows[0]!.file!) : renderCapacityComparison(searched, rows);
  }
  if (flags.variants) {
    if (stacks.length !== 1)
      throw new ConfigurationError(
        "E_FLAG",
        `--variants compares an application's variants on one stack: give exactly one --stack, got ${stacks.length}`,
        { field: "stacks" },
      );
    // --baseline selects the invocation (default: the latest with app runs)
    const result = await compareVariants(resultsRoot, flags.scenario, stacks[0]!, flags.baseline);
    return flags.json ? JSON.stringify(result, null, 2) : renderVariantsComparison(result);
  }
  if (flags.metric !== undefined && flags.metric !== "rows") {
    // the query phase of one scenario across stacks: the same comparison as across scenarios, one side per stack
    if (flags.metric !== "queries")
      throw new ConfigurationError("E_FLAG", `--metric is rows or queries, got "${flags.metric}"`, {
        field: "metric",
      });
    if (flags.baseline !== undefined || contenders.length > 0) {
      throw new ConfigurationError(
        "E_FLAG",
        "--metric queries compares the latest runs of several stacks (--stacks A,B) or scenarios (--scenarios A,B), or prints one stack's query table (--stack S); not --baseline/--contender",
        { field: "metric" },
      );
    }
    if (stacks.length === 1)
      return queryTablesOf(resultsRoot, flags.scenario, stacks[0]!, Boolean(flags.json));
    const result = await compareScenarios(
      resultsRoot,
      pairSides(
        stacks.map(() => flags.scenario!),
        stacks,
      ),
      { ...options, metric: "queries" },
    );
    return flags.json ? JSON.stringify(result, null, 2) : renderScenariosComparison(result);
  }
  if (flags.baseline !== undefined || contenders.length > 0) {
    if (flags.baseline === undefined)
      throw new ConfigurationError("E_FLAG", "--contender needs --baseline <invocation-or-run-id-prefix>", {
        field: "baseline",
      });
    if (stacks.length !== 1)
      throw new ConfigurationError(
        "E_FLAG",
        `--baseline/--contender compare runs on one stack: give exactly one name in --stacks, got ${stacks.length}`,
        { field: "stacks" },
      );
    const result = await compareRuns(
      resultsRoot,
      flags.scenario,
      stacks[0]!,
      { baseline: flags.baseline, contenders },
      options,
    );
    return flags.json ? JSON.stringify(result, null, 2) : renderRunsComparison(result);
  }
  const rows = await compareStacks(resultsRoot, flags.scenario, stacks, options);
  return flags.json
    ? JSON.stringify(stackComparisonJson(flags.scenario, rows), null, 2)
    : renderComparison(flags.scenario, rows, {
        wide: flags.wide,
        columns: flags.columns?.split(","),
        ...(flags.width === undefined ? {} : { width: flags.width }),
      });
}

/**
 * One stack's query table (ui/query-table.ts) over the latest invocation of a scenario: write-up 001's
 * queries/s per table size and cell, and the ingest with and without queries in mixed mode; JSON: the runs' `query`.
 * @throws ConfigurationError E_NO_RESULTS without runs; E_NO_QUERY_PHASE when the latest invocation ran no query phase
 */
async function queryTablesOf(
  resultsRoot: string,
  scenario: string,
  stack: string,
  json: boolean,
): Promise<string> {
  const all = await loadRuns(resultsRoot, stack, scenario);
  if (all.length === 0) throw await noResultsError(resultsRoot, stack, scenario);
  const runs = latestInvocationRuns(all);
  const text = renderQueryTables(`${scenario} on ${stack}, invocation ${runs[0]!.invocation}`, runs);
  if (text === null)
    throw new ConfigurationError(
      "E_NO_QUERY_PHASE",
      `${scenario} on ${stack}: the latest invocation's ${runs.length} runs have no query phase (run.json \`query\`; the scenario declares none): use --metric rows`,
      { field: "metric" },
    );
  if (json)
    return JSON.stringify(
      runs.map((r) => ({
        runId: r.runId,
        cell: r.cell,
        status: r.status,
        rowsPerSecond: r.summary?.rowsPerSecond ?? null,
        deliveryLatency: r.summary?.deliveryLatency ?? null,
        query: r.query,
      })),
      null,
      2,
    );
  return text;
}
