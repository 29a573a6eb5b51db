/**
 * The measurement's samples (the run's "tick"): each one reads the hosts' telemetry and the collectors' and the
 * sink's own signals, counts the sink (through faults: sampleThroughFaults) and becomes a SeriesPoint with rows/s,
 * MiB/s, lag, backlog and delivery latency; it is written to series.jsonl (or held back while a fixed workload's
 * window end is open: `deferred`) and emitted as "tick". The samples a verifier settles after the load (its marks,
 * ./settle.ts) and the delivery-latency state live here too.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { CountSample } from "../../../core/verifier.ts";
import type { Phase, SeriesPoint } from "../../results/types.ts";
import type { RunWriter } from "../../results/store.ts";
import { DeliveryLatency } from "../delivery.ts";
import { now } from "../instrument-cost.ts";
import { SINK } from "../site.ts";
import { logMibPerSec } from "../summary.ts";
import type { ClockOffset } from "../../generators/clock.ts";
import type { Observer } from "../../observers/types.ts";
import type { CellPlan } from "../cell-plan.ts";
import type { InstrumentCost } from "../instrument-cost.ts";
import type { Load } from "../load.ts";
import type { RunSite } from "../site.ts";
import type { StepRunner } from "../steps.ts";
import type { EventEmitter } from "node:events";
import type { Verifier } from "../../../core/verifier.ts";

const MiB = 2 ** 20;
/** Retry interval of a count that failed while a step disturbed the sink, ms. */
const SINK_RETRY_MS = 250;

/** A sample the verifier settles after the load (Verifier.afterLoad): the one before the load, then every point's. */
export interface Mark {
  point: SeriesPoint | null;
  mark: string;
  mid: number;
  tAfter: number;
  lagBase: number;
  bytesPerRow: number;
}

/** The sink-vs-loadgen clock correction applied to delivery latency, or why none is (absent: one clock). */
export type DeliveryCorrection = { correctionMs: number; boundMs: number } | { reason: string } | undefined;

/** What the samples use of the run (./context.ts RunContext), read as they are taken. */
export interface SampledRun {
  readonly plan: CellPlan;
  readonly site: RunSite;
  readonly cost: InstrumentCost;
  readonly events: EventEmitter;
  readonly series: SeriesPoint[];
  readonly writer: RunWriter;
  readonly steps: StepRunner | null;
  readonly followSink: (() => Promise<void>) | undefined;
  readonly signal: AbortSignal | undefined;
}

/** What the samples read from: the start phase's verifier, observer, load and clocks (./start.ts Started). */
export interface SampledLoad {
  verifier: Verifier;
  observer: Observer;
  load: Load;
  /** the loadgen's clock against the harness's */
  clock: ClockOffset;
  /** the count before the load */
  first: CountSample;
  deliveryCorrection: DeliveryCorrection;
}

/** Samples of one run's measurement (see the file comment). */
export class Sampler {
  /** the latest count */
  prev: CountSample;
  readonly marks: Mark[] = [];
  /** series points not yet written: a fixed workload's completion wait, whose phases are known at its end */
  deferred: SeriesPoint[] | null = null;
  /** per-window and run delivery latency (../delivery.ts) */
  readonly delivery = new DeliveryLatency();
  deliverySeen = false;
  readonly deliveryUnavailable: string | undefined;
  /** the verifier's live samples are estimates settled after the load (Verifier.afterLoad); `done`: that ran */
  readonly settles: { needed: boolean; done: boolean };
  /** the settling's own exact count of every row (SettledSamples.final), for a fixed workload's last point */
  settledFinal: CountSample | undefined;
  /** when a fixed workload was all sent before its warmup ended: ms after t0 (Summary.shortWindow) */
  doneInWarmupMs: number | undefined;
  private bytesPerRow = 0;

  /** @param t0 the load's start (epoch ms); @param loadEnd its planned end */
  constructor(
    private readonly ctx: SampledRun,
    private readonly s: SampledLoad,
    readonly t0: number,
    readonly loadEnd: number,
  ) {
    this.prev = s.first;
    this.deliveryUnavailable = s.verifier.deliveryUnavailable;
    this.settles = { needed: s.verifier.afterLoad !== undefined, done: false };
    if (s.deliveryCorrection && "correctionMs" in s.deliveryCorrection)
      this.delivery.correct(s.deliveryCorrection.correctionMs);
    const f = s.first;
    if (f.mark !== undefined)
      this.marks.push({
        point: null,
        mark: f.mark,
        mid: (f.tBefore + f.tAfter) / 2,
        tAfter: f.tAfter,
        lagBase: f.tAfter,
        bytesPerRow: 0,
      });
  }

  get deliveryCorrection(): DeliveryCorrection {
    return this.s.deliveryCorrection;
  }

