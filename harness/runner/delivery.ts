/**
 * Delivery latency per sample window and over a run: the sink's per-row stored_at − sent_at, read by the verifier as
 * a histogram of the rows new since its previous sample (core/verifier.ts DeliveryWindow), in the sample or, for
 * PostgreSQL and ClickHouse, once after the load for every sample at once (Verifier.afterLoad; how each places a row
 * in one window is in its verifier: plugins/sinks/postgres/verifier.ts, plugins/sinks/clickhouse/verifier.ts), recorded
 * into HDR histograms (hdr-histogram-js: 3 significant digits, values in whole ms from 1 ms to 1 h; a larger value is
 * recorded as 1 h). Each window's histogram gives that window's p50, p99 and max (SeriesPoint.delivery); the run's
 * histogram adds the windows after the warmup (measurement and drain: a backlog flushed in the drain is delivered
 * late, and belongs in the run's figure) and gives Summary.deliveryLatency with the rows it rests on.
 *
 * A latency below 0 (the sink's clock behind the generator's, or ClickHouse 18.16's whole-second stamp read at the
 * middle of its second, ±500 ms) is recorded as 0 and counted in `belowZero`.
 */
import * as hdr from "hdr-histogram-js";
import type { DeliveryWindow } from "../../core/verifier.ts";
import type { DeliveryPoint, DeliverySummary } from "../results/types.ts";

/** The largest latency a histogram tracks, ms (larger values are recorded as this). */
export const DELIVERY_MAX_MS = 3_600_000;

function histogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: DELIVERY_MAX_MS,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
    useWebAssembly: false,
  });
}

/** The run's delivery histograms: one per window (record, then read), and the run's own. */
export class DeliveryLatency {
  private readonly run = histogram();
  private resolutionMs = 1;
  private unstamped = 0;
  private belowZero = 0;
  private correctionMs = 0;

  /**
   * Move every later stored_at onto the generator's clock: each latency is recorded as (stored_at − sent_at) −
   * `correctionMs` (the sink's clock offset minus the loadgen's, harness/generators/clock.ts sinkCorrection).
   */
  correct(correctionMs: number): void {
    this.correctionMs = correctionMs;
  }

  /**
   * Record one sample's window; `counted` adds it to the run's figure (false for warmup windows). Returns the window's
   * p50, p99 and max, or null when it holds no row.
   */
  window(w: DeliveryWindow, counted: boolean): DeliveryPoint | null {
    const h = histogram();
    let rows = 0;
    let below = 0;
    for (const [raw, n] of w.buckets) {
      if (!(n > 0)) continue;
      const ms = raw - this.correctionMs;
      if (ms < 0) below += n;
      h.recordValueWithCount(Math.min(DELIVERY_MAX_MS, Math.max(0, Math.round(ms))), n);
      rows += n;
    }
    if (counted) {
      this.resolutionMs = Math.max(this.resolutionMs, w.resolutionMs);
      this.unstamped += w.unstamped;
      this.belowZero += below;
      if (rows > 0) this.run.add(h);
    }
    const point =
      rows === 0
        ? null
        : { rows, p50Ms: h.getValueAtPercentile(50), p99Ms: h.getValueAtPercentile(99), maxMs: h.maxValue };
    h.destroy();
    return point;
  }

  /** The run's figure over the counted windows; `clock` says how the two clocks relate (see Summary.deliveryLatency). */
  summary(clock: string): DeliverySummary {
    const rows = this.run.totalCount;
    return {
      rows,
      p50Ms: rows === 0 ? null : this.run.getValueAtPercentile(50),
      p99Ms: rows === 0 ? null : this.run.getValueAtPercentile(99),
      maxMs: rows === 0 ? null : this.run.maxValue,
      resolutionMs: this.resolutionMs,
      unstamped: this.unstamped,
      belowZero: this.belowZero,
      clock,
    };
  }
}

/** Whether the sink and the generator read one kernel clock on a platform (so no offset is measured or applied). */
export function oneClock(platform: string): boolean {
  return platform === "local" || platform === "docker";
}

/**
 * How the sink's clock (stored_at) and the generator's (sent_at) relate on a platform: one kernel clock on the local
 * platform (every host is a namespace of this machine) and on a docker stack (containers of one engine share its
 * kernel's clock); on azure they are two VMs: the sink VM's offset and the loadgen's are each measured against the
 * harness before load (harness/generators/clock.ts measureHostClock, syncClock) and their difference is applied
 * (`correction`); without it (either not measured) the figure is uncorrected and says why.
 */
export function deliveryClock(
  platform: string,
  correction?: { correctionMs: number; boundMs: number } | { reason: string },
): string {
  if (platform === "local") return "one clock: the sink and the generator run on this machine's kernel clock";
  if (platform === "docker")
    return "one clock: the sink's and the generator's containers share the Docker engine's kernel clock";
  if (correction && "correctionMs" in correction) {
    return `corrected: the sink host's clock minus the loadgen host's, ${correction.correctionMs.toFixed(1)} ms ± ${correction.boundMs.toFixed(1)} ms (each measured against the harness before load), is subtracted from every row's stored_at − sent_at`;
  }
  return `uncorrected: ${correction?.reason ?? "the sink host's clock against the loadgen host's is not measured"}, so no offset is applied`;
}
