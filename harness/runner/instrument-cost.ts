/**
 * What the instrument itself costs during a run, in one place: the harness's CPU and resident set over the
 * measurement samples (noteCost), its resident set after the load by stage (the after-load sampler), the sink's own
 * account of the samples, and the time of each step around the load (provision, prepare, completion checks, settling,
 * ledger, content check, teardown). run.json `instrument` (InstrumentRecord, harness/results/types.ts) is built from it
 * once teardown is timed (instrumentRecord); docs/design.md "What the instrument costs" says what each figure means.
 */
import type { StackSpec } from "../../core/limits.ts";
import type { LedgerPass, SinkCost } from "../../core/verifier.ts";
import type { InstrumentRecord, Phase, RunRecord } from "../results/types.ts";
import { appliedHostLimits } from "../results/caps.ts";
import { SINK } from "./site.ts";

/** How often the harness's resident set is sampled after the load, ms (cost.afterLoadRssMax). */
const AFTER_LOAD_RSS_MS = 1000;

/** Wall-clock time, ms (epoch, sub-ms). */
export const now = (): number => performance.timeOrigin + performance.now();

/** The harness's CPU (µs), time (ms) and resident set (bytes) at one sample. */
interface At {
  cpuUs: number;
  t: number;
  rss: number;
}

/** The instrument's own cost as it is measured (see instrumentRecord). */
export class InstrumentCost {
  /** harness CPU (µs) and time (ms) at the sample that opened the measurement, and at its latest sample */
  open: At | null = null;
  last: At | null = null;
  rssMax = 0;
  /** the harness's largest resident set after the load (sampled every AFTER_LOAD_RSS_MS until the ledger is done),
   *  the largest in each stage of it (by the run's stage), and the sampler */
  afterLoadRssMax = 0;
  afterLoadRssByStage: Record<string, number> = {};
  private afterLoadSampler: NodeJS.Timeout | undefined = undefined;
  samples = 0;
  sampleWallMs = 0;
  sink: SinkCost | null = null;
  provisionMs = 0;
  prepareMs = 0;
  upMs = 0;
  ledgerMs: number | null = null;
  fidelityMs: number | null = null;
  afterLoadMs: number | null = null;
  teardownMs = 0;
  /** after the load, before the ledger: the completion wait's missing-seq queries, the settling, the drain's full count */
  completionCheckMs: number | null = null;
  completionChecks = 0;
  completionCheckWalBytes: number | undefined = undefined;
  ledgerPass: LedgerPass | undefined = undefined;
  settledInCompletionPass = false;
  settleMs: number | null = null;
  finalCountMs: number | null = null;
  parts: Record<string, number> | undefined = undefined;

  /** @param stage the run's current stage (the after-load figures are kept by it) */
  constructor(private readonly stage: () => string) {}

  /** Whether the after-load sampler runs (from the end of the load until the ledger is done). */
  get sampling(): boolean {
    return this.afterLoadSampler !== undefined;
  }

  /**
   * After a sample of `phase` that took `wallMs`: the harness's CPU at the sample opening the measurement (the last
   * warmup one) and at the latest measurement sample; the measurement samples' count and wall time.
   */
  noteCost(phase: Phase, wallMs: number, rss: number): void {
    const u = process.cpuUsage();
    const at = { cpuUs: u.user + u.system, t: now(), rss };
    if (phase !== "measure") {
      if (this.last === null) this.open = at;
      return;
    }
    this.open ??= at;
    this.last = at;
    this.rssMax = Math.max(this.rssMax, this.open.rss, rss);
    this.samples++;
    this.sampleWallMs += wallMs;
  }

  /** One completion check that took `ms` (and wrote `walBytes` where the sink says). */
  noteCompletionCheck(ms: number, walBytes: number | undefined): void {
    this.completionCheckMs = (this.completionCheckMs ?? 0) + ms;
    this.completionChecks += 1;
    if (walBytes !== undefined) this.completionCheckWalBytes = (this.completionCheckWalBytes ?? 0) + walBytes;
  }

