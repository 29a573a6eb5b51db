/**
 * The run's complete phase: stop the load (no fault step fires any more, running ones end and frozen hosts are
 * thawed; the load's final reports), then keep counting until the sink holds every seq it acknowledged, or the
 * timeout passes. With a collector this is the wait for it to flush its queue (accepted = what the collector's socket
 * took in). A fixed workload's wait is still its measurement (its window ends at the first sample with the final
 * count: ../completion.ts windowEnd); after a timed load it is the drain. The samples are settled in between
 * (./settle.ts).
 */
import { IngestbenchError } from "../../../core/errors.ts";
import { completionOf, type Completion, type Verifier } from "../../../core/verifier.ts";
import type { ReplayIndexJson } from "../../../core/events/replay-index.ts";
import type { GeneratorFinal, GeneratorProgress } from "../../generators/types.ts";
import type { CompletionRecord } from "../../results/types.ts";
import { awaitCompletion, TIGHT_INTERVAL_MS, windowEnd, type CompletionWait } from "../completion.ts";
import { mergeFinals, takeReplayIndex } from "../generator-group.ts";
import { now, sinkCpuCap } from "../instrument-cost.ts";
import { SINK } from "../site.ts";
import type { RunContext } from "./context.ts";
import type { Measured } from "./measure.ts";
import { awaitMixedQueries } from "./query.ts";
import type { Sampler } from "./sampler.ts";
import { settleAfterLoad } from "./settle.ts";
import type { Started } from "./start.ts";

/** The load's final reports. */
export interface Stopped {
  finals: GeneratorFinal[];
  /** the reports merged (run.json `generator`) */
  final: GeneratorFinal;
  replayIndex: ReplayIndexJson | undefined;
}

/**
 * Stop the load: the samples saw the harness's memory until the drain; what comes after (the final reports, the
 * completion check, the settling, the ledger and the content check) is sampled by stage from here.
 * @throws IngestbenchError E_GENERATOR when the load stored nothing and reported errors
 */
export async function stopLoad(ctx: RunContext, measured: Measured): Promise<Stopped> {
  const { record, plan } = ctx;
  // the steps' end is part of stopping the load: the first after-load figure is this stage's
  ctx.stage = "stopping the generators";
  ctx.endLoad();
  // no step fires after the load; running ones end, frozen hosts are thawed before the drain
  if (ctx.steps) record.timeline = await ctx.steps.finish();
  const finals = await ctx.load!.stop();
  ctx.finals = finals;
  const replayIndex = takeReplayIndex(finals);
  await awaitMixedQueries(ctx, measured.mixed);
  const final = mergeFinals(finals);
  record.generator = final;
  if (finals.length > 1) record.generators = finals;
  if (final.errors.length > 0 && final.accepted === 0) {
    throw new IngestbenchError(
      "E_GENERATOR",
      `generator ${plan.generator.name} stored nothing: ${final.errors.slice(0, 3).join("; ")}`,
    );
  }
  return { finals, final, replayIndex };
}

/** Wait for every acknowledged row (see the file comment): run.json `completion`, the series settled. */
export async function completePhase(
  ctx: RunContext,
  started: Started,
  measured: Measured,
  stopped: Stopped,
): Promise<void> {
  const { plan } = ctx;
  const { sampler } = measured;
  const { verifier } = started;
  const wait = completionWait(ctx, started, sampler, stopped);
  // the content check's sample is known now: the completion check's passes locate it, so that the ledger can take
  // the last of them rather than a pass of its own (plugins/sinks/postgres/verifier.ts ledger())
  started.load.expectContent(
    verifier,
    plan,
    stopped.finals.map((f) => f.sent),
    started.genBase,
  );
  ctx.stage = "waiting for every acknowledged row";
  if (measured.workloadDone) await completeWorkload(ctx, sampler, verifier, wait);
  else await completeDrain(ctx, sampler, verifier, wait);
}

/** A fixed workload's wait is its measurement: the window ends at the sample that first saw the final count. */
async function completeWorkload(
  ctx: RunContext,
  sampler: Sampler,
  verifier: Verifier,
  wait: (phase: "measure" | "drain") => Promise<CompletionWait>,
): Promise<void> {
  const { series, writer } = ctx;
  const w = await wait("measure");
  // settled before the window's end is found from the points' counts (the last point is the last sample's)
  const settled = await settleAfterLoad(ctx, sampler, verifier);
  // the window ends at the first sample with the final count: later ones waited for rows that never came, or
  // only confirmed what an earlier one saw (drain, not measure)
  const first = series.findIndex((p) => p.phase === "measure");
  const points = first < 0 ? [] : series.slice(Math.max(0, first - 1));
  const finalStored =
    w.outcome === "complete"
      ? settled
        ? series.at(-1)!.stored
        : w.samples.at(-1)!.stored
      : Math.max(...points.map((p) => p.stored));
  const end = windowEnd(points, finalStored);
  points.forEach((p, i) => {
    if (i > Math.max(end.index, 1)) p.phase = "drain";
  });
  sampler.flushDeferred(writer);
  if (settled) await writer.rewriteSeries(series);
  ctx.record.completion = completionRecord(
    "workload",
    w,
    points[Math.max(end.index, 1)]?.t ?? null,
    end.windowErrorMs,
  );
  ctx.stage = "counting the last sample";
  const tCount = now();
  // the settling's pass counted every row in its snapshot (PostgreSQL): the last point takes that count
  // rather than reading every row again (at 322M rows a 100 s count(*))
  await sampler.tick("drain", sampler.settledFinal);
  ctx.cost.finalCountMs = now() - tCount;
}

