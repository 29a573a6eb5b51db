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
 *
 * The run is a list of phases (./phases/), each a function of the run's context (./phases/context.ts) and what the
 * phase before it handed on: start (sink, verifier, entries, observers, the load) → measure (the samples) → complete
 * (stop the load, wait for every acknowledged row; settle the samples) → query → ledger (and the verdict) → teardown
 * (always). The load is one interface (./load.ts) for the generator processes, an application under test and
 * `generator: none` (./loads.ts picks it); the instrument's own cost is ./instrument-cost.ts.
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import path from "node:path";
import type { StackSpec } from "../../core/limits.ts";
import { ConfigurationError } from "../../core/errors.ts";
import type { VerifierFactory } from "../../core/verifier.ts";
import { RunWriter, runDir } from "../results/store.ts";
import type { LockWait, RunRecord } from "../results/types.ts";
import { findSink } from "../../plugins/registry.ts";
import { environment, gitCommit } from "./environment.ts";
import { LocalSite } from "./local-site.ts";
import type { RunSite } from "./site.ts";
import type { CellPlan } from "./cell-plan.ts";
import type { RunOptions } from "./run-options.ts";
import { RunContext } from "./phases/context.ts";
import { startPhase } from "./phases/start.ts";
import { measurePhase } from "./phases/measure.ts";
import { completePhase, stopLoad } from "./phases/complete.ts";
import { afterIngestQueries } from "./phases/query.ts";
import { ledgerPhase, verdictPhase } from "./phases/ledger.ts";
import { recordFailure, teardownPhase } from "./phases/teardown.ts";

export { unexpectedError } from "./phases/teardown.ts";
export type { RunOptions } from "./run-options.ts";

/** Run ids sort by time: 20261129T201500Z-3f9a2c. */
export function newRunId(): string {
  const ts = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${ts}-${randomBytes(3).toString("hex")}`;
}

export class BenchRun extends EventEmitter {
  readonly runId = newRunId();
  readonly dir: string;
  private readonly record: RunRecord;

  constructor(private readonly opts: RunOptions) {
    super();
    this.dir = runDir(opts.resultsRoot, opts.stack.name, opts.plan.scenario, this.runId);
    this.record = initialRecord(this.runId, opts);
  }

  /** Run to the end. Resolves with the record in every case but a failure to write results. */
  async run(): Promise<RunRecord> {
    const verifiers = verifierFactory(this.opts.plan);
    const writer = new RunWriter(this.dir);
    await writer.open();
    await writer.writeRecord({ ...this.record, status: "running" });
    this.emit("start", this.record);
    const ctx = new RunContext(this.opts, this.dir, this.record, this.site(), writer, this);
    try {
      const started = await startPhase(ctx, verifiers);
      const measured = await measurePhase(ctx, started);
      const stopped = await stopLoad(ctx, measured);
      await completePhase(ctx, started, measured, stopped);
      await afterIngestQueries(ctx, measured.sampler, started.target, {
        rows: measured.workloadRows,
        done: measured.workloadDone,
        sent: stopped.final.sent,
      });
      const ledger = await ledgerPhase(ctx, started, stopped);
      await verdictPhase(ctx, started, measured.sampler, stopped, ledger);
    } catch (err) {
      recordFailure(ctx, err);
    } finally {
      await teardownPhase(ctx);
    }
    this.emit("done", this.record);
    return this.record;
  }

  /** Where the cell's components run: the options' site, else the local platform provisioned for this run. */
  private site(): RunSite {
    const { stack, plan } = this.opts;
    if (this.opts.site) return this.opts.site({ runId: this.runId, dir: this.dir, events: this });
    return new LocalSite({
      stack,
      plan,
      runId: this.runId.slice(-6),
      resultRecord: path.join(this.dir, "run.json"),
      events: this,
    });
  }
}

/** The sink's verifier. @throws ConfigurationError E_SINK when the sink has none */
function verifierFactory(plan: CellPlan): VerifierFactory {
  const factory = findSink(plan.sink.name)?.verifier;
  if (!factory)
    throw new ConfigurationError(
      "E_SINK",
      `scenario ${plan.scenario}: no verifier for sink "${plan.sink.name}"`,
      {
        field: "sink",
      },
    );
  return factory;
}

/** run.json as a run starts: status "error" until it says otherwise. */
function initialRecord(runId: string, opts: RunOptions): RunRecord {
  const { stack, plan } = opts;
  return {
    status: "error",
    runId,
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
