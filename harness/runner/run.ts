/**
 * One run: one replicate of one cell on one stack. Where the components run is the run's site (./site.ts): the
 * local platform, provisioned per run (./local-site.ts, the default), or a deployed docker or azure stack
 * (harness/remote/site.ts); what is measured and how is the same on both.
 *
 * provision hosts ─▶ start sink ─▶ check versions ─▶ prepare schema ─▶ [start the collector with the sink as its
 * downstream, check its version] ─▶ start observer and generator (warmup, then measurement) ─▶ sample stored count
 * each interval ─▶ stop generator ─▶ drain until every acknowledged seq is stored or timeout (with a collector, this
 * is the wait for the collector to flush) ─▶ ledger [+ the collector's claimed counts] ─▶ content check
 * (./fidelity.ts) ─▶ summary ─▶ checks ─▶ teardown (always) ─▶ run.json. A scenario with a `query` phase runs it after the
 * completion wait (the table complete, the caps still on) and before the ledger (./query-load.ts); with `during: ingest`
 * (mixed mode) it runs from the end of the warmup until the load ends instead.
 *
 * Without a collector the topology is loadgen → sink (the generator writes to the sink's data endpoint). With one,
 * the stack needs a `collector` host (or `collector-1`, `collector-2`, … for a scale-out, as in write-up 000) and the
 * topology is loadgen → collector(s) → sink: one generator process per collector host (genIds 0..n-1, each at the
 * scenario's rate; with the generator's `processes: N`, N processes per host sharing that rate, ./generator-group.ts) writes to that collector's data endpoint, the collectors to the sink's; every collector host
 * must run the pinned version and all of them the same one; observers cover every host and the bottleneck
 * candidates include the collector hosts. The collectors' claimed counts (their own stats, summed over hosts) are
 * written beside the ledger as `collectorClaims`; the ledger itself is always what the sink stored.
 *
 * A fixed workload (generator `requests`: N batches, write-up 001's "batch × count") ends the load phase when every
 * generator is done; measuring then continues until the sink holds every acknowledged seq (or the drain timeout), so
 * its throughput is the workload over the time it took to store it (./completion.ts): the window ends at the sample
 * that first saw it complete, sampled every TIGHT_INTERVAL_MS near the end, or at a timeout at the last arrival (the
 * samples after it become "drain"), with the window error in run.json `completion.windowErrorMs`.
 *
 * An application under test (plan.app, the scenario's `app` and one of its `variants`: ./app-host.ts) runs in place of
 * the generator processes, on its host, its exporter aimed at the first entry point; its own figures are read when it
 * stops, its report is the ledger's one generator (sent = its seqs, accepted = sent − its drops), the drain is complete
 * once only its dropped seqs are missing, and the ledger must then have lost exactly its drops (run.json `app.ledger`;
 * otherwise E_APP_LEDGER).
 *
 * Run identity: the run's generators stamp gen = genBase + index (genBaseOf(runId), core/ledger.ts), the verifier
 * counts only this run's gens, and rows of another run are the ledger's `foreign`.
 *
 * Throughput counts distinct rows: when the ledger finds duplicates, `rowsPerSecond` is the stored-rows rate
 * scaled by distinct/stored and the raw rate is kept as `storedRowsPerSecond` — a collector that delivers a batch
 * twice must show up as duplicated rows, not as a faster pipeline.
 *
 * A run is an event emitter (after autocannon): "start" (RunRecord), "sink" ({ host, port, params }: where the
 * harness reaches the sink, once its schema exists), "collector" (RunningComponent, { host, downstream }: once it is
 * ready, with what restarting it would take), "tick" (SeriesPoint, { plan, loadEndS }), "query" (QueryProgress of a
 * query phase, ./query-load.ts), "done" (RunRecord).
 *
 * Fault steps (the scenario's `steps:`, ./steps.ts) fire from t0 on, through the site's StepTarget; while a step has
 * disturbed the sink, a failed count is retried (every SINK_RETRY_MS, up to the drain timeout) instead of failing the
 * run. At the end of the load no step fires any more, running ones are awaited and whatever a step froze is thawed,
 * so that the drain and the ledger say what the faults cost: run.json `timeline` and `faults` (./fault-cost.ts).
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { StackSpec } from "../../core/limits.ts";
import {
  ConfigurationError,
  IngestbenchError,
  interruptedError,
  ProvisioningError,
  untilAborted,
  VerificationError,
} from "../../core/errors.ts";
import type { GeneratorFinal, GeneratorProgress } from "../generators/types.ts";
import { RunWriter, runDir } from "../results/store.ts";
import type {
  CompletionRecord,
  InstrumentRecord,
  LockWait,
  Phase,
  RunRecord,
  SeriesPoint,
  Summary,
} from "../results/types.ts";
import { findSink } from "../../plugins/registry.ts";
import {
  completionOf,
  type Completion,
  type CountSample,
  type Ledger,
  type LedgerPass,
  type SinkCost,
  type Verifier,
} from "../../core/verifier.ts";
import { genBaseOf } from "../../core/ledger.ts";
import { storageOf, withLogBytes } from "./storage.ts";
import { awaitCompletion, nearEnd, TIGHT_INTERVAL_MS, windowEnd, type CompletionWait } from "./completion.ts";
import { evaluateChecks } from "./checks.ts";
import { expectContentSample, ledgerWithFidelity } from "./fidelity.ts";
import { environment, gitCommit } from "./environment.ts";
import {
  GeneratorGroup,
  mergeFinals,
  processesOf,
  splitConfig,
  takeReplayIndex,
  logBytesPerRowOf,
  type LoadGroup,
} from "./generator-group.ts";
import { AppRun, appLedger } from "./app-host.ts";
import { appBytes, generatorBlock } from "./app-bytes.ts";
import { DEFAULT_FIDELITY } from "../../core/fidelity.ts";
import { LocalSite } from "./local-site.ts";
import { LOADGEN, oomMessage, SINK, type OomKill, type RunSite } from "./site.ts";
import { QUERY_STAGE } from "./progress.ts";
import { computeSummary, logMibPerSec } from "./summary.ts";
import { stackCost } from "./cost.ts";
import { queryTotals, runQueryPhase } from "./query-load.ts";
import { DeliveryLatency, deliveryClock } from "./delivery.ts";
import { sinkCorrection } from "../generators/clock.ts";
import { saturationVerdict, verdictPoints, type BehindOffered } from "./saturation.ts";
import { runPressure } from "./collector-pressure.ts";
import { bottleneckLabel, WAIT_MS_PER_SEC } from "./bottleneck.ts";
import { appliedHostLimits, stackCapsFit } from "../results/caps.ts";
import { collectorHosts } from "./versions.ts";
import type { CellPlan } from "./cell-plan.ts";
import { StepRunner } from "./steps.ts";
import {
  CollectorLoad,
  inferredSent,
  selfLoadBytesUnknown,
  selfLoadFidelity,
  type Load,
} from "./self-load.ts";
import {
  dedupeExhaustion,
  EXHAUSTION_CODES,
  exhaustionIn,
  exhaustionMessage,
  exhaustionResource,
  type Exhaustion,
} from "./exhaustion.ts";
import { faultCosts } from "./fault-cost.ts";

export interface RunOptions {
  stack: StackSpec;
  plan: CellPlan;
  resultsRoot: string;
  invocation: string;
  /** aborting stops the run: what was measured is written with status "interrupted" */
  signal?: AbortSignal;
  /** the invocation's wait for the stack's lock before this run (./drive.ts lockStacks), kept in run.json */
  lockWait?: LockWait;
  /** project root (for the generator process and git commit) */
  projectRoot: string;
  /**
   * where the cell's components run; default: the local platform, provisioned for this run (LocalSite). A deployed
   * docker or azure stack passes its own (harness/remote/site.ts).
   */
  site?: (ctx: { runId: string; dir: string; events: EventEmitter }) => RunSite;
  /**
   * For tests only: awaited after the drain and before the ledger, with where the harness reaches the sink (e.g. to
   * inject faults at the sink that the ledger and the content check must find; test/e2e/fidelity-faults.test.ts).
   */
  beforeLedger?: (sink: { host: string; port: number; params: Record<string, string> }) => Promise<void>;
}

