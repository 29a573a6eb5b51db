/**
 * Write-up 003's table (docs/write-ups.md; docs/app-under-test.md): the variants of an application under test side by
 * side, from one invocation's runs of a scenario with `app` on one stack: per variant, throughput, mean latency,
 * p50 / p99, mean CPU per host, records, bytes, dropped and elapsed, each the median over the variant's eligible runs
 * (harness/results/eligibility.ts), and for every variant after the first its ratio to the first (the baseline,
 * e.g. `disabled`) with a percentile bootstrap interval (harness/stats/compare.ts compareSamples).
 *
 * Where each figure comes from: throughput, latency, bytes, dropped and elapsed from the app's own report (run.json
 * `app.figures`: harness/runner/app-host.ts); records from the sink's ledger (distinct seqs stored); CPU per host from
 * the observers (`app.cpuCores`, the measured window's mean). Whether the ledger agreed with the app's drops is kept
 * per variant (`ledgerAgrees`).
 */
import { ConfigurationError } from "../../core/errors.ts";
import {
  compareSamples,
  describeSample,
  type SampleComparison,
  type SampleDescription,
} from "../stats/compare.ts";
import type { TextTable } from "./columns.ts";
import { fix, int, pctLabel } from "./format.ts";
import { DEFAULT_CONFIDENCE } from "../stats/bootstrap.ts";
import { chooseInvocation, eligibleRuns, type ExcludedRun } from "./eligibility.ts";
import { loadRuns } from "./store.ts";
import type { RunRecord } from "./types.ts";

/** The figures of 003's table, in column order, each with how to read it from a run. */
export const VARIANT_FIGURES = [
  { key: "throughput", of: (r: RunRecord) => r.app?.figures.throughput },
  { key: "latencyMeanMs", of: (r: RunRecord) => r.app?.figures.latencyMeanMs },
  { key: "latencyP50Ms", of: (r: RunRecord) => r.app?.figures.latencyP50Ms },
  { key: "latencyP99Ms", of: (r: RunRecord) => r.app?.figures.latencyP99Ms },
  { key: "records", of: (r: RunRecord) => r.ledger?.distinct },
  { key: "bytes", of: (r: RunRecord) => r.app?.figures.sentBytes },
  { key: "dropped", of: (r: RunRecord) => r.app?.figures.dropped },
  {
    key: "elapsedS",
    of: (r: RunRecord) =>
      r.app?.figures.elapsedMs !== undefined ? r.app.figures.elapsedMs / 1000 : undefined,
  },
] as const;

/** One figure of one variant: its spread over the runs, and (contenders) the comparison with the baseline. */
export interface VariantFigure {
  values: SampleDescription;
  /** null for the baseline, or when either side has no value */
  vsBaseline: SampleComparison | null;
}

/** One variant's row. */
export interface VariantRow {
  /** the cell id, e.g. "variant=enabled" */
  cell: string;
  variant: string;
  baseline: boolean;
  runs: number;
  figures: Record<(typeof VARIANT_FIGURES)[number]["key"], VariantFigure>;
  /** mean CPU per host, cores, with the same statistics */
  cpu: Record<string, VariantFigure>;
  /** every run's ledger agreed with the app's report (stored = sent − dropped, lost = dropped) */
  ledgerAgrees: boolean;
}

/** 003's table for one invocation. */
export interface VariantsComparison {
  scenario: string;
  stack: string;
  invocation: string | null;
  baseline: string | null;
  rows: VariantRow[];
  machine: string | null;
  excluded: ExcludedRun[];
}

const finite = (xs: ReadonlyArray<number | undefined>): number[] =>
  xs.filter((x): x is number => typeof x === "number" && Number.isFinite(x));

/** A figure's spread and its comparison with the baseline's values (none for the baseline itself). */
function figure(values: number[], base: number[] | null): VariantFigure {
  return {
    values: describeSample(values),
    vsBaseline: base && base.length && values.length ? compareSamples(base, values) : null,
  };
}

/**
 * 003's table from runs (oldest first) of one scenario with `app`: the latest complete invocation with app runs
 * (eligibility.ts chooseInvocation), or the latest whose invocation (or a run id of which) starts with `invocation`.
 * Variants in the scenario's order (run.json scenarioConfig.variants), the first the baseline; a matrix prefix of the
 * cell id (`batch=10,variant=enabled`) is compared within its own matrix cell.
 */
