/**
 * Scenario checks: `{ "ledger.lost": 0 }` (exact), `{ "summary.rowsPerSecond": { min: 10000 } }`, `{ ...: { max: n } }`.
 * A run fails when a check fails; its result is still written. Stored > sent is always a failure, and so is stored
 * content that differs from what was sent (`ledger.altered` > 0, core/fidelity.ts), and an application's record bytes
 * other than the sink's records' (`app.ledger.bytes.unaccounted` ≠ 0, ./app-bytes.ts), whether a scenario lists the
 * check or not.
 */
import { APP_FIGURES } from "../scenario/app-schema.ts";
import type { CheckResult } from "../results/types.ts";
import type { Check } from "../scenario/schema.ts";

/** Numeric fields of a run result that a check may name (run.json's ledger, summary and generator latency). */
export const CHECKABLE_PATHS: ReadonlySet<string> = new Set([
  ...[
    "sent",
    "accepted",
    "stored",
    "distinct",
    "lost",
    "duplicated",
    "overwritten",
    "rejected",
    "unexpected",
    "altered",
  ].map((k) => `ledger.${k}`),
  ...[
    "rowsPerSecond",
    "mibPerSecond",
    "logMibPerSecond",
    "windowRowsPerSecond.median",
    "windowRowsPerSecond.min",
    "windowRowsPerSecond.max",
    "bytesPerRow",
    "logBytesPerRow",
    "measuredSeconds",
    "sinkCores",
    "cpuMsPer1000Rows",
    "throttledShare",
    "sinkNetworkMbitPerSecond",
    "sinkDiskWriteMiBPerSecond",
    "sinkDiskWriteIops",
    "sinkMemoryPeakBytes",
    "sinkMemoryWorkingSetBytes",
    "lagP50Ms",
    "lagP99Ms",
    "lagMaxMs",
    "countQueryMaxMs",
    "drainSeconds",
    "bottleneck.score",
  ].map((k) => `summary.${k}`),
  ...["mean", "p50", "p99", "max"].map((k) => `generator.latencyMs.${k}`),
  // the query phase summed over its cells (harness/runner/query-load.ts queryTotals)
  ...["requests", "ok", "errors"].map((k) => `query.${k}`),
  // the application under test (harness/runner/app-host.ts): its own figures and the ledger against them
  ...APP_FIGURES.map((k) => `app.figures.${k}`),
  ...["sent", "dropped", "expected", "stored", "lost", "unaccounted"].map((k) => `app.ledger.${k}`),
  ...["reported", "atSink", "records", "unaccounted"].map((k) => `app.ledger.bytes.${k}`),
]);

function resolve(root: unknown, dotted: string): unknown {
  let cur: unknown = root;
  for (const key of dotted.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Evaluate checks against `{ ledger, summary, generator, query, app }`. A path that resolves to no number fails the check. */
export function evaluateChecks(
  checks: Check[],
  result: { ledger: unknown; summary: unknown; generator?: unknown; query?: unknown; app?: unknown },
): CheckResult[] {
  const out: CheckResult[] = [];
  for (const check of checks) {
    const value = resolve(result, check.path);
    const actual = typeof value === "number" && Number.isFinite(value) ? value : null;
    const expected = [
      check.equals !== undefined ? `= ${check.equals}` : "",
      check.min !== undefined ? `>= ${check.min}` : "",
      check.max !== undefined ? `<= ${check.max}` : "",
    ]
      .filter(Boolean)
      .join(" and ");
    const ok =
      actual !== null &&
      (check.equals === undefined || actual === check.equals) &&
      (check.min === undefined || actual >= check.min) &&
      (check.max === undefined || actual <= check.max);
    out.push({ check: check.path, expected, actual, ok });
  }
  const unexpected = resolve(result, "ledger.unexpected");
  if (typeof unexpected === "number" && unexpected > 0) {
    out.push({
      check: "ledger.unexpected",
      expected: "= 0 (stored > sent is a failure, not extra delivery)",
      actual: unexpected,
      ok: false,
    });
  }
  const altered = resolve(result, "ledger.altered");
  if (typeof altered === "number" && altered > 0 && !out.some((c) => c.check === "ledger.altered")) {
    out.push({
      check: "ledger.altered",
      expected: "= 0 (stored rows must hold what was sent: see ledger.fidelity.examples)",
      actual: altered,
      ok: false,
    });
  }
  // the app's record bytes against the records the sink holds (harness/runner/app-bytes.ts): a mismatch always fails
  const bytes = resolve(result, "app.ledger.bytes.unaccounted");
  if (
    typeof bytes === "number" &&
    bytes !== 0 &&
    !out.some((c) => c.check === "app.ledger.bytes.unaccounted")
  ) {
    out.push({
      check: "app.ledger.bytes.unaccounted",
      expected: "= 0 (the app's recordBytes must equal the encodings of the records the sink holds)",
      actual: bytes,
      ok: false,
    });
  }
  return out;
}
