/**
 * The run's summary (run.json `summary`) from its series and ledger: ../summary.ts computeSummary with the run's
 * limits and hosts (computeSummary here), then what only the run knows (summarize): whether the samples were settled,
 * a fixed workload done inside the warmup, delivery latency and the saturation verdict.
 */
import type { Ledger } from "../../../core/verifier.ts";
import type { SeriesPoint, Summary } from "../../results/types.ts";
import { appliedHostLimits } from "../../results/caps.ts";
import { bottleneckLabel, WAIT_MS_PER_SEC } from "../bottleneck.ts";
import { deliveryClock } from "../delivery.ts";
import { saturationVerdict, verdictPoints, type BehindOffered } from "../saturation.ts";
import { LOADGEN, SINK } from "../site.ts";
import { computeSummary as computeSeriesSummary } from "../summary.ts";
import { collectorHosts } from "../versions.ts";
import { stackCost } from "../cost.ts";
import { runPressure } from "../collector-pressure.ts";
import { logBytesPerRowOf } from "../generator-group.ts";
import type { RunContext } from "./context.ts";
import type { Sampler } from "./sampler.ts";

/** The run's summary, `bytesPerRow` the load's mean bytes per row sent, `ledger` once taken. */
export function summarize(ctx: RunContext, sampler: Sampler, bytesPerRow: number, ledger?: Ledger): Summary {
  const { series, plan } = ctx;
  const summary = computeSummary(ctx, bytesPerRow, ledger);
  // a run that ended (Ctrl-C, an error) before its samples were settled keeps the live estimates: said so
  const unsettled = sampler.settles.needed && !sampler.settles.done;
  if (unsettled)
    summary.estimated =
      "live estimates: the run ended before its samples were settled (the counts and rows/s of series.jsonl are the live ones; no delivery windows were read)";
  // only when the window's opening sample (the warmup's last) had already stored some of the workload: else the
  // window holds all of it
  const first = series.findIndex((p) => p.phase === "measure");
  const opening = first > 0 ? series[first - 1] : undefined;
  if (sampler.doneInWarmupMs !== undefined && opening !== undefined && opening.stored > 0) {
    summary.shortWindow = `the fixed workload was all sent ${(sampler.doneInWarmupMs / 1000).toFixed(1)} s after the start, inside the ${(plan.warmupMs / 1000).toFixed(1)} s warmup: the window is only from the warmup's last sample (${opening.stored} rows already stored) to the end, not the whole workload (set warmup: 0s, or raise requests)`;
  }
  summary.deliveryLatency = sampler.deliverySeen
    ? sampler.delivery.summary(deliveryClock(ctx.stack.platform, sampler.deliveryCorrection))
    : {
        unavailable: unsettled
          ? "not read: the run ended before the samples were settled (the delivery windows are read after the load)"
          : (sampler.deliveryUnavailable ?? `the ${plan.sink.name} verifier reads no stored-at time`),
      };
  const measure = series.filter((p) => p.phase === "measure");
  const pressure = runPressure(measure, plan.sink.name);
  summary.saturation = saturationVerdict(verdictPoints(measure), {
    ...behindOffered(summary, measure, offeredRate(plan.generator.config, generatorCount(ctx))),
    ...(pressure ? { pressure } : {}),
  });
  summary.cost = stackCost(ctx.series, summary, ctx.stack.hosts);
  return summary;
}

/** ../summary.ts computeSummary with the run's applied limits, its sink-side hosts and its load's offered rate. */
export function computeSummary(ctx: RunContext, bytesPerRow: number, ledger?: Ledger): Summary {
  const { stack, plan, record } = ctx;
  const bytesUnknown = ctx.load?.bytesUnknown;
  return computeSeriesSummary({
    series: ctx.series,
    bytesPerRow,
    logBytesPerRow: logBytesPerRowOf(ctx.load?.progress),
    ...(bytesUnknown !== undefined ? { bytesUnknown } : {}),
    // scored against what was applied and read back, caps at or above the machine dropped (caps.ts appliedHostLimits)
    limits: Object.fromEntries(
      Object.entries(stack.hosts).map(([n, h]) => [
        n,
        appliedHostLimits(record.limits[n], h.limits, record.environment),
      ]),
    ),
    sinkHosts: plan.collector ? [...collectorHosts(Object.keys(stack.hosts)), SINK] : [SINK],
    clientHost: LOADGEN,
    machineCores: record.environment.cores,
    distinctShare: ledger && ledger.stored > 0 ? ledger.distinct / ledger.stored : undefined,
    offeredPerSec: offeredRate(plan.generator.config, generatorCount(ctx)),
  });
}

/** The load's generator entries (1 before the load started). */
export function generatorCount(ctx: RunContext): number {
  return ctx.load?.generatorCount ?? 1;
}

/** Total events/s offered by `n` open-loop generators with this config (`rate` is per generator), else undefined. */
function offeredRate(config: Record<string, unknown>, n: number): number | undefined {
  return typeof config.rate === "number" ? config.rate * n : undefined;
}

/**
 * The verdict's `behind` (harness/runner/saturation.ts): an open loop's offered and sent rates over the measurement,
 * when it fell behind and its own host was not starved of CPUs (then the client, not the pipeline, held it back:
 * bottleneck.ts's host contention, from WAIT_MS_PER_SEC and a 30 % share); {} otherwise.
 */
function behindOffered(
  summary: Summary,
  measure: readonly SeriesPoint[],
  offeredPerSec: number | undefined,
): { behind?: BehindOffered } {
  const first = measure[0];
  const last = measure.at(-1);
  if (offeredPerSec === undefined || !first || !last || last.t <= first.t) return {};
  const sentPerSec = ((last.sent - first.sent) * 1000) / (last.t - first.t);
  const client = summary.contention?.hosts[LOADGEN];
  if (client && (client.waitMsPerSec >= WAIT_MS_PER_SEC || client.share >= 0.3)) return {};
  return { behind: { offeredPerSec, sentPerSec, boundBy: bottleneckLabel(summary.bottleneck) } };
}
