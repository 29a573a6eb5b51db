/**
 * The run's query phase (scenario `query`, ../query-load.ts), the one place that reads its mode: after the ingest
 * (`during: after`, the default), against the table the ingest filled, only once every acknowledged seq is stored and
 * while the sink is still under its caps (afterIngestQueries); or during it (`during: ingest`, mixed mode) from the
 * end of the warmup until the load ends, against the table as it grows (startMixedQueries).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { VerificationError } from "../../../core/errors.ts";
import type { QueryPhaseRecord } from "../../results/types.ts";
import { now } from "../instrument-cost.ts";
import { QUERY_STAGE } from "../progress.ts";
import { runQueryPhase } from "../query-load.ts";
import { TIGHT_INTERVAL_MS } from "../completion.ts";
import type { RunContext } from "./context.ts";
import type { Sampler } from "./sampler.ts";
import type { SinkTarget } from "./start.ts";

/** Queries running beside the load: `end` tells them the load is over, `done` their record (undefined: none ran). */
export interface MixedQueries {
  end(): void;
  done: Promise<QueryPhaseRecord | undefined>;
}

/**
 * Mixed mode (query `during: ingest`): the queries run from the end of the warmup until the load ends, and not
 * before a count has seen rows stored (a statement's `rows` assumes a table that is not empty); "{stored}" answers
 * must be at least the latest count. Undefined without a mixed query phase.
 */
export function startMixedQueries(
  ctx: RunContext,
  sampler: Sampler,
  target: SinkTarget,
): MixedQueries | undefined {
  const mixed = ctx.plan.query?.during === "ingest" ? ctx.plan.query : undefined;
  if (!mixed) return undefined;
  let loadOver = false;
  const signal = ctx.signal;
  const done = (async () => {
    await sleep(Math.max(0, sampler.t0 + ctx.plan.warmupMs - now()), undefined, { signal });
    while (sampler.prev.stored === 0 && !loadOver) await sleep(TIGHT_INTERVAL_MS, undefined, { signal });
    if (loadOver) return undefined;
    return runQueryPhase({
      phase: mixed,
      sink: ctx.plan.sink.name,
      target,
      tableRows: sampler.prev.stored,
      signal,
      stop: () => loadOver,
      storedNow: () => sampler.prev.stored,
      onProgress: (q) => ctx.events.emit("query", q),
    });
  })();
  done.catch(() => undefined); // awaited once the load stops; a rejection before then is not unhandled
  return {
    end: () => {
      loadOver = true;
    },
    done,
  };
}

/** The mixed queries' record once the load has stopped (kept as run.json `query`). @throws their error */
export async function awaitMixedQueries(ctx: RunContext, mixed: MixedQueries | undefined): Promise<void> {
  if (!mixed) return;
  const q = await mixed.done.catch((err: unknown) => {
    ctx.throwIfAborted();
    throw err;
  });
  if (q) ctx.record.query = q;
}

/**
 * The query phase after the ingest (none in mixed mode or without one): run.json `query`.
 * @throws VerificationError E_QUERY_PREFILL when the table is not complete, or a fixed workload was cut short
 */
export async function afterIngestQueries(
  ctx: RunContext,
  sampler: Sampler,
  target: SinkTarget,
  workload: { rows: number | undefined; done: boolean; sent: number },
): Promise<void> {
  const { plan, record } = ctx;
  if (!plan.query || plan.query.during === "ingest") return;
  if (record.completion?.outcome !== "complete") {
    throw new VerificationError(
      "E_QUERY_PREFILL",
      `the query phase needs the table complete: ${record.completion?.missing ?? "?"} acknowledged rows were still missing at the end of the wait`,
    );
  }
  // a fixed workload sets the table's size: one cut short by the duration leaves a smaller table than asked for
  if (workload.rows !== undefined && !workload.done) {
    throw new VerificationError(
      "E_QUERY_PREFILL",
      `the query phase needs the fixed workload's ${workload.rows} rows: the load ended at ${plan.durationMs / 1000} s with ${workload.sent} sent; raise duration`,
    );
  }
  ctx.stage = QUERY_STAGE;
  record.query = await runQueryPhase({
    phase: plan.query,
    sink: plan.sink.name,
    target,
    tableRows: sampler.prev.stored,
    signal: ctx.signal,
    onProgress: (q) => ctx.events.emit("query", q),
  });
}