export function variantsTable(
  runs: RunRecord[],
  scenario: string,
  stack: string,
  invocation?: string,
): VariantsComparison {
  const appRuns = runs.filter((r) => r.app !== undefined || /(^|,)variant=/.test(r.cell));
  // by default the latest complete invocation, the newer incomplete ones' runs listed as excluded (chooseInvocation)
  const named =
    invocation === undefined
      ? null
      : (appRuns.filter((r) => r.invocation.startsWith(invocation) || r.runId.startsWith(invocation)).at(-1)
          ?.invocation ?? null);
  const {
    invocation: inv,
    runs: chosen,
    passedOver,
  } = invocation === undefined
    ? chooseInvocation(appRuns)
    : { invocation: named, runs: appRuns.filter((r) => r.invocation === named), passedOver: [] };
  const eligible = eligibleRuns(chosen);
  const { used, machine } = eligible;
  const excluded = [...eligible.excluded, ...passedOver];
  const order = (
    (chosen.at(-1)?.scenarioConfig as { variants?: Array<{ name: string }> } | undefined)?.variants ?? []
  ).map((v) => v.name);
  const split = (cell: string): { prefix: string; variant: string } => {
    const m = /(?:^|,)variant=([^,]+)$/.exec(cell);
    return { prefix: m ? cell.slice(0, m.index) : cell, variant: m?.[1] ?? cell };
  };
  const cells = [...new Set(chosen.map((r) => r.cell))].sort((a, b) => {
    const x = split(a);
    const y = split(b);
    return (
      x.prefix.localeCompare(y.prefix) ||
      order.indexOf(x.variant) - order.indexOf(y.variant) ||
      x.variant.localeCompare(y.variant)
    );
  });
  const rows: VariantRow[] = [];
  let baseRuns: RunRecord[] = [];
  let basePrefix: string | null = null;
  for (const cell of cells) {
    const { prefix, variant } = split(cell);
    const mine = used.filter((r) => r.cell === cell);
    const isBase = prefix !== basePrefix;
    if (isBase) {
      baseRuns = mine;
      basePrefix = prefix;
    }
    const figures = Object.fromEntries(
      VARIANT_FIGURES.map((f) => {
        const base = isBase ? null : finite(baseRuns.map(f.of));
        return [f.key, figure(finite(mine.map(f.of)), base)];
      }),
    ) as VariantRow["figures"];
    const hosts = [...new Set(mine.flatMap((r) => Object.keys(r.app?.cpuCores ?? {})))].sort();
    const cpu = Object.fromEntries(
      hosts.map((h) => [
        h,
        figure(
          finite(mine.map((r) => r.app?.cpuCores[h])),
          isBase ? null : finite(baseRuns.map((r) => r.app?.cpuCores[h])),
        ),
      ]),
    );
    rows.push({
      cell,
      variant,
      baseline: isBase,
      runs: mine.length,
      figures,
      cpu,
      ledgerAgrees: mine.every((r) => r.app?.ledger?.agrees === true),
    });
  }
  return { scenario, stack, invocation: inv, baseline: rows[0]?.variant ?? null, rows, machine, excluded };
}

/**
 * 003's table from the results directory (see variantsTable).
 * @throws ConfigurationError E_NO_RESULTS when the stack has no run of the scenario with an application under test
 */
export async function compareVariants(
  resultsRoot: string,
  scenario: string,
  stack: string,
  invocation?: string,
): Promise<VariantsComparison> {
  const runs = await loadRuns(resultsRoot, stack, scenario);
  const c = variantsTable(runs, scenario, stack, invocation);
  if (c.invocation === null) {
    throw new ConfigurationError(
      "E_NO_RESULTS",
      `no runs of scenario ${scenario} with an application under test on stack ${stack} in ${resultsRoot} (run \`ingestbench bench --stack ${stack} <scenario with app>\` first)`,
      { field: "scenario" },
    );
  }
  return c;
}

/** Where each figure of 003's table comes from, in one line (under the table on every surface). */
export const VARIANT_SOURCES =
  "throughput, latency, bytes, dropped, elapsed: the app's own report; records: distinct rows the sink stored (ledger); CPU: the observers' mean cores per host over the measured window";