  /**
   * One sample of `phase`. `counted`: a count already taken (the settling's, SettledSamples.final) instead of the
   * verifier's sample; `full`: an exact count as it is taken (Verifier.sample), by default in the drain.
   */
  async tick(phase: Phase, counted?: CountSample, full = phase === "drain"): Promise<CountSample> {
    const { ctx } = this;
    const { site } = ctx;
    // the collectors' and the sink's own signals beside the host telemetry, before the count (../site.ts)
    const [obs, signals, sinkSignals] = await Promise.all([
      this.s.observer.read(),
      site.collectorSignals?.().catch(() => undefined),
      site.sinkSignals?.().catch(() => undefined),
    ]);
    const tSample = now();
    const s =
      counted ??
      (await this.sampleThroughFaults(
        () => this.s.verifier.sample({ full, tag: phase }),
        ctx.plan.drainTimeoutMs,
      ));
    const harnessRssBytes = process.memoryUsage.rss();
    ctx.cost.noteCost(phase, now() - tSample, harnessRssBytes);
    if (s.delivery) this.deliverySeen = true;
    await this.s.load.refresh().catch(() => undefined);
    const point: SeriesPoint = {
      ...this.pointOf(phase, s),
      hosts: obs?.hosts ?? {},
      ...(obs?.machine ? { machine: obs.machine } : {}),
      ...this.deliveryOf(phase, s),
      ...(signals ? { collector: signals } : {}),
      ...(sinkSignals ? { sink: sinkSignals } : {}),
      harnessRssBytes,
    };
    this.record(point, s);
    ctx.events.emit("tick", point, { plan: ctx.plan, loadEndS: (this.loadEnd - this.t0) / 1000 });
    this.prev = s;
    return s;
  }

  /** Write the series points held back while a fixed workload's window end was open. */
  flushDeferred(writer: RunWriter): void {
    for (const p of this.deferred ?? []) writer.append(p);
    this.deferred = null;
  }

  /** MiB/s of `rowsPerSec` rows of `bytesPerRow` bytes; null when unknown (no bytes pass the harness: not 0). */
  mibPerSec(rowsPerSec: number | null, bytesPerRow: number): number | null {
    return rowsPerSec === null || this.s.load.bytesUnknown !== undefined
      ? null
      : (rowsPerSec * bytesPerRow) / MiB;
  }

  /** The count's figures of a point: rows/s since the last sample, lag, backlog and the load's progress. */
  private pointOf(phase: Phase, s: CountSample): Omit<SeriesPoint, "hosts" | "harnessRssBytes"> {
    const { load, clock } = this.s;
    const mid = (s.tBefore + s.tAfter) / 2;
    const prevMid = (this.prev.tBefore + this.prev.tAfter) / 2;
    const rowsPerSec = mid > prevMid ? ((s.stored - this.prev.stored) * 1000) / (mid - prevMid) : null;
    const progress = load.progress;
    if (progress.sent > 0) this.bytesPerRow = progress.bytes / progress.sent;
    const backlog = load.backlog(s.stored, s.tAfter);
    return {
      t: mid,
      elapsedS: (mid - this.t0) / 1000,
      phase,
      stored: s.stored,
      countQueryMs: s.tAfter - s.tBefore,
      rowsPerSec,
      mibPerSec: this.mibPerSec(rowsPerSec, this.bytesPerRow),
      logMibPerSec: logMibPerSec(rowsPerSec, load.logBytesPerRowAt(s.tAfter)),
      lagMs: s.newestSentAtMs === null ? null : s.tAfter - (s.newestSentAtMs - clock.offsetMs),
      backlogRows: backlog?.rows ?? null,
      backlogLagMs: backlog?.ageMs ?? null,
      sent: progress.sent,
      accepted: progress.accepted,
      rejected: progress.rejected,
    };
  }

  private deliveryOf(phase: Phase, s: CountSample): Pick<SeriesPoint, "delivery"> {
    const delivery = s.delivery ? this.delivery.window(s.delivery, phase !== "warmup") : undefined;
    return delivery !== undefined ? { delivery } : {};
  }

  /** Keep the point: in the series, its mark for the settling, written (or held back), seen by the fault steps. */
  private record(point: SeriesPoint, s: CountSample): void {
    const { ctx } = this;
    ctx.series.push(point);
    if (s.mark !== undefined)
      this.marks.push({
        point,
        mark: s.mark,
        mid: point.t,
        tAfter: s.tAfter,
        lagBase: s.tAfter + this.s.clock.offsetMs,
        bytesPerRow: this.bytesPerRow,
      });
    if (this.deferred) this.deferred.push(point);
    else ctx.writer.append(point);
    if (point.phase !== "drain") ctx.steps?.onSample(point);
  }

  /**
   * A count through faults: while a step has disturbed the sink (killed, stopped, restarted, reshaped), a failed count
   * is retried every SINK_RETRY_MS for up to `budgetMs`, the verifier pointed at the sink's endpoint as the site
   * reads it now before each retry (followSink); otherwise, and after that, it fails as it would.
   */
  private async sampleThroughFaults<T>(sample: () => Promise<T>, budgetMs: number): Promise<T> {
    const { ctx } = this;
    const until = now() + Math.max(budgetMs, 10_000);
    for (;;) {
      try {
        return await sample();
      } catch (err) {
        if (!ctx.steps?.disturbed(SINK) || now() > until || ctx.signal?.aborted) throw err;
        // the sink may answer elsewhere now (a restarted container's new published port)
        await ctx.followSink?.().catch(() => undefined);
        await sleep(SINK_RETRY_MS);
      }
    }
  }
}