const MiB = 2 ** 20;
/** Retry interval of a count that failed while a step disturbed the sink, ms. */
const SINK_RETRY_MS = 250;
/** Generators whose load is HTTP requests (a bulk, a push, a batch): their runs report req/s beside rows/s. */
const REQUEST_GENERATORS = new Set(["http-json", "es-bulk", "loki-push", "griddb-webapi", "clickhouse-http"]);

/** How often the harness's resident set is sampled after the load, ms (cost.afterLoadRssMax). */
const AFTER_LOAD_RSS_MS = 1000;

/** Run ids sort by time: 20261129T201500Z-3f9a2c. */
export function newRunId(): string {
  const ts = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${ts}-${randomBytes(3).toString("hex")}`;
}

function errorKind(err: unknown): NonNullable<RunRecord["error"]>["kind"] {
  if (err instanceof ConfigurationError) return "configuration";
  if (err instanceof ProvisioningError) return "provisioning";
  if (err instanceof VerificationError) return "verification";
  return "run";
}

const now = (): number => performance.timeOrigin + performance.now();

/**
 * An error that is not an IngestbenchError as run.json keeps it: `message` one line, "<stage>: <first line>" plus,
 * for a failed command (execa's message: "Command failed with exit code N: cmd\n\n<stderr>"), the last line of
 * what it printed; `detail` the rest of the message and the stack, for --debug.
 */
export function unexpectedError(e: Error, stage: string): { message: string; detail: string } {
  const lines = e.message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0] ?? e.name;
  const last = lines.length > 1 ? lines[lines.length - 1]! : undefined;
  const tail = last && last.length <= 200 ? `: ${last}` : "";
  return { message: `${stage}: ${first}${tail}`, detail: e.stack ?? e.message };
}

export class BenchRun extends EventEmitter {
  readonly runId = newRunId();
  readonly dir: string;
  private record: RunRecord;
  private series: SeriesPoint[] = [];
  /** what the run was doing, for the message of an unexpected error and the after-load memory by stage */
  private stageName = "starting";
  private get stage(): string {
    return this.stageName;
  }
  /** a new stage: after the load, the resident set is sampled at the end of the old one and the start of the new one,
   *  so that a stage shorter than the sampling interval has its figure too */
  private set stage(next: string) {
    const sampling = this.cost.afterLoadSampler !== undefined;
    if (sampling) this.sampleAfterLoadRss();
    this.stageName = next;
    if (sampling) this.sampleAfterLoadRss();
    // the progress display's after-load stages (harness/runner/progress.ts stage())
    if (this.loadEnded) this.emit("stage", next);
  }
  /** the load has ended: each stage from then on is shown (the stage setter) */
  private loadEnded = false;
  private generators: LoadGroup | undefined;
  /** the collector's own load of a `generator: none` cell (./self-load.ts), else undefined */
  private selfLoad: CollectorLoad | undefined;
  /** the application under test, in place of the generators (plan.app; ./app-host.ts) */
  private app: AppRun | undefined;
  private generatorCount = 1;
  /** series points not yet written: a fixed workload's completion wait, whose phases are known at its end */
  private deferred: SeriesPoint[] | null = null;
  /** the scenario's fault steps, once the entries are up (null without steps) */
  private steps: StepRunner | null = null;
  /** per-window and run delivery latency (./delivery.ts) */
  private readonly delivery = new DeliveryLatency();
  private deliverySeen = false;
  /** the samples a verifier settles after the load (Verifier.afterLoad): the one before the load, then every point's */
  private readonly marks: Array<{
    point: SeriesPoint | null;
    mark: string;
    mid: number;
    tAfter: number;
    lagBase: number;
    bytesPerRow: number;
  }> = [];
  private deliveryUnavailable: string | undefined;
  /** the verifier's live samples are estimates settled after the load (Verifier.afterLoad); `settled`: that ran */
  private settles = { needed: false, done: false };
  /** when a fixed workload was all sent before its warmup ended: ms after t0 (Summary.shortWindow) */
  private doneInWarmupMs: number | undefined;
  /** the settling's own exact count of every row (SettledSamples.final), for a fixed workload's last point */
  private settledFinal: CountSample | undefined;
  /** point the verifier at the sink's endpoint as the site reads it now (a restart may move it); unset: it cannot move */
  private followSink: (() => Promise<void>) | undefined;
  /** the sink-vs-loadgen clock correction applied to delivery latency, or why none is (absent: one clock) */
  private deliveryCorrection: { correctionMs: number; boundMs: number } | { reason: string } | undefined;
  /** the instrument's own cost as it is measured (see instrumentRecord) */
  private readonly cost = {
    /** harness CPU (µs) and time (ms) at the sample that opened the measurement, and at its latest sample */
    open: null as { cpuUs: number; t: number; rss: number } | null,
    last: null as { cpuUs: number; t: number; rss: number } | null,
    rssMax: 0,
    /** the harness's largest resident set after the load (sampled every AFTER_LOAD_RSS_MS until the ledger is done),
     *  the largest in each stage of it (by this.stage), and the sampler */
    afterLoadRssMax: 0,
    afterLoadRssByStage: {} as Record<string, number>,
    afterLoadSampler: undefined as NodeJS.Timeout | undefined,
    samples: 0,
    sampleWallMs: 0,
    sink: null as SinkCost | null,
    provisionMs: 0,
    prepareMs: 0,
    upMs: 0,
    ledgerMs: null as number | null,
    fidelityMs: null as number | null,
    afterLoadMs: null as number | null,
    teardownMs: 0,
    /** after the load, before the ledger: the completion wait's missing-seq queries, the settling, the drain's full count */
    completionCheckMs: null as number | null,
    completionChecks: 0,
    completionCheckWalBytes: undefined as number | undefined,
    ledgerPass: undefined as LedgerPass | undefined,
    settledInCompletionPass: false,
    settleMs: null as number | null,
    finalCountMs: null as number | null,
    parts: undefined as Record<string, number> | undefined,
  };

  constructor(private readonly opts: RunOptions) {
    super();
    const { stack, plan } = opts;
    this.dir = runDir(opts.resultsRoot, stack.name, plan.scenario, this.runId);
    this.record = {
      status: "error",
      runId: this.runId,
      invocation: opts.invocation,
      stack: stack.name,
      platform: stack.platform,
      scenario: plan.scenario,
      scenarioFile: plan.scenarioFile,
      cell: plan.cell,
      replicate: plan.replicate,
      seed: plan.seed,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      ...(opts.lockWait ? { lockWait: opts.lockWait } : {}),
      commit: gitCommit(opts.projectRoot),
      environment: environment(),
      limits: {},
      versions: {},
      scenarioConfig: plan.scenarioConfig,
      summary: null,
      ledger: null,
      generator: null,
      checks: [],
      error: null,
    };
  }

  /** Run to the end. Resolves with the record in every case but a failure to write results. */
  async run(): Promise<RunRecord> {
    const { stack, plan } = this.opts;
    const ctx = { runId: this.runId, dir: this.dir, events: this as EventEmitter };
    const site: RunSite = this.opts.site
      ? this.opts.site(ctx)
      : new LocalSite({
          stack,
          plan,
          runId: this.runId.slice(-6),
          resultRecord: path.join(this.dir, "run.json"),
          events: this,
        });
    const verifierFactory = findSink(plan.sink.name)?.verifier;
    if (!verifierFactory)
      throw new ConfigurationError(
        "E_SINK",
        `scenario ${plan.scenario}: no verifier for sink "${plan.sink.name}"`,
        { field: "sink" },
      );
    const writer = new RunWriter(this.dir);
    await writer.open();
    await writer.writeRecord({ ...this.record, status: "running" });
    this.emit("start", this.record);

    let verifier: Verifier | undefined;
    let finals: GeneratorFinal[] | null = null;
    try {
      this.stage = "starting the sink";
      const tProvision = now();
      const sink = await site.startSink(this.opts.signal);
      this.cost.provisionMs = now() - tProvision;
      this.record.limits = site.limits;
      this.record.versions = site.versions;
      if (site.environment) this.record.environment = await site.environment();
      this.record.caps = stackCapsFit(stack, Object.keys(site.limits), this.record.environment);
      this.throwIfAborted();

      const params = { ...sink.params, table: sink.params.table ?? "ib_events" };
      const genBase = genBaseOf(this.runId);
      this.record.genBase = genBase;
      this.stage = "preparing the sink's table";
      verifier = verifierFactory.create({
        host: sink.control.host,
        port: sink.control.port,
        params,
        fields: plan.fields,
        genBase,
        seed: typeof plan.generator.config.seed === "number" ? plan.generator.config.seed : undefined,
      });
      const tPrepare = now();
      await verifier.prepare();
      this.cost.prepareMs = now() - tPrepare;
      const tUp = now();
      this.deliveryUnavailable = verifier.deliveryUnavailable;
      this.settles.needed = verifier.afterLoad !== undefined;
      // a fault that restarted the sink may have moved its published port (docker): the verifier follows it
      if (site.sinkControl && verifier.retarget) {
        let at = sink.control;
        const v = verifier;
        this.followSink = async () => {
          const next = await site.sinkControl!();
          if (next.host === at.host && next.port === at.port) return;
          v.retarget!(next);
          this.record.limits[SINK]?.notes.push(
            `the verifier followed the sink from ${at.host}:${at.port} to ${next.host}:${next.port} (its endpoint after a fault step)`,
          );
          at = next;
        };
      }
      this.emit("sink", { host: sink.control.host, port: sink.control.port, params, runDir: this.dir });

      // the collectors (between the generators and the sink) start once the table exists, with the sink downstream
      this.stage = "starting the collectors";
      const entries = await site.startEntries(
        { params, fields: plan.fields, ...(plan.selfLoad ? { genBase } : {}) },
        this.opts.signal,
      );
      this.throwIfAborted();
      if (plan.steps?.length) this.steps = new StepRunner(plan.steps, site.steps?.() ?? null);

      this.stage = "starting the observers";
      const observer = await site.observer();
      await observer.read();
      let prev = await verifier.sample();
      if (prev.mark !== undefined)
        this.marks.push({
          point: null,
          mark: prev.mark,
          mid: (prev.tBefore + prev.tAfter) / 2,
          tAfter: prev.tAfter,
          lagBase: prev.tAfter,
          bytesPerRow: 0,
        });

      this.stage = "starting the generators";
      const generatorsStartedMs = Date.now(); // a replay file modified after this is said to be (harness/runner/fidelity.ts)
      // an application under test runs in place of the generators, its exporter aimed at the first entry (./app-host.ts)
      const generators: LoadGroup = plan.app
        ? (this.app = this.startApp(site, entries[0]!, genBase))
        : plan.selfLoad
          ? this.collectorLoad(site, entries.length)
          : await this.generatorGroup(site, entries, params, genBase);
      this.generators = generators;
      this.generatorCount = plan.app ? 1 : entries.length;
      // t0 once every generator is up (node + tsx start in about a second): start-up is never measured as load
      await generators.ready(this.opts.signal);
      this.throwIfAborted();
      // the loadgen host's clock against ours, before any load (harness/generators/clock.ts); applied to every lag
      const clock = await generators.syncClock();
      this.record.clock = clock;
      // where the sink's clock is another machine's (azure), its offset too: their difference corrects delivery latency
      const sinkClock = await site.sinkClock?.();
      if (sinkClock) {
        this.record.sinkClock = sinkClock;
        const correction = sinkCorrection(sinkClock, clock);
        if (correction) this.delivery.correct(correction.correctionMs);
        this.deliveryCorrection = correction ?? {
          reason: `the ${sinkClock.measured ? "loadgen" : "sink"} host's clock offset was not measured (${sinkClock.measured ? (clock as { reason?: string }).reason : sinkClock.reason})`,
        };
      }
      generators.go();
      this.cost.upMs = now() - tUp;

      const t0 = now();
      const loadEnd = t0 + plan.warmupMs + plan.durationMs;
      this.steps?.start(t0, loadEnd);
      let bytesPerRow = 0;
      // `counted`: a count already taken (the settling's, SettledSamples.final) instead of the verifier's sample;
      // `full`: an exact count as it is taken (Verifier.sample), by default in the drain
      const tick = async (
        phase: Phase,
        counted?: CountSample,
        full = phase === "drain",
      ): Promise<CountSample> => {
        // the collectors' and the sink's own signals beside the host telemetry, before the count (./site.ts)
        const [obs, signals, sinkSignals] = await Promise.all([
          observer.read(),
          site.collectorSignals?.().catch(() => undefined),
          site.sinkSignals?.().catch(() => undefined),
        ]);
        const tSample = now();
        const s =
          counted ??
          (await this.sampleThroughFaults(() => verifier!.sample({ full, tag: phase }), plan.drainTimeoutMs));
        const harnessRssBytes = process.memoryUsage.rss();
        this.noteCost(phase, now() - tSample, harnessRssBytes);
        if (s.delivery) this.deliverySeen = true;

        await this.selfLoad?.refresh().catch(() => undefined);
        const delivery = s.delivery ? this.delivery.window(s.delivery, phase !== "warmup") : undefined;
        const mid = (s.tBefore + s.tAfter) / 2;
        const prevMid = (prev.tBefore + prev.tAfter) / 2;
        const rowsPerSec = mid > prevMid ? ((s.stored - prev.stored) * 1000) / (mid - prevMid) : null;
        const progress = generators.progress;
        if (progress.sent > 0) bytesPerRow = progress.bytes / progress.sent;
        const backlog = generators.backlog(s.stored, s.tAfter);
        const point: SeriesPoint = {
          t: mid,
          elapsedS: (mid - t0) / 1000,
          phase,
          stored: s.stored,
          countQueryMs: s.tAfter - s.tBefore,
          rowsPerSec,
          mibPerSec: rowsPerSec === null || plan.selfLoad ? null : (rowsPerSec * bytesPerRow) / MiB,
          logMibPerSec: logMibPerSec(rowsPerSec, generators.logBytesPerRowAt?.(s.tAfter)),
          lagMs: s.newestSentAtMs === null ? null : s.tAfter - (s.newestSentAtMs - clock.offsetMs),
          backlogRows: backlog?.rows ?? null,
          backlogLagMs: backlog?.ageMs ?? null,
          sent: progress.sent,
          accepted: progress.accepted,
          rejected: progress.rejected,
          hosts: obs?.hosts ?? {},
          ...(obs?.machine ? { machine: obs.machine } : {}),
          ...(delivery !== undefined ? { delivery } : {}),
          ...(signals ? { collector: signals } : {}),
          ...(sinkSignals ? { sink: sinkSignals } : {}),
          harnessRssBytes,
        };
        this.series.push(point);
        if (s.mark !== undefined)
          this.marks.push({
            point,
            mark: s.mark,
            mid,
            tAfter: s.tAfter,
            lagBase: s.tAfter + clock.offsetMs,
            bytesPerRow,
          });
        if (this.deferred) this.deferred.push(point);
        else writer.append(point);
        if (phase !== "drain") this.steps?.onSample(point);
        this.emit("tick", point, { plan, loadEndS: (loadEnd - t0) / 1000 });
        prev = s;
        return s;
      };

      // A fixed workload's points are written once its window end is known (samples after it become "drain").
      const workloadRows = fixedWorkloadRows(plan.generator.config, entries.length);
      if (typeof plan.generator.config.requests === "number") this.deferred = [];
      // The sample at t0 opens the measurement when there is no warmup.
      this.stage = "sampling the load";
      await tick("warmup");
      // Load phase: sample on a fixed cadence measured from t0 (a slow count shifts samples, never the cadence),
      // tightened near the end of a fixed workload. A fixed workload that is done ends the loop at once and is measured
      // on by the completion wait below (see the file comment).
      const allFinished = generators.whenFinished();
      // Mixed mode (query `during: ingest`, ./query-load.ts): the queries run from the end of the warmup until the
      // load ends, against the table as it grows; "{stored}" answers must be at least the latest count
      let loadOver = false;
      const mixed = plan.query?.during === "ingest" ? plan.query : undefined;
      // (and not before a count has seen rows stored: a statement's `rows` assumes a table that is not empty)
      const mixedRun = mixed
        ? (async () => {
            await sleep(Math.max(0, t0 + plan.warmupMs - now()), undefined, { signal: this.opts.signal });
            while (prev.stored === 0 && !loadOver)
              await sleep(TIGHT_INTERVAL_MS, undefined, { signal: this.opts.signal });
            if (loadOver) return undefined;
            return runQueryPhase({
              phase: mixed,
              sink: plan.sink.name,
              target: { host: sink.control.host, port: sink.control.port, params },
              tableRows: prev.stored,
              signal: this.opts.signal,
              stop: () => loadOver,
              storedNow: () => prev.stored,
              onProgress: (q) => this.emit("query", q),
            });
          })()
        : undefined;
      mixedRun?.catch(() => undefined); // awaited below; a rejection before then is not unhandled
      for (let k = 1; ; k++) {
        const cadence = t0 + k * plan.intervalMs;
        const near = workloadRows !== undefined && nearEnd(prev.stored, workloadRows, now() - t0);
        const due = near ? Math.min(cadence, now() + TIGHT_INTERVAL_MS) : cadence;
        if (due > loadEnd + 1 || generators.finished) break;
        await Promise.race([
          sleep(Math.max(0, due - now()), undefined, { signal: this.opts.signal }).catch(() => undefined),
          allFinished,
        ]);
        this.throwIfAborted();
        if (generators.finished) break;
        await tick(due - t0 <= plan.warmupMs ? "warmup" : "measure");
        if (near && due < cadence) k--; // a tightened sample does not use up a slot of the cadence
      }
      const workloadDone = generators.finished;
      if (workloadDone && now() - t0 < plan.warmupMs) this.doneInWarmupMs = now() - t0;
      // the collector's own load ends by itself: sample on (drain) until it has (./self-load.ts settled)
      if (this.selfLoad) {
        const until = now() + plan.drainTimeoutMs;
        while (!(await this.selfLoad.settled(prev.stored)) && now() < until) {
          await sleep(Math.min(plan.intervalMs, 250), undefined, { signal: this.opts.signal }).catch(
            () => undefined,
          );
          this.throwIfAborted();
          await tick("drain");
        }
      }
      loadOver = true;
      // the samples see the harness's memory until the drain; what comes after (the generators' final reports, the
      // completion check, the settling, the ledger and the content check) is sampled here
      // the steps' end is part of stopping the load: the first after-load figure is this stage's
      this.stage = "stopping the generators";
      this.sampleAfterLoadRss();
      this.cost.afterLoadSampler = setInterval(() => this.sampleAfterLoadRss(), AFTER_LOAD_RSS_MS);
      this.cost.afterLoadSampler.unref();
      this.loadEnded = true;
      this.emit("stage", this.stage);
      // no step fires after the load; running ones end, frozen hosts are thawed before the drain
      if (this.steps) this.record.timeline = await this.steps.finish();

      finals = await generators.stop();
      const replayIndex = takeReplayIndex(finals);
      if (mixedRun) {
        const q = await mixedRun.catch((err: unknown) => {
          this.throwIfAborted();
          throw err;
        });
        if (q) this.record.query = q;
      }
      const final = mergeFinals(finals);
      this.record.generator = final;
      if (finals.length > 1) this.record.generators = finals;
      if (final.errors.length > 0 && final.accepted === 0) {
        throw new IngestbenchError(
          "E_GENERATOR",
          `generator ${plan.generator.name} stored nothing: ${final.errors.slice(0, 3).join("; ")}`,
        );
      }

      // Completion: keep counting until the sink holds every seq it acknowledged, or the timeout passes. With a
      // collector this is the wait for it to flush its queue (accepted = what the collector's socket took in). A fixed
      // workload's wait is still its measurement; after a timed load it is the drain.
      const sentBy = finals.map((f) => f.sent);
      const rejectedBy = finals.map((f) => f.rejectedRanges);
      // an app's dropped records keep their seqs and are never stored: complete once only they are missing
      const drops = plan.app ? final.sent - final.accepted : 0;
      const completion = async (): Promise<Completion> => {
        const tCheck = now();
        // A full pass of the table, with the sink's CPU cap lifted where the site can, as for the other reads after
        // the load (when slow, it is as the first pass after the load: PostgreSQL's page images for hint bits, its
        // walBytes; docs/design.md "What the instrument costs"). It runs once the
        // count has reached what was acknowledged, after the sample that ends a fixed workload's window: an answer of
        // "complete" leaves the measurement as it was; after an incomplete one the rows still to come may have been
        // stored while the cap was off, which the sink's notes then say.
        // the samples' marks so far (no sample comes between the last check and the settling): a verifier may settle
        // them beside its check, in its snapshot (PostgreSQL), and the settling below then reads no table of its own
        const marks =
          this.settles.needed && this.marks.length > 0 ? this.marks.map((m) => m.mark) : undefined;
        const check = (): Promise<Completion> => completionOf(verifier!, sentBy, rejectedBy, marks);
        const raw = await (site.sinkUncapped
          ? site.sinkUncapped("the completion wait looked for missing seqs", check)
          : check());
        this.cost.completionCheckMs = (this.cost.completionCheckMs ?? 0) + now() - tCheck;
        this.cost.completionChecks += 1;
        if (raw.walBytes !== undefined)
          this.cost.completionCheckWalBytes = (this.cost.completionCheckWalBytes ?? 0) + raw.walBytes;
        const c = drops > 0 ? { ...raw, missing: Math.max(0, raw.missing - drops) } : raw;
        const notes = this.record.limits[SINK]?.notes;
        const incomplete =
          "the completion wait found seqs missing with the CPU cap lifted for its check: rows stored during that check were stored without the cap";
        if (
          c.missing > 0 &&
          site.sinkUncapped &&
          notes &&
          this.sinkCpuCap() !== null &&
          !notes.includes(incomplete)
        )
          notes.push(incomplete);
        return c;
      };
      // The drain after a timed load samples live where the verifier settles its samples after the load and its check
      // counts the rows itself (PostgreSQL: Verifier.liveCountLags, Completion.stored): an exact count would read
      // every row of the run under the sink's caps at each drain sample, while the completion check decides anyway
      // and the settling makes the drain's points exact. Elsewhere the drain counts exactly (ClickHouse's drain
      // samples also recount another run's late rows, which its live samples take from the first sample)
      const liveDrain = this.settles.needed && verifier.liveCountLags === true;
      const wait = async (phase: "measure" | "drain"): Promise<CompletionWait> =>
        awaitCompletion({
          tick: () => tick(phase, undefined, phase === "drain" && !liveDrain),
          completion,
          accepted: final.accepted,
          expected: expectedRows(final),
          previous: prev,
          intervalMs: phase === "measure" ? plan.intervalMs : Math.min(plan.intervalMs, 250),
          tighten: phase === "measure",
          // the drain's live count, which lags, is checked once it stands still; not a fixed workload's wait, which is
          // still its measurement: the check lifts the sink's cap, so it waits until the count says done
          checkWhenStill: phase === "drain" && liveDrain,
          timeoutMs: plan.drainTimeoutMs,
          checkAbort: () => this.throwIfAborted(),
          signal: this.opts.signal,
        });
      // the content check's sample is known now: the completion check's passes locate it, so that the ledger can take
      // the last of them rather than a pass of its own (plugins/sinks/postgres/verifier.ts ledger())
      if (!plan.selfLoad) expectContentSample(verifier, plan, sentBy, genBase);
      this.stage = "waiting for every acknowledged row";
      if (workloadDone) {
        const w = await wait("measure");
        // settled before the window's end is found from the points' counts (the last point is the last sample's)
        const settled = await this.settleAfterLoad(verifier, site);
        // the window ends at the first sample with the final count: later ones waited for rows that never came, or
        // only confirmed what an earlier one saw (drain, not measure)
        const first = this.series.findIndex((p) => p.phase === "measure");
        const points = first < 0 ? [] : this.series.slice(Math.max(0, first - 1));
        const finalStored =
          w.outcome === "complete"
            ? settled
              ? this.series.at(-1)!.stored
              : w.samples.at(-1)!.stored
            : Math.max(...points.map((p) => p.stored));
        const end = windowEnd(points, finalStored);
        points.forEach((p, i) => {
          if (i > Math.max(end.index, 1)) p.phase = "drain";
        });
        this.flushDeferred(writer);
        if (settled) await writer.rewriteSeries(this.series);
        this.record.completion = completionRecord(
          "workload",
          w,
          points[Math.max(end.index, 1)]?.t ?? null,
          end.windowErrorMs,
        );
        this.stage = "counting the last sample";
        const tCount = now();
        // the settling's pass counted every row in its snapshot (PostgreSQL): the last point takes that count
        // rather than reading every row again (at 322M rows a 100 s count(*))
        await tick("drain", this.settledFinal);
        this.cost.finalCountMs = now() - tCount;
      } else {
        this.flushDeferred(writer);
        this.record.completion = completionRecord("drain", await wait("drain"), null, null);
        if (await this.settleAfterLoad(verifier, site)) await writer.rewriteSeries(this.series);
        // rows committed after the drain's last sample, before the completion check's snapshot, are in no point: the
        // settling's count of every row in that snapshot (PostgreSQL) is the drain's last point, so that drainSeconds
        // ends at the latest where they were all stored
        if (this.settledFinal && this.settledFinal.stored > this.series.at(-1)!.stored)
          await tick("drain", this.settledFinal);
      }

      // The query phase (scenario `query`, ./query-load.ts): against the table the ingest filled, only once every
      // acknowledged seq is stored, and while the sink is still under its caps
      if (plan.query && plan.query.during !== "ingest") {
        if (this.record.completion?.outcome !== "complete") {
          throw new VerificationError(
            "E_QUERY_PREFILL",
            `the query phase needs the table complete: ${this.record.completion?.missing ?? "?"} acknowledged rows were still missing at the end of the wait`,
          );
        }
        // a fixed workload sets the table's size: one cut short by the duration leaves a smaller table than asked for
        if (workloadRows !== undefined && !workloadDone) {
          throw new VerificationError(
            "E_QUERY_PREFILL",
            `the query phase needs the fixed workload's ${workloadRows} rows: the load ended at ${this.opts.plan.durationMs / 1000} s with ${final.sent} sent; raise duration`,
          );
        }
        this.stage = QUERY_STAGE;
        this.record.query = await runQueryPhase({
          phase: plan.query,
          sink: plan.sink.name,
          target: { host: sink.control.host, port: sink.control.port, params },
          tableRows: prev.stored,
          signal: this.opts.signal,
          onProgress: (q) => this.emit("query", q),
        });
      }

      // what the measurement's samples cost the sink, by its own account (before the ledger's queries)
      this.cost.sink = (await verifier.sinkCost?.("measure").catch(() => null)) ?? null;
      // What the collectors claim they received and wrote, beside the ledger (a dead collector's error is kept instead).
      this.stage = "counting the ledger";
      const claims = await site.collectorClaims();
      if (claims) this.record.collectorClaims = claims;
      if (this.steps?.disturbed(SINK)) await this.followSink?.().catch(() => undefined);
      // The measurement is over (e.g. the local sink's CPU cap is lifted for the ledger queries)
      for (const [host, notes] of Object.entries(await site.endMeasurement()))
        this.record.limits[host]?.notes.push(...notes);
      await this.opts.beforeLedger?.({ host: sink.control.host, port: sink.control.port, params });
      const sentPerGen = finals.map((f) => f.sent);
      const rejectedPerGen = finals.map((f) => f.rejectedRanges);
      let ledger: Ledger;
      if (plan.selfLoad) {
        const tLedger = now();
        ledger = await untilAborted(verifier.ledger(sentPerGen, rejectedPerGen), this.opts.signal);
        this.cost.ledgerMs = this.cost.afterLoadMs = now() - tLedger;
        ledger.inferred = inferredSent(plan, sentPerGen, ledger);
        ledger.fidelity = selfLoadFidelity(plan);
      } else {
        // Ctrl-C does not wait for the reads (PostgreSQL's CREATE INDEX over a soak's 18M rows)
        const done = await untilAborted(
          ledgerWithFidelity(verifier, plan, sentPerGen, rejectedPerGen, {
            genBase,
            signal: this.opts.signal,
            replayIndex,
            generatorsStartedMs,
          }),
          this.opts.signal,
        );
        ledger = done.ledger;
        Object.assign(this.cost, done.times);
      }
      this.cost.ledgerPass = verifier.ledgerPass;
      this.stopAfterLoadSampler();
      this.record.ledger = ledger;
      this.record.storage = await storageOf(verifier, ledger.distinct);
      if (this.record.timeline)
        this.record.faults = faultCosts(this.record.timeline, this.series, ledger, this.generatorCount);
      this.record.summary = this.summarize(
        final.sent > 0 ? final.bytes / (final.sent + (final.repeated ?? 0)) : 0,
        ledger,
      );
      this.record.storage = withLogBytes(this.record.storage, this.record.summary);
      if (
        this.record.summary &&
        REQUEST_GENERATORS.has(plan.generator.name) &&
        final.requests > 0 &&
        final.sent > 0
      ) {
        const rowsPerRequest = (final.sent + (final.repeated ?? 0)) / final.requests;
        this.record.summary.requestsPerSecond = this.record.summary.rowsPerSecond / rowsPerRequest;
      }
      if (this.app) {
        const figures = this.app.figures!.figures;
        const bytes = await appBytes({
          figures,
          reader: verifier.rows,
          sent: final.sent,
          stored: ledger.distinct,
          limit: (plan.fidelity ?? DEFAULT_FIDELITY).all,
          encoding: {
            protocol: plan.generator.name,
            config: plan.generator.config,
            fields: plan.fields,
            seed: plan.seed ?? 1,
            gen: genBase,
          },
        });
        this.record.app = {
          ...this.app.info,
          ...this.app.figures!,
          cpuCores: meanCpuByHost(this.series),
          ledger: { ...appLedger(figures, ledger), bytes },
        };
      }
      this.record.checks = evaluateChecks(plan.checks, {
        ledger,
        summary: this.record.summary,
        generator: final,
        query: queryTotals(this.record.query),
        app: this.record.app,
      });
      this.record.status = this.record.checks.every((c) => c.ok) ? "ok" : "failed";
      const agree = this.record.app?.ledger;
      if (agree && !agree.agrees) {
        throw new VerificationError(
          "E_APP_LEDGER",
          `the sink's ledger disagrees with the app: it reports ${agree.sent} sent and ${agree.dropped} dropped, so ${agree.expected} should be stored; the sink holds ${agree.stored} distinct and lost ${agree.lost} (${agree.unaccounted > 0 ? `${agree.unaccounted} lost in the pipeline beyond the app's drops` : `${-agree.unaccounted} reported dropped yet stored`}; ledger.missingRanges)`,
        );
      }
    } catch (err) {
      this.record.status = this.opts.signal?.aborted ? "interrupted" : "error";
      const e = err as Error & { code?: string };
      this.record.error = { code: e.code ?? "E_UNEXPECTED", kind: errorKind(err), message: e.message };
      // a step cut short by the signal fails with its own code (e.g. E_PG_ABORTED): the run's is the interruption
      if (this.opts.signal?.aborted && e.code !== "E_INTERRUPTED") {
        this.record.error = {
          code: "E_INTERRUPTED",
          kind: "run",
          message: `interrupted (${String(this.opts.signal.reason ?? "signal")}) during: ${e.message}`,
        };
      }
      // a bug or a failed command (an ExecaError): one line naming what failed and when; its whole text and stack are
      // kept beside it (printed with --debug, harness/runner/drive.ts)
      if (!(err instanceof IngestbenchError) && !this.opts.signal?.aborted)
        this.record.error = { ...this.record.error, ...unexpectedError(e, this.stage) };
    } finally {
      this.stopAfterLoadSampler();
      this.stage = "tearing down";
      // an interrupted or failed run still gets the summary of what it measured, when it measured enough
      if (!this.record.summary && this.series.filter((p) => p.phase === "measure").length >= 2) {
        try {
          const p = this.generators?.progress;
          this.record.summary = this.summarize(p && p.sent > 0 ? p.bytes / (p.sent + (p.repeated ?? 0)) : 0);
        } catch {
          // nothing to summarise: the series is still written
        }
      }
      this.flushDeferred(writer);
      const errors: string[] = [];
      const attempt = async (what: string, f: () => Promise<unknown>): Promise<void> => {
        try {
          await f();
        } catch (e) {
          errors.push(`${what}: ${(e as Error).message}`);
        }
      };
      if (this.steps && !this.record.timeline)
        await attempt("steps", async () => {
          this.record.timeline = await this.steps!.finish();
        });
      if (this.generators && !finals) {
        await attempt("generator", async () => {
          const stopped = await this.generators!.stop();
          takeReplayIndex(stopped); // not for the record
          this.record.generator = mergeFinals(stopped);
        });
      }
      if (site.oomKills && this.record.status !== "interrupted")
        await attempt("OOM check", async () => this.reportOom(await site.oomKills!()));
      if (this.record.status !== "interrupted")
        await attempt("exhaustion check", async () =>
          this.reportExhaustion(await (site.exhaustion?.() ?? Promise.resolve([]))),
        );
      if (verifier) await attempt("verifier", () => verifier!.close());
      const tTeardown = now();
      errors.push(...(await site.teardown()));
      this.cost.teardownMs = now() - tTeardown;
      this.cost.parts = site.overheadParts?.();
      const instrument = this.instrumentRecord();
      if (instrument) this.record.instrument = instrument;
      if (errors.length) {
        this.record.error ??= { code: "E_TEARDOWN", kind: "provisioning", message: "" };
        this.record.error.message = [this.record.error.message, ...errors].filter(Boolean).join("\n");
        if (this.record.status === "ok") this.record.status = "error";
      }
      this.record.finishedAt = new Date().toISOString();
      await writer.close();
      await writer.writeRecord(this.record);
    }
    this.emit("done", this.record);
    return this.record;
  }

  /** The collector's own load (`generator: none`), read through the site (./self-load.ts). */
  private collectorLoad(site: RunSite, hosts: number): CollectorLoad {
    const s = this.opts.plan.selfLoad!;
    if (!site.selfLoadCounts) {
      throw new ConfigurationError(
        "E_GENERATOR_NONE",
        `scenario ${this.opts.plan.scenario}: generator: none runs on the local platform only (this site cannot read ${s.collector}'s own count of the events it made)`,
        { field: "generator" },
      );
    }
    const reason = `no generator process: ${s.collector}'s ${s.input} stamps sent_at with the collector host's clock (generator: none)`;
    this.selfLoad = new CollectorLoad(
      () => site.selfLoadCounts!(),
      hosts * s.generatorsPerHost,
      s.quietMs,
      reason,
    );
    return this.selfLoad;
  }

  /** The generator processes on the loadgen host, `processes` per entry point (./generator-group.ts). */
  private async generatorGroup(
    site: RunSite,
    entries: ReadonlyArray<{ host: string; port: number }>,
    params: Record<string, string>,
    genBase: number,
  ): Promise<GeneratorGroup> {
    const { plan } = this.opts;
    const loadgen = await site.loadgen(plan.replayFile);
    // `processes` per entry point share its load (generator-group.ts splitConfig); entry e's are genIds e·n .. e·n+n-1
    const perEntry = processesOf(plan.generator.config);
    const configs = splitConfig(plan.generator.config, perEntry);
    return new GeneratorGroup(
      loadgen.spawn,
      entries.length * perEntry,
      (genId) => {
        const entry = entries[Math.floor(genId / perEntry)]!;
        return {
          name: plan.generator.name,
          config: configs[genId % perEntry]!,
          ctx: {
            target: { host: entry.host, port: entry.port, params },
            fields: plan.fields,
            genId,
            genBase,
            replayFile: loadgen.replayFile,
          },
          projectRoot: this.opts.projectRoot,
          clockSync: true,
        };
      },
      loadgen.program,
    );
  }

  /**
   * Start the application under test (plan.app) on its host, its exporter aimed at `entry` (./app-host.ts).
   * @throws ConfigurationError E_APP_NOT_RUNNABLE when the site has no application host (a deployed stack)
   */
  private startApp(site: RunSite, entry: { host: string; port: number }, genBase: number): AppRun {
    const { plan } = this.opts;
    const app = plan.app!;
    if (!site.appHost)
      throw new ConfigurationError(
        "E_APP_NOT_RUNNABLE",
        `scenario ${plan.scenario}: an application under test runs on local stacks only (this stack is ${this.opts.stack.platform})`,
        { field: "app" },
      );
    const host = site.appHost(app.spec.host);
    return new AppRun({
      plan: app,
      spawn: host.spawn,
      controlAddress: host.controlAddress,
      cwd: this.opts.projectRoot,
      exporterEnv: {
        INGESTBENCH_TARGET: `${entry.host}:${entry.port}`,
        INGESTBENCH_PROTOCOL: plan.generator.name,
        INGESTBENCH_GEN: String(genBase),
        INGESTBENCH_SEED: String(plan.seed ?? 1),
        INGESTBENCH_FIELDS: JSON.stringify(plan.fields),
        INGESTBENCH_WARMUP_MS: String(plan.warmupMs),
        // the protocol's block (defaults filled in): how the exporter frames records (tag, APP-NAME, …: ./app-bytes.ts)
        INGESTBENCH_GENERATOR: JSON.stringify(generatorBlock(plan.generator.name, plan.generator.config)),
      },
    });
  }

  /**
   * After a sample of `phase` that took `wallMs`: the harness's CPU at the sample opening the measurement (the last
   * warmup one) and at the latest measurement sample; the measurement samples' count and wall time.
   */
  private noteCost(phase: Phase, wallMs: number, rss: number): void {
    const u = process.cpuUsage();
    const at = { cpuUs: u.user + u.system, t: now(), rss };
    if (phase !== "measure") {
      if (this.cost.last === null) this.cost.open = at;
      return;
    }
    this.cost.open ??= at;
    this.cost.last = at;
    this.cost.rssMax = Math.max(this.cost.rssMax, this.cost.open.rss, rss);
    this.cost.samples++;
    this.cost.sampleWallMs += wallMs;
  }

  /**
   * Settle the samples after the load (Verifier.afterLoad, for a verifier whose live samples are cheap estimates):
   * every point with a mark gets the verifier's exact stored count (and from it rows/s, MiB/s and the backlog, as the
   * tick computes them), newest sent_at (the lag) and delivery window; rows that arrived after the last sample count
   * in the run's delivery figure only. Runs once the load and its completion wait are over (the window is measured,
   * so the queries burden none of it), with the sink's CPU cap lifted where the site can (RunSite.sinkUncapped: over
   * 18M rows the settling query ran 7 min under a quarter-core cap); the caller rewrites series.jsonl. Returns
   * whether anything was settled.
   */
  private async settleAfterLoad(verifier: Verifier, site: RunSite): Promise<boolean> {
    if (!verifier.afterLoad || this.marks.length === 0) return false;
    this.stage = "settling the samples";
    const settle = () => untilAborted(verifier.afterLoad!(this.marks.map((m) => m.mark)), this.opts.signal);
    const tSettle = now();
    const settled = await (site.sinkUncapped
      ? site.sinkUncapped("the samples were settled after the load", settle)
      : settle());
    this.cost.settleMs = now() - tSettle;
    if (settled.fromCompletionPass) this.cost.settledInCompletionPass = true;
    this.settles.done = true;
    this.settledFinal = settled.final;
    let prev: { stored: number; mid: number } | null = null;
    this.marks.forEach((m, i) => {
      const s = settled.samples[i];
      const p = m.point;
      if (p && s) {
        if (s.stored !== undefined) {
          p.stored = s.stored;
          p.rowsPerSec =
            prev && m.mid > prev.mid ? ((s.stored - prev.stored) * 1000) / (m.mid - prev.mid) : null;
          p.mibPerSec =
            p.rowsPerSec === null || this.opts.plan.selfLoad ? null : (p.rowsPerSec * m.bytesPerRow) / MiB; // no bytes sent by the harness: unknown, not 0
          p.logMibPerSec = logMibPerSec(p.rowsPerSec, this.generators?.logBytesPerRowAt?.(m.tAfter));
          const backlog = this.generators?.backlog(s.stored, m.tAfter);
          p.backlogRows = backlog?.rows ?? null;
          p.backlogLagMs = backlog?.ageMs ?? null;
        }
        if (s.newestSentAtMs !== undefined)
          p.lagMs = s.newestSentAtMs === null ? null : m.lagBase - s.newestSentAtMs;
        if (s.delivery && p.delivery === undefined) {
          this.deliverySeen = true;
          const d = this.delivery.window(s.delivery, p.phase !== "warmup");
          if (d) p.delivery = d;
        }
      }
      prev = { stored: p?.stored ?? s?.stored ?? 0, mid: m.mid };
    });
    if (settled.later) {
      this.deliverySeen = true;
      this.delivery.window(settled.later, true);
    }
    return true;
  }

  /** One after-load sample of the harness's resident set: the largest so far, overall and in the current stage. */
  private sampleAfterLoadRss(): void {
    const rss = process.memoryUsage.rss();
    const by = this.cost.afterLoadRssByStage;
    this.cost.afterLoadRssMax = Math.max(this.cost.afterLoadRssMax, rss);
    by[this.stage] = Math.max(by[this.stage] ?? 0, rss);
  }

  /** Take the last after-load resident-set sample and stop sampling (idempotent). */
  private stopAfterLoadSampler(): void {
    if (this.cost.afterLoadSampler === undefined) return;
    clearInterval(this.cost.afterLoadSampler);
    this.cost.afterLoadSampler = undefined;
    this.sampleAfterLoadRss();
  }

  /** The sink's CPU cap as applied, cores, or null when it has none below the machine's cores (docs/decisions/0008). */
  private sinkCpuCap(): number | null {
    const cpu = appliedHostLimits(
      this.record.limits[SINK],
      this.opts.stack.hosts[SINK]?.limits ?? {},
      this.record.environment,
    ).cpu;
    const cores = cpu ? cpu.quotaUs / cpu.periodUs : Infinity;
    return cores < this.record.environment.cores ? cores : null;
  }

  /** run.json `instrument` (InstrumentRecord), once teardown is timed; null when no measurement sample was taken. */
  private instrumentRecord(): InstrumentRecord | null {
    const c = this.cost;
    if (!c.open || !c.last || c.last.t <= c.open.t) return null;
    const measureSeconds = (c.last.t - c.open.t) / 1000;
    const cpuSeconds = (c.last.cpuUs - c.open.cpuUs) / 1e6;
    const cap = this.sinkCpuCap();
    const sinkCapCores = cap ?? this.record.environment.cores;
    const sinkUncapped = cap === null;
    const useSink = c.sink !== null && c.sink.cpuMs !== null;
    const spentMs = useSink ? c.sink!.cpuMs! : c.sampleWallMs;
    return {
      measureSeconds,
      harness: {
        cpuSeconds,
        cores: cpuSeconds / measureSeconds,
        rss: {
          openBytes: c.open.rss,
          lastBytes: c.last.rss,
          maxBytes: c.rssMax,
          ...(c.afterLoadRssMax > 0
            ? { afterLoadMaxBytes: c.afterLoadRssMax, afterLoadByStage: c.afterLoadRssByStage }
            : {}),
        },
      },
      verifier: {
        samples: c.samples,
        sampleWallMs: c.sampleWallMs,
        sink: c.sink,
        sinkCapCores,
        sinkUncapped,
        shareOfSinkCap: spentMs / 1000 / (measureSeconds * sinkCapCores),
        basis: useSink ? "sink cpu" : "sample wall time",
      },
      overhead: {
        provisionAndSinkStartMs: c.provisionMs,
        prepareMs: c.prepareMs,
        collectorsAndGeneratorsUpMs: c.upMs,
        ledgerMs: c.ledgerMs,
        fidelityMs: c.fidelityMs,
        afterLoadMs: c.afterLoadMs,
        teardownMs: c.teardownMs,
        completionCheckMs: c.completionCheckMs,
        ...(c.completionChecks > 0 ? { completionChecks: c.completionChecks } : {}),
        settleMs: c.settleMs,
        finalCountMs: c.finalCountMs,
        ...(c.completionCheckWalBytes !== undefined
          ? { completionCheckWalBytes: c.completionCheckWalBytes }
          : {}),
        ...(c.ledgerPass !== undefined ? { ledgerPass: c.ledgerPass } : {}),
        ...(c.settledInCompletionPass ? { settledInCompletionPass: true } : {}),
        ...(c.parts ? { parts: c.parts } : {}),
      },
    };
  }

  private summarize(bytesPerRow: number, ledger?: Ledger): Summary {
    const summary = this.computeSummary(bytesPerRow, ledger);
    // a run that ended (Ctrl-C, an error) before its samples were settled keeps the live estimates: said so
    const unsettled = this.settles.needed && !this.settles.done;
    if (unsettled)
      summary.estimated =
        "live estimates: the run ended before its samples were settled (the counts and rows/s of series.jsonl are the live ones; no delivery windows were read)";
    // only when the window's opening sample (the warmup's last) had already stored some of the workload: else the
    // window holds all of it
    const first = this.series.findIndex((p) => p.phase === "measure");
    const opening = first > 0 ? this.series[first - 1] : undefined;
    if (this.doneInWarmupMs !== undefined && opening !== undefined && opening.stored > 0) {
      summary.shortWindow = `the fixed workload was all sent ${(this.doneInWarmupMs / 1000).toFixed(1)} s after the start, inside the ${(this.opts.plan.warmupMs / 1000).toFixed(1)} s warmup: the window is only from the warmup's last sample (${opening.stored} rows already stored) to the end, not the whole workload (set warmup: 0s, or raise requests)`;
    }
    summary.deliveryLatency = this.deliverySeen
      ? this.delivery.summary(deliveryClock(this.opts.stack.platform, this.deliveryCorrection))
      : {
          unavailable: unsettled
            ? "not read: the run ended before the samples were settled (the delivery windows are read after the load)"
            : (this.deliveryUnavailable ??
              `the ${this.opts.plan.sink.name} verifier reads no stored-at time`),
        };
    const measure = this.series.filter((p) => p.phase === "measure");
    const pressure = runPressure(measure, this.opts.plan.sink.name);
    summary.saturation = saturationVerdict(verdictPoints(measure), {
      ...behindOffered(summary, measure, offeredRate(this.opts.plan.generator.config, this.generatorCount)),
      ...(pressure ? { pressure } : {}),
    });
    summary.cost = stackCost(this.series, summary, this.opts.stack.hosts);
    return summary;
  }

  private computeSummary(bytesPerRow: number, ledger?: Ledger): Summary {
    const { stack } = this.opts;
    return computeSummary({
      series: this.series,
      bytesPerRow,
      logBytesPerRow: logBytesPerRowOf(this.generators?.progress),
      ...(this.opts.plan.selfLoad ? { bytesUnknown: selfLoadBytesUnknown(this.opts.plan) } : {}),
      // scored against what was applied and read back, caps at or above the machine dropped (caps.ts appliedHostLimits)
      limits: Object.fromEntries(
        Object.entries(stack.hosts).map(([n, h]) => [
          n,
          appliedHostLimits(this.record.limits[n], h.limits, this.record.environment),
        ]),
      ),
      sinkHosts: this.opts.plan.collector ? [...collectorHosts(Object.keys(stack.hosts)), SINK] : [SINK],
      clientHost: LOADGEN,
      machineCores: this.record.environment.cores,
      distinctShare: ledger && ledger.stored > 0 ? ledger.distinct / ledger.stored : undefined,
      offeredPerSec: offeredRate(this.opts.plan.generator.config, this.generatorCount),
    });
  }

  /** Write the series points held back while a fixed workload's window end was open. */
  private flushDeferred(writer: RunWriter): void {
    for (const p of this.deferred ?? []) writer.append(p);
    this.deferred = null;
  }

  /**
   * A container the kernel OOM-killed under its memory cap is the run's error (E_OOM_KILLED, naming host, cap and
   * sources) and its bottleneck (memory, score 1), never an unexplained loss; an error it caused (a dropped
   * connection, a short ledger) is kept in the message after it.
   */
  private reportOom(kills: OomKill[]): void {
    if (kills.length === 0) return;
    const message = oomMessage(kills);
    const prior = this.record.error;
    this.record.error = {
      code: "E_OOM_KILLED",
      kind: "run",
      message: prior ? `${message}\nthen: ${prior.code}: ${prior.message}` : message,
    };
    this.record.status = "error";
    const k = kills.find((x) => x.host === SINK) ?? kills[0]!;
    if (this.record.summary) {
      const b = this.record.summary.bottleneck;
      const evidence = `OOM-killed under its memory cap: ${k.evidence}`;
      this.record.summary.bottleneck = {
        resource: "memory",
        host: k.host,
        score: 1,
        evidence,
        candidates: [{ resource: "memory", host: k.host, score: 1, evidence }, ...b.candidates],
      };
    }
  }

  /**
   * Resource exhaustion (./exhaustion.ts) the site read in its hosts' logs, and what the generators' errors and the
   * run's error say (a generator's EADDRNOTAVAIL, the sink's ENOSPC answered to a client), is recorded as run.json
   * `exhaustion` and becomes the run's error (E_DISK_FULL, E_PORTS_EXHAUSTED, E_BUFFER_OVERFLOW) and its bottleneck
   * (disk, network, memory on that host, score 1), never an unexplained loss; an error before it (an OOM kill, a
   * failed request) is kept after it in the message.
   */
  private reportExhaustion(fromSite: Exhaustion[]): void {
    const r = this.record;
    const texts = [
      ...(r.generator?.errors ?? []).map((text, i) => ({ source: `generator error ${i + 1}`, text })),
      ...(r.error ? [{ source: `the run's error (${r.error.code})`, text: r.error.message }] : []),
    ];
    // a generator's (or the run's) ENOSPC is the answer of the host it writes to; its EADDRNOTAVAIL its own ports
    const entry = this.opts.plan.collector
      ? (collectorHosts(Object.keys(this.opts.stack.hosts))[0] ?? "collector")
      : SINK;
    const fromTexts = exhaustionIn(LOADGEN, texts).map((e) =>
      e.kind === "ports" ? e : { ...e, host: entry },
    );
    const found = dedupeExhaustion([...fromSite, ...fromTexts]);
    if (found.length === 0) return;
    r.exhaustion = found;
    const first = found[0]!;
    const prior = r.error;
    const message = exhaustionMessage(found);
    r.error = {
      code: EXHAUSTION_CODES[first.kind],
      kind: "run",
      message: prior ? `${message}\nthen: ${prior.code}: ${prior.message}` : message,
    };
    r.status = "error";
    if (r.summary) {
      const b = r.summary.bottleneck;
      const resource = exhaustionResource(first.kind);
      const evidence = `${first.kind}: ${first.source}: ${first.line}${first.evidence ? ` (${first.evidence})` : ""}`;
      r.summary.bottleneck = {
        resource,
        host: first.host,
        score: 1,
        evidence,
        candidates: [{ resource, host: first.host, score: 1, evidence }, ...b.candidates],
      };
    }
  }

  /**
   * A count through faults: while a step has disturbed the sink (killed, stopped, restarted, reshaped), a failed count
   * is retried every SINK_RETRY_MS for up to `budgetMs`, the verifier pointed at the sink's endpoint as the site
   * reads it now before each retry (followSink); otherwise, and after that, it fails as it would.
   */
  private async sampleThroughFaults<T>(sample: () => Promise<T>, budgetMs: number): Promise<T> {
    const until = now() + Math.max(budgetMs, 10_000);
    for (;;) {
      try {
        return await sample();
      } catch (err) {
        if (!this.steps?.disturbed(SINK) || now() > until || this.opts.signal?.aborted) throw err;
        // the sink may answer elsewhere now (a restarted container's new published port)
        await this.followSink?.().catch(() => undefined);
        await sleep(SINK_RETRY_MS);
      }
    }
  }

  private throwIfAborted(): void {
    if (this.opts.signal?.aborted) throw interruptedError(this.opts.signal);
  }
}

/** Mean CPU per host over the measured window's points (every point when none is "measure"), cores. */
export function meanCpuByHost(series: readonly SeriesPoint[]): Record<string, number> {
  const measured = series.filter((p) => p.phase === "measure");
  const points = measured.length ? measured : series;
  const sums: Record<string, { total: number; n: number }> = {};
  for (const p of points) {
    for (const [h, w] of Object.entries(p.hosts)) {
      const s = (sums[h] ??= { total: 0, n: 0 });
      s.total += w.cpuCores;
      s.n++;
    }
  }
  return Object.fromEntries(Object.entries(sums).map(([h, s]) => [h, s.total / s.n]));
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

/** Rows a fixed workload sends in total: `requests` × `batch` per generator, when the config has both; else undefined. */
function fixedWorkloadRows(config: Record<string, unknown>, n: number): number | undefined {
  return typeof config.requests === "number" && typeof config.batch === "number"
    ? config.requests * config.batch * n
    : undefined;
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
