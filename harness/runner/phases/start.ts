/**
 * The run's start phase: the sink (provisioned, its caps and versions recorded), the verifier with the sink's table
 * prepared, the entry points (collectors) with the sink downstream, the fault steps, the observers and the count
 * before the load, then the load (../load.ts) ready, its clock and the sink's synchronised, and started (`go`).
 */
import type { CountSample, Verifier, VerifierFactory } from "../../../core/verifier.ts";
import { genBaseOf } from "../../../core/ledger.ts";
import type { ClockOffset } from "../../generators/clock.ts";
import { sinkCorrection } from "../../generators/clock.ts";
import type { Observer } from "../../observers/types.ts";
import { stackCapsFit } from "../../results/caps.ts";
import { now } from "../instrument-cost.ts";
import type { Load } from "../load.ts";
import { entryLoadOptions, startLoad } from "../loads.ts";
import { SINK, type Endpoint } from "../site.ts";
import { StepRunner } from "../steps.ts";
import type { RunContext } from "./context.ts";
import type { DeliveryCorrection } from "./sampler.ts";

/** Where the harness reaches the sink: its control endpoint and the table's params. */
export interface SinkTarget {
  host: string;
  port: number;
  params: Record<string, string>;
}

/** The sink up, its table prepared. */
export interface SinkReady {
  target: SinkTarget;
  genBase: number;
  verifier: Verifier;
}

/** What the start phase hands the measurement. */
export interface Started extends SinkReady {
  entries: Endpoint[];
  observer: Observer;
  /** the count before the load */
  first: CountSample;
  load: Load;
  /** the loadgen's clock against the harness's */
  clock: ClockOffset;
  deliveryCorrection: DeliveryCorrection;
  /** when the generators started, epoch ms (a replay file modified after this is said to be: ../fidelity.ts) */
  generatorsStartedMs: number;
}

/** Start everything the load needs, then the load (see the file comment). */
export async function startPhase(ctx: RunContext, verifiers: VerifierFactory): Promise<Started> {
  const ready = await startSink(ctx, verifiers);
  const tUp = now();
  const { entries, observer, first } = await startEntries(ctx, ready);
  const started = await startTheLoad(ctx, ready, entries);
  ctx.cost.upMs = now() - tUp;
  return { ...ready, ...started, entries, observer, first };
}

/** Provision the hosts and the sink, record limits, versions and caps, and prepare the table through the verifier. */
async function startSink(ctx: RunContext, verifiers: VerifierFactory): Promise<SinkReady> {
  const { site, record, plan } = ctx;
  ctx.stage = "starting the sink";
  const tProvision = now();
  const sink = await site.startSink(ctx.signal);
  ctx.cost.provisionMs = now() - tProvision;
  record.limits = site.limits;
  record.versions = site.versions;
  if (site.environment) record.environment = await site.environment();
  record.caps = stackCapsFit(ctx.stack, Object.keys(site.limits), record.environment);
  ctx.throwIfAborted();

  const params = { ...sink.params, table: sink.params.table ?? "ib_events" };
  const genBase = genBaseOf(record.runId);
  record.genBase = genBase;
  ctx.stage = "preparing the sink's table";
  const verifier = verifiers.create({
    host: sink.control.host,
    port: sink.control.port,
    params,
    fields: plan.fields,
    genBase,
    seed: typeof plan.generator.config.seed === "number" ? plan.generator.config.seed : undefined,
  });
  ctx.verifier = verifier;
  const tPrepare = now();
  await verifier.prepare();
  ctx.cost.prepareMs = now() - tPrepare;
  followSink(ctx, sink.control, verifier);
  const target = { host: sink.control.host, port: sink.control.port, params };
  ctx.events.emit("sink", { ...target, runDir: ctx.dir });
  return { target, genBase, verifier };
}

/** A fault that restarted the sink may have moved its published port (docker): the verifier follows it. */
function followSink(ctx: RunContext, control: Endpoint, verifier: Verifier): void {
  const { site } = ctx;
  if (!site.sinkControl || !verifier.retarget) return;
  let at = control;
  ctx.followSink = async () => {
    const next = await site.sinkControl!();
    if (next.host === at.host && next.port === at.port) return;
    verifier.retarget!(next);
    ctx.record.limits[SINK]?.notes.push(
      `the verifier followed the sink from ${at.host}:${at.port} to ${next.host}:${next.port} (its endpoint after a fault step)`,
    );
    at = next;
  };
}

/** The collectors (between the load and the sink) once the table exists, the fault steps, the observers. */
async function startEntries(
  ctx: RunContext,
  ready: SinkReady,
): Promise<{ entries: Endpoint[]; observer: Observer; first: CountSample }> {
  const { site, plan } = ctx;
  ctx.stage = "starting the collectors";
  const entries = await site.startEntries(
    { params: ready.target.params, fields: plan.fields, ...entryLoadOptions(plan, ready.genBase) },
    ctx.signal,
  );
  ctx.throwIfAborted();
  if (plan.steps?.length) ctx.steps = new StepRunner(plan.steps, site.steps?.() ?? null);

  ctx.stage = "starting the observers";
  const observer = await site.observer();
  await observer.read();
  const first = await ready.verifier.sample();
  return { entries, observer, first };
}

/**
 * The load, ready (start-up is never measured as load), the loadgen's clock against ours before any load
 * (harness/generators/clock.ts; applied to every lag) and, where the sink's clock is another machine's (azure), its
 * offset too: their difference corrects delivery latency. Then `go`.
 */
async function startTheLoad(
  ctx: RunContext,
  ready: SinkReady,
  entries: Endpoint[],
): Promise<Pick<Started, "load" | "clock" | "deliveryCorrection" | "generatorsStartedMs">> {
  const { site, plan, record } = ctx;
  ctx.stage = "starting the generators";
  const generatorsStartedMs = Date.now();
  const load = await startLoad({
    plan,
    site,
    platform: ctx.stack.platform,
    projectRoot: ctx.opts.projectRoot,
    entries,
    params: ready.target.params,
    genBase: ready.genBase,
  });
  ctx.load = load;
  await load.ready(ctx.signal);
  ctx.throwIfAborted();
  const clock = await load.syncClock();
  record.clock = clock;
  let deliveryCorrection: DeliveryCorrection;
  const sinkClock = await site.sinkClock?.();
  if (sinkClock) {
    record.sinkClock = sinkClock;
    deliveryCorrection = sinkCorrection(sinkClock, clock) ?? {
      reason: `the ${sinkClock.measured ? "loadgen" : "sink"} host's clock offset was not measured (${sinkClock.measured ? (clock as { reason?: string }).reason : sinkClock.reason})`,
    };
  }
  load.go();
  return { load, clock, deliveryCorrection, generatorsStartedMs };
}
