/**
 * The run's measure phase: from t0 (the load started) a sample every interval, the warmup's then the measurement's,
 * until the load's planned end or a fixed workload is done; mixed queries beside it (./query.ts); a load that ends by
 * itself (`generator: none`) is sampled on (drain) until it has (../load.ts settled).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { nearEnd, TIGHT_INTERVAL_MS } from "../completion.ts";
import { now } from "../instrument-cost.ts";
import type { RunContext } from "./context.ts";
import { startMixedQueries, type MixedQueries } from "./query.ts";
import { Sampler } from "./sampler.ts";
import type { Started } from "./start.ts";

/** What the measurement hands the completion wait. */
export interface Measured {
  sampler: Sampler;
  /** rows a fixed workload sends in total (undefined: a timed load) */
  workloadRows: number | undefined;
  /** the fixed workload was all sent before the load's planned end */
  workloadDone: boolean;
  mixed: MixedQueries | undefined;
}

/** Sample the load from t0 to its end (see the file comment). */
export async function measurePhase(ctx: RunContext, started: Started): Promise<Measured> {
  const { plan } = ctx;
  const t0 = now();
  const loadEnd = t0 + plan.warmupMs + plan.durationMs;
  ctx.steps?.start(t0, loadEnd);
  const sampler = new Sampler(ctx, started, t0, loadEnd);
  ctx.sampler = sampler;
  // A fixed workload's points are written once its window end is known (samples after it become "drain").
  const workloadRows = fixedWorkloadRows(plan.generator.config, started.entries.length);
  if (typeof plan.generator.config.requests === "number") sampler.deferred = [];
  // The sample at t0 opens the measurement when there is no warmup.
  ctx.stage = "sampling the load";
  await sampler.tick("warmup");
  const mixed = startMixedQueries(ctx, sampler, started.target);
  await sampleTheLoad(ctx, sampler, workloadRows);
  const workloadDone = started.load.finished;
  if (workloadDone && now() - t0 < plan.warmupMs) sampler.doneInWarmupMs = now() - t0;
  // the collector's own load ends by itself: sample on (drain) until it has (../self-load.ts settled)
  const until = now() + plan.drainTimeoutMs;
  while (!(await started.load.settled(sampler.prev.stored)) && now() < until) {
    await sleep(Math.min(plan.intervalMs, 250), undefined, { signal: ctx.signal }).catch(() => undefined);
    ctx.throwIfAborted();
    await sampler.tick("drain");
  }
  mixed?.end();
  return { sampler, workloadRows, workloadDone, mixed };
}

/**
 * Load phase: sample on a fixed cadence measured from t0 (a slow count shifts samples, never the cadence), tightened
 * near the end of a fixed workload. A fixed workload that is done ends the loop at once and is measured on by the
 * completion wait (../run.ts file comment).
 */
async function sampleTheLoad(
  ctx: RunContext,
  sampler: Sampler,
  workloadRows: number | undefined,
): Promise<void> {
  const { plan } = ctx;
  const { t0, loadEnd } = sampler;
  const load = ctx.load!;
  const allFinished = load.whenFinished();
  for (let k = 1; ; k++) {
    const cadence = t0 + k * plan.intervalMs;
    const near = workloadRows !== undefined && nearEnd(sampler.prev.stored, workloadRows, now() - t0);
    const due = near ? Math.min(cadence, now() + TIGHT_INTERVAL_MS) : cadence;
    if (due > loadEnd + 1 || load.finished) break;
    await Promise.race([
      sleep(Math.max(0, due - now()), undefined, { signal: ctx.signal }).catch(() => undefined),
      allFinished,
    ]);
    ctx.throwIfAborted();
    if (load.finished) break;
    await sampler.tick(due - t0 <= plan.warmupMs ? "warmup" : "measure");
    if (near && due < cadence) k--; // a tightened sample does not use up a slot of the cadence
  }
}

/** Rows a fixed workload sends in total: `requests` × `batch` per generator, when the config has both; else undefined. */
function fixedWorkloadRows(config: Record<string, unknown>, n: number): number | undefined {
  return typeof config.requests === "number" && typeof config.batch === "number"
    ? config.requests * config.batch * n
    : undefined;
}
