/**
 * The load of a `generator: none` cell: the collector's built-in generator (core/plugin.ts SelfLoad: syslog-ng's
 * example-msg-generator(), Fluentd's sample input) makes the events inside the collector, each with its gen and a
 * seq 0, 1, 2, … per generator id. No generator process runs, so nothing on the harness's side knows what was sent:
 *
 * - `sent` per generator id is the collector's own count of the events it made (RunSite.selfLoadCounts, read from
 *   its claims), and the ledger says that it is inferred (core/verifier.ts Ledger `inferred`): seqs 0 .. made − 1 are
 *   what it expects; a stored seq outside that range is `unexpected` and is reported as `outsideRange`;
 * - the input starts with the collector (before the harness's t0: the warmup covers its start) and stops by itself
 *   (syslog-ng's num(), the scenario's duration for in_sample on a stopped container); its load is over when its
 *   count has stood still for `quietMs` with every made event stored and nothing queued in the collector (`settled`):
 *   an input whose source window is full makes nothing until the destination catches up, so a still count alone
 *   is no end;
 * - accepted = made (no receiver acknowledges), rejected 0, bytes and requests unknown (0 in the progress; the
 *   summary's MiB/s is null with `bytesUnknown`, never a false 0), no request latency, and no clock offset to measure
 *   (the collector's clock stamps sent_at; on the local platform that is this machine's).
 *
 * CollectorLoad has the shape of harness/runner/generator-group.ts GeneratorGroup (LoadGroup); the run drives it as its
 * Load through harness/runner/load-self.ts.
 */
import type { GeneratorFinal, GeneratorProgress } from "../generators/types.ts";
import type { ClockOffset } from "../generators/clock.ts";
import type { InferredSent, Ledger } from "../../core/verifier.ts";
import type { CellPlan } from "./cell-plan.ts";
import type { LoadGroup } from "./generator-group.ts";

/** The collectors' own count of made events, per generator index, and the events still queued in them. */
export interface SelfLoadCounts {
  made: number[];
  queued: number;
}

const nowMs = (): number => performance.timeOrigin + performance.now();

/** The collector's built-in generator, driven as the generators are (see the file comment). */
export class CollectorLoad implements LoadGroup {
  private made: number[];
  private queued = 0;
  private lastTotal = -1;
  private stillSince = 0;

  /**
   * @param read the collectors' counts now (RunSite.selfLoadCounts); @param gens generator ids in the run;
   * @param quietMs how long the count must stand still (CellPlan.selfLoad.quietMs)
   */
  constructor(
    private readonly read: () => Promise<SelfLoadCounts>,
    gens: number,
    private readonly quietMs: number,
    private readonly reason: string,
  ) {
    this.made = Array.from({ length: gens }, () => 0);
  }

  async ready(): Promise<void> {}

  /** No generator process to exchange timestamps with: the collector's own clock stamps sent_at. */
  async syncClock(): Promise<ClockOffset> {
    return { measured: false, offsetMs: 0, reason: this.reason };
  }

  go(): void {}

  /** Read the collectors' counts (never lowering one: a counter read mid-restart is not a loss of events). */
  async refresh(): Promise<void> {
    const c = await this.read();
    this.made = this.made.map((m, i) => Math.max(m, c.made[i] ?? 0));
    this.queued = c.queued;
  }

  get progress(): GeneratorProgress {
    const sent = this.made.reduce((a, b) => a + b, 0);
    return { sent, accepted: sent, rejected: 0, bytes: 0, requests: 0 };
  }

  /** No acknowledgements to time: unknown. */
  backlog(): null {
    return null;
  }

  /** The load ends by itself (`settled`), never by finishing a workload. */
  whenFinished(): Promise<void> {
    return new Promise(() => {});
  }

  get finished(): boolean {
    return false;
  }

  /**
   * After a refresh: true once the made count has stood still for quietMs while `stored` (the sink's latest count)
   * holds every made event and the collector queues none — the input has stopped. Call repeatedly (each sample).
   */
  async settled(stored: number): Promise<boolean> {
    await this.refresh();
    const total = this.progress.sent;
    const t = nowMs();
    if (total !== this.lastTotal) {
      this.lastTotal = total;
      this.stillSince = t;
      return false;
    }
    return t - this.stillSince >= this.quietMs && stored >= total && this.queued === 0;
  }

  /** The final report per generator index: sent = accepted = made, nothing rejected, no latency measured. */
  async stop(): Promise<GeneratorFinal[]> {
    await this.refresh();
    return this.made.map((n, genId) => ({
      genId,
      sent: n,
      accepted: n,
      rejected: 0,
      bytes: 0,
      requests: 0,
      rejectedRanges: [],
      latencyMs: { mean: 0, p50: 0, p99: 0, max: 0 },
      errors: n === 0 ? [`the collector's built-in generator made no event (gen index ${genId})`] : [],
    }));
  }
}

/** Ledger.inferred of a `generator: none` run: made per generator index, and the stored seqs outside that range. */
export function inferredSent(
  plan: Pick<CellPlan, "selfLoad">,
  made: number[],
  ledger: Pick<Ledger, "unexpected">,
): InferredSent {
  const s = plan.selfLoad!;
  return {
    from: "collector",
    by: `${s.collector} ${s.input}`,
    counter: s.counter,
    made: [...made],
    outsideRange: ledger.unexpected,
  };
}

/** Why the content of a `generator: none` run is not compared (Ledger.fidelity.unavailable). */
export function selfLoadFidelity(plan: Pick<CellPlan, "selfLoad">): { unavailable: string } {
  const s = plan.selfLoad!;
  return {
    unavailable:
      `the events were made by ${s.collector}'s ${s.input}, not by a seeded generator: their fields are the collector's fixed values, ` +
      "so what is checked is gen and seq (every seq 0 .. made − 1 stored once: the ledger); sent_at is the collector's own stamp (delivery latency rests on it)",
  };
}

/** Why a `generator: none` run has no MiB/s (Summary.bytesUnknown): the events never pass the harness. */
export function selfLoadBytesUnknown(plan: Pick<CellPlan, "selfLoad">): string {
  const s = plan.selfLoad!;
  return `${s.collector}'s ${s.input} made the events: the harness sent no bytes`;
}