/** After a timed load the wait is the drain; the samples are settled after it. */
async function completeDrain(
  ctx: RunContext,
  sampler: Sampler,
  verifier: Verifier,
  wait: (phase: "measure" | "drain") => Promise<CompletionWait>,
): Promise<void> {
  const { series, writer } = ctx;
  sampler.flushDeferred(writer);
  ctx.record.completion = completionRecord("drain", await wait("drain"), null, null);
  if (await settleAfterLoad(ctx, sampler, verifier)) await writer.rewriteSeries(series);
  // rows committed after the drain's last sample, before the completion check's snapshot, are in no point: the
  // settling's count of every row in that snapshot (PostgreSQL) is the drain's last point, so that drainSeconds
  // ends at the latest where they were all stored
  if (sampler.settledFinal && sampler.settledFinal.stored > series.at(-1)!.stored)
    await sampler.tick("drain", sampler.settledFinal);
}

/**
 * The completion wait of `phase`. The drain after a timed load samples live where the verifier settles its samples
 * after the load and its check counts the rows itself (PostgreSQL: Verifier.liveCountLags, Completion.stored): an
 * exact count would read every row of the run under the sink's caps at each drain sample, while the completion check
 * decides anyway and the settling makes the drain's points exact. Elsewhere the drain counts exactly (ClickHouse's
 * drain samples also recount another run's late rows, which its live samples take from the first sample).
 */
function completionWait(
  ctx: RunContext,
  started: Started,
  sampler: Sampler,
  stopped: Stopped,
): (phase: "measure" | "drain") => Promise<CompletionWait> {
  const { plan } = ctx;
  const liveDrain = sampler.settles.needed && started.verifier.liveCountLags === true;
  const completion = completionCheck(ctx, started, sampler, stopped);
  return (phase) =>
    awaitCompletion({
      tick: () => sampler.tick(phase, undefined, phase === "drain" && !liveDrain),
      completion,
      accepted: stopped.final.accepted,
      expected: expectedRows(stopped.final),
      previous: sampler.prev,
      intervalMs: phase === "measure" ? plan.intervalMs : Math.min(plan.intervalMs, 250),
      tighten: phase === "measure",
      // the drain's live count, which lags, is checked once it stands still; not a fixed workload's wait, which is
      // still its measurement: the check lifts the sink's cap, so it waits until the count says done
      checkWhenStill: phase === "drain" && liveDrain,
      timeoutMs: plan.drainTimeoutMs,
      checkAbort: () => ctx.throwIfAborted(),
      signal: ctx.signal,
    });
}

/**
 * One completion check: a full pass of the table, with the sink's CPU cap lifted where the site can, as for the
 * other reads after the load (when slow, it is as the first pass after the load: PostgreSQL's page images for hint
 * bits, its walBytes; docs/design.md "What the instrument costs"). It runs once the count has reached what was
 * acknowledged, after the sample that ends a fixed workload's window: an answer of "complete" leaves the measurement
 * as it was; after an incomplete one the rows still to come may have been stored while the cap was off, which the
 * sink's notes then say. The load's unstorable seqs (an app's drops) are not waited for.
 */
function completionCheck(
  ctx: RunContext,
  started: Started,
  sampler: Sampler,
  stopped: Stopped,
): () => Promise<Completion> {
  const { site, record } = ctx;
  const sentBy = stopped.finals.map((f) => f.sent);
  const rejectedBy = stopped.finals.map((f) => f.rejectedRanges);
  const drops = started.load.unstorable(stopped.final);
  return async () => {
    const tCheck = now();
    // the samples the settling will need (Verifier.afterLoad's marks): a verifier may settle them beside its check,
    // in its snapshot (PostgreSQL), and the settling then reads no table of its own
    const marks =
      sampler.settles.needed && sampler.marks.length > 0 ? sampler.marks.map((m) => m.mark) : undefined;
    const check = (): Promise<Completion> => completionOf(started.verifier, sentBy, rejectedBy, marks);
    const raw = await (site.sinkUncapped
      ? site.sinkUncapped("the completion wait looked for missing seqs", check)
      : check());
    ctx.cost.noteCompletionCheck(now() - tCheck, raw.walBytes);
    const c = drops > 0 ? { ...raw, missing: Math.max(0, raw.missing - drops) } : raw;
    const notes = record.limits[SINK]?.notes;
    const incomplete =
      "the completion wait found seqs missing with the CPU cap lifted for its check: rows stored during that check were stored without the cap";
    if (
      c.missing > 0 &&
      site.sinkUncapped &&
      notes &&
      sinkCpuCap(record, ctx.stack) !== null &&
      !notes.includes(incomplete)
    )
      notes.push(incomplete);
    return c;
  };
}

/** run.json's account of a completion wait (harness/results/types.ts CompletionRecord). */
function completionRecord(
  phase: CompletionRecord["phase"],
  w: CompletionWait,
  windowEndT: number | null,
  windowErrorMs: number | null,
): CompletionRecord {
  return {
    phase,
    outcome: w.outcome,
    missing: w.missing,
    missingRanges: w.missingRanges,
    waitedMs: w.waitedMs,
    windowEndT,
    windowErrorMs: windowEndT === null ? null : windowErrorMs,
    tightIntervalMs: TIGHT_INTERVAL_MS,
  };
}

/** Rows the sink should hold once everything acknowledged has landed: accepted events plus deliberate repeats. */
function expectedRows(p: GeneratorProgress): number {
  return p.accepted + (p.repeated ?? 0);
}