/**
 * "0.97x [0.95, 0.99] ~", "1.20x [1.10, 1.31] higher", "0.80x [0.7, 0.9] lower", "… inconclusive (n=2/2)", "1.02x n=1",
 * "–" without a comparison. The figures are not all rates (latency, CPU, bytes), so a significant change is "higher"
 * or "lower", never "faster" or "slower".
 */
function vsCell(c: SampleComparison | null): string {
  if (c === null || !Number.isFinite(c.ratio)) return "–";
  if (c.ci === null) return `${fix(c.ratio, 2, "x")} n=${Math.min(c.n.baseline, c.n.contender)}`;
  const mark = c.inconclusive
    ? `inconclusive (n=${c.n.baseline}/${c.n.contender})`
    : c.significant
      ? c.ratio > 1
        ? "higher"
        : "lower"
      : "~";
  return `${fix(c.ratio, 2, "x")} [${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}] ${mark}`;
}

/** The line above 003's table: scenario, stack, invocation, baseline and the interval's confidence. */
export function variantsHeading(c: VariantsComparison): string {
  const confidence =
    c.rows.flatMap((r) => Object.values(r.figures)).find((f) => f.vsBaseline?.ci)?.vsBaseline?.confidence ??
    DEFAULT_CONFIDENCE;
  return (
    `${c.scenario} on ${c.stack}: the application's variants (write-up 003), median over each variant's runs of invocation ${c.invocation ?? "–"}; ` +
    `ratio to ${c.baseline ?? "–"} with its ${pctLabel(confidence)} bootstrap interval`
  );
}

/**
 * 003's table as text, shared by the terminal (ui/comparison.ts) and the report (harness/report/): one row per
 * variant with the medians over its runs (variant | runs | throughput | mean | p50 / p99 | CPU per host | records |
 * bytes | dropped | elapsed | ledger), and under each variant after the first a row "vs <baseline>" with each
 * figure's ratio and bootstrap interval.
 */
export function variantsTextTable(c: VariantsComparison): TextTable {
  const hosts = [...new Set(c.rows.flatMap((r) => Object.keys(r.cpu)))].sort();
  const head = [
    "variant",
    "runs",
    "throughput tx/s",
    "mean ms",
    "p50 / p99 ms",
    ...hosts.map((h) => `CPU ${h}`),
    "records",
    "bytes",
    "dropped",
    "elapsed s",
    "ledger",
  ];
  const align = head.map((h) => (h === "variant" || h === "ledger" ? "l" : "r")) as Array<"l" | "r">;
  const med = (f: VariantFigure, d: number): string =>
    d === 0 ? int(f.values.median) : fix(f.values.median, d);
  const rows: string[][] = [];
  for (const r of c.rows) {
    const f = r.figures;
    rows.push([
      `${r.cell.replace(/^variant=/, "")}${r.baseline ? " (baseline)" : ""}`,
      String(r.runs),
      med(f.throughput, 1),
      med(f.latencyMeanMs, 2),
      `${med(f.latencyP50Ms, 2)} / ${med(f.latencyP99Ms, 2)}`,
      ...hosts.map((h) => (r.cpu[h] ? med(r.cpu[h], 2) : "–")),
      med(f.records, 0),
      med(f.bytes, 0),
      med(f.dropped, 0),
      med(f.elapsedS, 2),
      r.runs === 0 ? "–" : r.ledgerAgrees ? "= sent − dropped" : "!! disagrees",
    ]);
    if (!r.baseline) {
      rows.push([
        `  vs ${c.baseline}`,
        "",
        vsCell(f.throughput.vsBaseline),
        vsCell(f.latencyMeanMs.vsBaseline),
        `${vsCell(f.latencyP50Ms.vsBaseline)} / ${vsCell(f.latencyP99Ms.vsBaseline)}`,
        ...hosts.map((h) => vsCell(r.cpu[h]?.vsBaseline ?? null)),
        vsCell(f.records.vsBaseline),
        vsCell(f.bytes.vsBaseline),
        vsCell(f.dropped.vsBaseline),
        vsCell(f.elapsedS.vsBaseline),
        "",
      ]);
    }
  }
  return { head, align, rows };
}
