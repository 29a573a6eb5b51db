/**
 * Multiple testing: Holm's step-down adjustment (S. Holm 1979, "A simple sequentially rejective multiple test
 * procedure", Scandinavian Journal of Statistics 6(2):65–70). With m p-values sorted ascending p(1) ≤ … ≤ p(m), the
 * adjusted value of p(i) is max over j ≤ i of min(1, (m − j + 1)·p(j)); rejecting where the adjusted value is ≤ α
 * controls the family-wise error rate (the chance of one or more false alarms) at α under any dependence between the
 * tests.
 *
 * Why Holm and not Benjamini–Hochberg: a nightly job fails on any regression it names, so the error that costs is
 * "at least one false alarm in a night" — the family-wise rate Holm controls. Benjamini–Hochberg controls the
 * expected share of false alarms among the alarms (FDR), which allows a false alarm on most nights with many cells.
 * Cells run on one machine in one night are dependent (a busy night slows all of them); Holm needs no assumption about
 * that, where BH's guarantee assumes independence or positive dependence. Holm is never less powerful than Bonferroni.
 */

/**
 * Holm-adjusted p-values, in the input's order. NaN inputs stay NaN and do not count in m.
 * @throws RangeError for a p-value outside [0, 1]
 */
export function holmAdjust(pvalues: readonly number[]): number[] {
  const idx = pvalues.map((p, i) => ({ p, i })).filter((x) => !Number.isNaN(x.p));
  for (const x of idx)
    if (x.p < 0 || x.p > 1) throw new RangeError(`holmAdjust: p-value ${x.p} is not in [0, 1]`);
  idx.sort((a, b) => a.p - b.p);
  const m = idx.length;
  const out = pvalues.map(() => Number.NaN);
  let running = 0;
  idx.forEach((x, j) => {
    running = Math.max(running, Math.min(1, (m - j) * x.p));
    out[x.i] = running;
  });
  return out;
}