  /** One after-load sample of the harness's resident set: the largest so far, overall and in the current stage. */
  sampleAfterLoadRss(): void {
    const rss = process.memoryUsage.rss();
    const by = this.afterLoadRssByStage;
    const stage = this.stage();
    this.afterLoadRssMax = Math.max(this.afterLoadRssMax, rss);
    by[stage] = Math.max(by[stage] ?? 0, rss);
  }

  /** The load has ended: sample the resident set now and every AFTER_LOAD_RSS_MS until stopAfterLoadSampler. */
  startAfterLoadSampler(): void {
    this.sampleAfterLoadRss();
    this.afterLoadSampler = setInterval(() => this.sampleAfterLoadRss(), AFTER_LOAD_RSS_MS);
    this.afterLoadSampler.unref();
  }

  /** Take the last after-load resident-set sample and stop sampling (idempotent). */
  stopAfterLoadSampler(): void {
    if (this.afterLoadSampler === undefined) return;
    clearInterval(this.afterLoadSampler);
    this.afterLoadSampler = undefined;
    this.sampleAfterLoadRss();
  }

  /** run.json `instrument` (InstrumentRecord), once teardown is timed; null when no measurement sample was taken. */
  instrumentRecord(record: RunRecord, stack: StackSpec): InstrumentRecord | null {
    if (!this.open || !this.last || this.last.t <= this.open.t) return null;
    const measureSeconds = (this.last.t - this.open.t) / 1000;
    const cpuSeconds = (this.last.cpuUs - this.open.cpuUs) / 1e6;
    const cap = sinkCpuCap(record, stack);
    const sinkCapCores = cap ?? record.environment.cores;
    const useSink = this.sink !== null && this.sink.cpuMs !== null;
    const spentMs = useSink ? this.sink!.cpuMs! : this.sampleWallMs;
    return {
      measureSeconds,
      harness: { cpuSeconds, cores: cpuSeconds / measureSeconds, rss: this.rssRecord(this.open, this.last) },
      verifier: {
        samples: this.samples,
        sampleWallMs: this.sampleWallMs,
        sink: this.sink,
        sinkCapCores,
        sinkUncapped: cap === null,
        shareOfSinkCap: spentMs / 1000 / (measureSeconds * sinkCapCores),
        basis: useSink ? "sink cpu" : "sample wall time",
      },
      overhead: this.overhead(),
    };
  }

  private rssRecord(open: At, last: At): InstrumentRecord["harness"]["rss"] {
    return {
      openBytes: open.rss,
      lastBytes: last.rss,
      maxBytes: this.rssMax,
      ...(this.afterLoadRssMax > 0
        ? { afterLoadMaxBytes: this.afterLoadRssMax, afterLoadByStage: this.afterLoadRssByStage }
        : {}),
    };
  }

  private overhead(): InstrumentRecord["overhead"] {
    return {
      provisionAndSinkStartMs: this.provisionMs,
      prepareMs: this.prepareMs,
      collectorsAndGeneratorsUpMs: this.upMs,
      ledgerMs: this.ledgerMs,
      fidelityMs: this.fidelityMs,
      afterLoadMs: this.afterLoadMs,
      teardownMs: this.teardownMs,
      completionCheckMs: this.completionCheckMs,
      ...(this.completionChecks > 0 ? { completionChecks: this.completionChecks } : {}),
      settleMs: this.settleMs,
      finalCountMs: this.finalCountMs,
      ...(this.completionCheckWalBytes !== undefined
        ? { completionCheckWalBytes: this.completionCheckWalBytes }
        : {}),
      ...(this.ledgerPass !== undefined ? { ledgerPass: this.ledgerPass } : {}),
      ...(this.settledInCompletionPass ? { settledInCompletionPass: true } : {}),
      ...(this.parts ? { parts: this.parts } : {}),
    };
  }
}

/** The sink's CPU cap as applied, cores, or null when it has none below the machine's cores (docs/decisions/0008). */
export function sinkCpuCap(record: RunRecord, stack: StackSpec): number | null {
  const cpu = appliedHostLimits(record.limits[SINK], stack.hosts[SINK]?.limits ?? {}, record.environment).cpu;
  const cores = cpu ? cpu.quotaUs / cpu.periodUs : Infinity;
  return cores < record.environment.cores ? cores : null;
}
