/**
 * Scenario checks: `{ "ledger.lost": 0 }` (exact), `{ "summary.rowsPerSecond": { min: 10000 } }`, `{ ...: { max: n } }`.
 * A run fails when a check fails; its result is still written. Stored > sent is always a failure.
 */
import type { CheckResult } from "../results/types.ts";

export type CheckSpec = Record<string, number | { min?: number; max?: number }>;

function resolve(root: unknown, dotted: string): unknown {
  let cur: unknown = root;
  for (const key of dotted.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Evaluate checks against `{ ledger, summary }`. A path that resolves to no number fails the check. */
export function evaluateChecks(checks: CheckSpec[], result: { ledger: unknown; summary: unknown }): CheckResult[] {
  const out: CheckResult[] = [];
  for (const spec of checks) {
    for (const [pathKey, want] of Object.entries(spec)) {
      const value = resolve(result, pathKey);
      const actual = typeof value === "number" && Number.isFinite(value) ? value : null;
      let ok: boolean;
      let expected: string;
      if (typeof want === "number") {
        expected = `= ${want}`;
        ok = actual === want;
      } else {
        expected = [want.min !== undefined ? `>= ${want.min}` : "", want.max !== undefined ? `<= ${want.max}` : ""].filter(Boolean).join(" and ");
        ok = actual !== null && (want.min === undefined || actual >= want.min) && (want.max === undefined || actual <= want.max);
      }
      out.push({ check: pathKey, expected, actual, ok });
    }
  }
  const unexpected = resolve(result, "ledger.unexpected");
  if (typeof unexpected === "number" && unexpected > 0) {
    out.push({ check: "ledger.unexpected", expected: "= 0 (stored > sent is a failure, not extra delivery)", actual: unexpected, ok: false });
  }
  return out;
}
