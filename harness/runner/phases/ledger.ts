/**
 * The run's ledger phase: what the measurement's samples cost the sink, the collectors' claims, the end of the
 * measurement (caps lifted for the reads), the ledger with its content check (the load's: ../load.ts), storage and
 * fault costs; then the verdict: summary, req/s, the load's own record, the checks and the run's status.
 */
import { untilAborted } from "../../../core/errors.ts";
import type { Ledger } from "../../../core/verifier.ts";
import { evaluateChecks } from "../checks.ts";
import { faultCosts } from "../fault-cost.ts";
import { queryTotals } from "../query-load.ts";
import { SINK } from "../site.ts";
import { storageOf, withLogBytes } from "../storage.ts";
import type { RunContext } from "./context.ts";
import type { Stopped } from "./complete.ts";
import type { Sampler } from "./sampler.ts";
import type { Started } from "./start.ts";
import { generatorCount, summarize } from "./summary.ts";

/** Generators whose load is HTTP requests (a bulk, a push, a batch): their runs report req/s beside rows/s. */
const REQUEST_GENERATORS = new Set(["http-json", "es-bulk", "loki-push", "griddb-webapi", "clickhouse-http"]);

/** Take the ledger once the measurement is over: run.json `ledger`, `storage`, `faults`, `collectorClaims`. */
export async function ledgerPhase(ctx: RunContext, started: Started, stopped: Stopped): Promise<Ledger> {
  const { site, record, cost, plan } = ctx;
  const { verifier, target } = started;
  // what the measurement's samples cost the sink, by its own account (before the ledger's queries)
  cost.sink = (await verifier.sinkCost?.("measure").catch(() => null)) ?? null;
  // What the collectors claim they received and wrote, beside the ledger (a dead collector's error is kept instead).
  ctx.stage = "counting the ledger";
  const claims = await site.collectorClaims();
  if (claims) record.collectorClaims = claims;
  if (ctx.steps?.disturbed(SINK)) await ctx.followSink?.().catch(() => undefined);
  // The measurement is over (e.g. the local sink's CPU cap is lifted for the ledger queries)
  for (const [host, notes] of Object.entries(await site.endMeasurement()))
    record.limits[host]?.notes.push(...notes);
  await ctx.opts.beforeLedger?.(target);
  // Ctrl-C does not wait for the reads (PostgreSQL's CREATE INDEX over a soak's 18M rows)
  const done = await untilAborted(
    started.load.ledger({
      verifier,
      plan,
      sent: stopped.finals.map((f) => f.sent),
      rejected: stopped.finals.map((f) => f.rejectedRanges),
      genBase: started.genBase,
      signal: ctx.signal,
      replayIndex: stopped.replayIndex,
      generatorsStartedMs: started.generatorsStartedMs,
    }),
    ctx.signal,
  );
  const ledger = done.ledger;
  Object.assign(cost, done.times);
  cost.ledgerPass = verifier.ledgerPass;
  cost.stopAfterLoadSampler();
  record.ledger = ledger;
  record.storage = await storageOf(verifier, ledger.distinct);
  if (record.timeline) record.faults = faultCosts(record.timeline, ctx.series, ledger, generatorCount(ctx));
  return ledger;
}

/**
 * The run's verdict from its ledger: summary (with req/s for request generators), the load's own record (an app's),
 * the checks and the status. @throws VerificationError when the load's own account disagrees with the ledger
 */
export async function verdictPhase(
  ctx: RunContext,
  started: Started,
  sampler: Sampler,
  stopped: Stopped,
  ledger: Ledger,
): Promise<void> {
  const { record, plan } = ctx;
  const { final } = stopped;
  const summary = summarize(
    ctx,
    sampler,
    final.sent > 0 ? final.bytes / (final.sent + (final.repeated ?? 0)) : 0,
    ledger,
  );
  record.summary = summary;
  record.storage = withLogBytes(record.storage, summary);
  if (REQUEST_GENERATORS.has(plan.generator.name) && final.requests > 0 && final.sent > 0) {
    const rowsPerRequest = (final.sent + (final.repeated ?? 0)) / final.requests;
    summary.requestsPerSecond = summary.rowsPerSecond / rowsPerRequest;
  }
  const own = await started.load.conclude({
    verifier: started.verifier,
    plan,
    final,
    ledger,
    series: ctx.series,
    genBase: started.genBase,
  });
  Object.assign(record, own);
  record.checks = evaluateChecks(plan.checks, {
    ledger,
    summary,
    generator: final,
    query: queryTotals(record.query),
    ...own,
  });
  record.status = record.checks.every((c) => c.ok) ? "ok" : "failed";
  started.load.verifyLedger();
}
