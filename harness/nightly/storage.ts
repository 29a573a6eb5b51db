/**
 * Storage per million rows in the nightly decision: each cell carries tonight's bytes on the sink's disk per million
 * stored rows (run.json `storage`, harness/runner/storage.ts) beside its baseline nights', and a change is reported
 * when tonight's value leaves them.
 *
 * No test of harness/nightly/window.ts fits: the same seeded rows into the same sink take nearly the same bytes every
 * night (what varies is when background merges ran), so the between-night spread the window test divides by is near
 * zero and any byte would be "significant", while the runs test needs 3 runs a side to say anything. So the figure is
 * carried and shown, with a plain rule: a cell's storage *changed* when tonight's value (median over its eligible
 * runs) lies outside the range of its baseline nights' values (each the median of that night's runs) and differs
 * from their median by at least `minChange` (5 %, harness/stats/compare.ts DEFAULT_MIN_CHANGE). The baseline
 * nights are the cell's rows/s baseline (window.ts: good nights in tonight's environment). Reported, never failing,
 * as drift is.
 */
import { median } from "../stats/descriptive.ts";
import { DEFAULT_MIN_CHANGE } from "../stats/compare.ts";
import type { RunRecord } from "../results/types.ts";
import type { CellTest, Night } from "./window.ts";

/** A cell's storage tonight against its baseline nights (bytes per million stored rows). */
export interface NightlyStorage {
  /** median over tonight's eligible runs in the cell that recorded a footprint */
  latestBytesPerMillionRows: number;
  /** each baseline night's median, in the baseline's order; nights without a footprint are left out */
  baselineNights: Array<{ invocation: string; bytesPerMillionRows: number }>;
  /** median of the baseline nights' values; null without any */
  baselineBytesPerMillionRows: number | null;
  /** latest / baseline; null without a baseline */
  ratio: number | null;
  /** "larger"/"smaller": outside the baseline nights' range and at least minChange away; null without a baseline */
  change: "larger" | "smaller" | "none" | null;
}

/** A run's storage per million rows, or null when it recorded none (or no rows). */
function perMillion(r: RunRecord): number | null {
  const s = r.storage;
  return s && "bytesPerMillionRows" in s ? s.bytesPerMillionRows : null;
}

/** Median bytes per million rows of a night's eligible runs in `cell`, or null when none recorded a footprint. */
function nightValue(night: Night | undefined, cell: string): number | null {
  const v = (night?.used ?? [])
    .filter((r) => r.cell === cell)
    .map(perMillion)
    .filter((x): x is number => x !== null);
  return v.length ? median(v) : null;
}

/**
 * The storage of `test`'s cell tonight (the last of `nights`) against the nights of its rows/s baseline.
 * @returns null when tonight's runs in the cell recorded no footprint
 */
export function nightlyStorage(
  nights: readonly Night[],
  test: Pick<CellTest, "cell" | "baselineNights">,
  minChange = DEFAULT_MIN_CHANGE,
): NightlyStorage | null {
  const latest = nightValue(nights.at(-1), test.cell);
  if (latest === null) return null;
  const baselineNights = test.baselineNights.flatMap((b) => {
    const v = nightValue(
      nights.find((n) => n.invocation === b.invocation),
      test.cell,
    );
    return v === null ? [] : [{ invocation: b.invocation, bytesPerMillionRows: v }];
  });
  const values = baselineNights.map((b) => b.bytesPerMillionRows);
  const base = values.length ? median(values) : null;
  const ratio = base !== null && base > 0 ? latest / base : null;
  const change =
    ratio === null
      ? null
      : latest > Math.max(...values) && ratio - 1 >= minChange
        ? "larger"
        : latest < Math.min(...values) && 1 - ratio >= minChange
          ? "smaller"
          : "none";
  return {
    latestBytesPerMillionRows: latest,
    baselineNights,
    baselineBytesPerMillionRows: base,
    ratio,
    change,
  };
}
