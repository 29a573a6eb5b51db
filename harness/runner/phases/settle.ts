/**
 * The run's settle phase: the samples a verifier settles after the load (Verifier.afterLoad, for a verifier whose
 * live samples are cheap estimates; ./sampler.ts marks).
 */
import { untilAborted } from "../../../core/errors.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { now } from "../instrument-cost.ts";
import type { RunContext } from "./context.ts";
import type { Sampler } from "./sampler.ts";
import { logMibPerSec } from "../summary.ts";

/**
 * Settle the samples after the load: every point with a mark gets the verifier's exact stored count (and from it
 * rows/s, MiB/s and the backlog, as the tick computes them), newest sent_at (the lag) and delivery window; rows that
 * arrived after the last sample count in the run's delivery figure only. Runs once the load and its completion wait
 * are over (the window is measured, so the queries burden none of it), with the sink's CPU cap lifted where the site
 * can (RunSite.sinkUncapped: over 18M rows the settling query ran 7 min under a quarter-core cap); the caller
 * rewrites series.jsonl. Returns whether anything was settled.
 */
export async function settleAfterLoad(
  ctx: RunContext,
  sampler: Sampler,
  verifier: Verifier,
): Promise<boolean> {
  const { site, cost } = ctx;
  const marks = sampler.marks;
  if (!verifier.afterLoad || marks.length === 0) return false;
  ctx.stage = "settling the samples";
  const settle = () => untilAborted(verifier.afterLoad!(marks.map((m) => m.mark)), ctx.signal);
  const tSettle = now();
  const settled = await (site.sinkUncapped
    ? site.sinkUncapped("the samples were settled after the load", settle)
    : settle());
  cost.settleMs = now() - tSettle;
  if (settled.fromCompletionPass) cost.settledInCompletionPass = true;
  sampler.settles.done = true;
  sampler.settledFinal = settled.final;
  let prev: { stored: number; mid: number } | null = null;
  marks.forEach((m, i) => {
    const s = settled.samples[i];
    const p = m.point;
    if (p && s) {
      if (s.stored !== undefined) {
        p.stored = s.stored;
        p.rowsPerSec =
          prev && m.mid > prev.mid ? ((s.stored - prev.stored) * 1000) / (m.mid - prev.mid) : null;
        p.mibPerSec = sampler.mibPerSec(p.rowsPerSec, m.bytesPerRow);
        p.logMibPerSec = logMibPerSec(p.rowsPerSec, ctx.load?.logBytesPerRowAt(m.tAfter));
        const backlog = ctx.load?.backlog(s.stored, m.tAfter);
        p.backlogRows = backlog?.rows ?? null;
        p.backlogLagMs = backlog?.ageMs ?? null;
      }
      if (s.newestSentAtMs !== undefined)
        p.lagMs = s.newestSentAtMs === null ? null : m.lagBase - s.newestSentAtMs;
      if (s.delivery && p.delivery === undefined) {
        sampler.deliverySeen = true;
        const d = sampler.delivery.window(s.delivery, p.phase !== "warmup");
        if (d) p.delivery = d;
      }
    }
    prev = { stored: p?.stored ?? s?.stored ?? 0, mid: m.mid };
  });
  if (settled.later) {
    sampler.deliverySeen = true;
    sampler.delivery.window(settled.later, true);
  }
  return true;
}
