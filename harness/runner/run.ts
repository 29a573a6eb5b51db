/**
 * One run: one replicate of one cell on one stack. Where the components run is the run's site (./site.ts): the
 * local platform, provisioned per run (./local-site.ts, the default), or a deployed docker or azure stack
 * (harness/remote/site.ts); what is measured and how is the same on both.
 *
 * provision hosts ─▶ start sink ─▶ check versions ─▶ prepare schema ─▶ [start the collector with the sink as its
 * downstream, check its version] ─▶ start observer and generator (warmup, then measurement) ─▶ sample stored count
 * each interval ─▶ stop generator ─▶ drain until stored == accepted or timeout (with a collector, this is the wait
 * for the collector to flush) ─▶ ledger [+ the collector's claimed counts] ─▶ summary ─▶ checks ─▶ teardown
 * (always) ─▶ run.json.
 *
 * Without a collector the topology is loadgen → sink (the generator writes to the sink's data endpoint). With one,
 * the stack needs a `collector` host (or `collector-1`, `collector-2`, … for a scale-out, as in write-up 000) and the
 * topology is loadgen → collector(s) → sink: one generator process per collector host (genIds 0..n-1, each at the
 * scenario's rate) writes to that collector's data endpoint, the collectors to the sink's; every collector host
 * must run the pinned version and all of them the same one; observers cover every host and the bottleneck
 * candidates include the collector hosts. The collectors' claimed counts (their own stats, summed over hosts) are
 * written beside the ledger as `collectorClaims`; the ledger itself is always what the sink stored.
 *
 * A fixed workload (generator `requests`: N batches, write-up 001's "batch × count") ends the load phase when every
 * generator is done; measuring then continues until the sink holds everything accepted (or the drain timeout), so
 * its throughput is the workload over the time it took to store it.
 *
 * Throughput counts distinct rows: when the ledger finds duplicates, `rowsPerSecond` is the stored-rows rate
 * scaled by distinct/stored and the raw rate is kept as `storedRowsPerSecond` — a collector that delivers a batch
 * twice must show up as duplicated rows, not as a faster pipeline.
 *
 * A run is an event emitter (after autocannon): "start" (RunRecord), "sink" ({ host, port, params }: where the
 * harness reaches the sink, once its schema exists), "collector" (RunningComponent, { host, downstream }: once it is
 * ready, with what restarting it would take), "tick" (SeriesPoint, { plan, loadEndS }), "done" (RunRecord).
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { StackSpec } from "../../core/limits.ts";
import { ConfigurationError, IngestbenchError, interruptedError, ProvisioningError, VerificationError } from "../../core/errors.ts";
import type { GeneratorFinal, GeneratorProgress } from "../generators/types.ts";
import { RunWriter, runDir } from "../results/store.ts";
import type { Phase, RunRecord, SeriesPoint, Summary } from "../results/types.ts";
import { findSink } from "../../plugins/registry.ts";
import type { CountSample, Ledger, Verifier } from "../../core/verifier.ts";
import { evaluateChecks } from "./checks.ts";
import { environment, gitCommit } from "./environment.ts";
import { GeneratorGroup, mergeFinals } from "./generator-group.ts";
import { LocalSite } from "./local-site.ts";
import { LOADGEN, oomMessage, SINK, type OomKill, type RunSite } from "./site.ts";
import { computeSummary } from "./summary.ts";
import { collectorHosts } from "./versions.ts";
import type { CellPlan } from "./cell-plan.ts";

export interface RunOptions {
  stack: StackSpec;
  plan: CellPlan;
  resultsRoot: string;
  invocation: string;
  /** aborting stops the run: what was measured is written with status "interrupted" */
  signal?: AbortSignal;
  /** project root (for the generator process and git commit) */
  projectRoot: string;
  /**
   * where the cell's components run; default: the local platform, provisioned for this run (LocalSite). A deployed
   * docker or azure stack passes its own (harness/remote/site.ts).
   */
  site?: (ctx: { runId: string; dir: string; events: EventEmitter }) => RunSite;
}

const MiB = 2 ** 20;

/** Run ids sort by time: 20261129T201500Z-3f9a2c. */
export function newRunId(): string {
  const ts = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `${ts}-${randomBytes(3).toString("hex")}`;
}

function errorKind(err: unknown): NonNullable<RunRecord["error"]>["kind"] {
  if (err instanceof ConfigurationError) return "configuration";
  if (err instanceof ProvisioningError) return "provisioning";
  if (err instanceof VerificationError) return "verification";
  return "run";
}

const now = (): number => performance.timeOrigin + performance.now();

export class BenchRun extends EventEmitter {
  readonly runId = newRunId();
  readonly dir: string;
  private record: RunRecord;
  private series: SeriesPoint[] = [];
  private generators: GeneratorGroup | undefined;
  private generatorCount = 1;

  constructor(private readonly opts: RunOptions) {
    super();
    const { stack, plan } = opts;
    this.dir = runDir(opts.resultsRoot, stack.name, plan.scenario, this.runId);
    this.record = {
      status: "error", runId: this.runId, invocation: opts.invocation, stack: stack.name, platform: stack.platform,
      scenario: plan.scenario, scenarioFile: plan.scenarioFile, cell: plan.cell, replicate: plan.replicate,
      seed: plan.seed, startedAt: new Date().toISOString(), finishedAt: null, commit: gitCommit(opts.projectRoot),
      environment: environment(), limits: {}, versions: {}, scenarioConfig: plan.scenarioConfig,
      summary: null, ledger: null, generator: null, checks: [], error: null,
    };
  }

  /** Run to the end. Resolves with the record in every case but a failure to write results. */
  async run(): Promise<RunRecord> {
    const { stack, plan } = this.opts;
    const ctx = { runId: this.runId, dir: this.dir, events: this as EventEmitter };
    const site: RunSite = this.opts.site
      ? this.opts.site(ctx)
      : new LocalSite({ stack, plan, runId: this.runId.slice(-6), resultRecord: path.join(this.dir, "run.json"), events: this });
    const verifierFactory = findSink(plan.sink.name)?.verifier;
    if (!verifierFactory) throw new ConfigurationError("E_SINK", `scenario ${plan.scenario}: no verifier for sink "${plan.sink.name}"`, { field: "sink" });
    const writer = new RunWriter(this.dir);
    await writer.open();
    await writer.writeRecord({ ...this.record, status: "running" });
    this.emit("start", this.record);

    let verifier: Verifier | undefined;
    let finals: GeneratorFinal[] | null = null;
    try {
      const sink = await site.startSink(this.opts.signal);
      this.record.limits = site.limits;
      this.record.versions = site.versions;
      if (site.environment) this.record.environment = await site.environment();
      this.throwIfAborted();

      const params = { ...sink.params, table: sink.params.table ?? "ib_events" };
      verifier = verifierFactory.create({ host: sink.control.host, port: sink.control.port, params, fields: plan.fields });
      await verifier.prepare();
      this.emit("sink", { host: sink.control.host, port: sink.control.port, params, runDir: this.dir });

      // the collectors (between the generators and the sink) start once the table exists, with the sink downstream
      const entries = await site.startEntries({ params, fields: plan.fields }, this.opts.signal);
      this.throwIfAborted();

      const observer = await site.observer();
      await observer.read();
      let prev = await verifier.sample();

      const loadgen = await site.loadgen(plan.replayFile);
      const generators = new GeneratorGroup(loadgen.spawn, entries.length, (genId) => ({
        name: plan.generator.name,
        config: plan.generator.config,
        ctx: { target: { host: entries[genId]!.host, port: entries[genId]!.port, params }, fields: plan.fields, genId, replayFile: loadgen.replayFile },
        projectRoot: this.opts.projectRoot,
      }), loadgen.program);
      this.generators = generators;
      this.generatorCount = entries.length;
      // t0 once every generator is up (node + tsx start in about a second): start-up is never measured as load
      await generators.ready(this.opts.signal);
      this.throwIfAborted();

      const t0 = now();
      const loadEnd = t0 + plan.warmupMs + plan.durationMs;
      let bytesPerRow = 0;
      const tick = async (phase: Phase): Promise<CountSample> => {
        const obs = await observer.read();
        const s = await verifier!.sample({ full: phase === "drain" });
        const mid = (s.tBefore + s.tAfter) / 2;
        const prevMid = (prev.tBefore + prev.tAfter) / 2;
        const rowsPerSec = mid > prevMid ? ((s.stored - prev.stored) * 1000) / (mid - prevMid) : null;
        const progress = generators.progress;
        if (progress.sent > 0) bytesPerRow = progress.bytes / progress.sent;
        const point: SeriesPoint = {
          t: mid, elapsedS: (mid - t0) / 1000, phase, stored: s.stored, countQueryMs: s.tAfter - s.tBefore,
          rowsPerSec, mibPerSec: rowsPerSec === null ? null : (rowsPerSec * bytesPerRow) / MiB,
          lagMs: s.newestSentAtMs === null ? null : Math.max(0, s.tAfter - s.newestSentAtMs),
          sent: progress.sent, accepted: progress.accepted, hosts: obs?.hosts ?? {},
        };
        this.series.push(point);
        writer.append(point);
        this.emit("tick", point, { plan, loadEndS: (loadEnd - t0) / 1000 });
        prev = s;
        return s;
      };

      // The sample at t0 opens the measurement when there is no warmup.
      await tick("warmup");
      // Load phase: sample on a fixed cadence measured from t0 (a slow count shifts samples, never the cadence). A
      // fixed workload that is done keeps being measured until the sink holds all of it (see the file comment).
      let workloadDeadline: number | null = null;
      for (let k = 1; ; k++) {
        const due = t0 + k * plan.intervalMs;
        if (due > loadEnd + 1 && workloadDeadline === null) break;
        await sleep(Math.max(0, due - now()), undefined, { signal: this.opts.signal }).catch(() => undefined);
        this.throwIfAborted();
        if (generators.finished) {
          // the window ends at the first sample that saw the whole workload stored: no idle sample after it
          workloadDeadline ??= now() + plan.drainTimeoutMs;
          if (prev.stored >= expectedRows(generators.progress) || now() > workloadDeadline) break;
        }
        await tick(due - t0 <= plan.warmupMs ? "warmup" : "measure");
      }

      finals = await generators.stop();
      const final = mergeFinals(finals);
      this.record.generator = final;
      if (finals.length > 1) this.record.generators = finals;
      if (final.errors.length > 0 && final.accepted === 0) {
        throw new IngestbenchError("E_GENERATOR", `generator ${plan.generator.name} stored nothing: ${final.errors.slice(0, 3).join("; ")}`);
      }

      // Drain: keep counting until the sink holds everything it acknowledged, or the timeout passes. With a collector
      // this is the wait for it to flush its queue (accepted = what the collector's socket took in).
      const drainEnd = now() + plan.drainTimeoutMs;
      let last = await tick("drain");
      while (last.stored < expectedRows(final) && now() < drainEnd) {
        await sleep(Math.min(plan.intervalMs, 250), undefined, { signal: this.opts.signal }).catch(() => undefined);
        this.throwIfAborted();
        last = await tick("drain");
      }

      // What the collectors claim they received and wrote, beside the ledger (a dead collector's error is kept instead).
      const claims = await site.collectorClaims();
      if (claims) this.record.collectorClaims = claims;
      // The measurement is over (e.g. the local sink's CPU cap is lifted for the ledger queries)
      for (const [host, notes] of Object.entries(await site.endMeasurement())) this.record.limits[host]?.notes.push(...notes);
      const ledger: Ledger = await verifier.ledger(finals.map((f) => f.sent), finals.map((f) => f.rejectedRanges));
      this.record.ledger = ledger;
      this.record.summary = this.summarize(final.sent > 0 ? final.bytes / (final.sent + (final.repeated ?? 0)) : 0, ledger);
      this.record.checks = evaluateChecks(plan.checks, { ledger, summary: this.record.summary, generator: final });
      this.record.status = this.record.checks.every((c) => c.ok) ? "ok" : "failed";
    } catch (err) {
      this.record.status = this.opts.signal?.aborted ? "interrupted" : "error";
      const e = err as Error & { code?: string };
      this.record.error = { code: e.code ?? "E_UNEXPECTED", kind: errorKind(err), message: e.message };
      // a step cut short by the signal fails with its own code (e.g. E_PG_ABORTED): the run's is the interruption
      if (this.opts.signal?.aborted && e.code !== "E_INTERRUPTED") {
        this.record.error = { code: "E_INTERRUPTED", kind: "run", message: `interrupted (${String(this.opts.signal.reason ?? "signal")}) during: ${e.message}` };
      }
      if (!(err instanceof IngestbenchError) && !this.opts.signal?.aborted) this.record.error.message = e.stack ?? e.message;
    } finally {
      // an interrupted or failed run still gets the summary of what it measured, when it measured enough
      if (!this.record.summary && this.series.filter((p) => p.phase === "measure").length >= 2) {
        try {
          const p = this.generators?.progress;
          this.record.summary = this.summarize(p && p.sent > 0 ? p.bytes / (p.sent + (p.repeated ?? 0)) : 0);
        } catch {
          // nothing to summarise: the series is still written
        }
      }
      const errors: string[] = [];
      const attempt = async (what: string, f: () => Promise<unknown>): Promise<void> => {
        try { await f(); } catch (e) { errors.push(`${what}: ${(e as Error).message}`); }
      };
      if (this.generators && !finals) await attempt("generator", async () => { this.record.generator = mergeFinals(await this.generators!.stop()); });
      if (site.oomKills && this.record.status !== "interrupted") await attempt("OOM check", async () => this.reportOom(await site.oomKills!()));
      if (verifier) await attempt("verifier", () => verifier!.close());
      errors.push(...(await site.teardown()));
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

  private summarize(bytesPerRow: number, ledger?: Ledger): Summary {
    const { stack } = this.opts;
    return computeSummary({
      series: this.series, bytesPerRow,
      limits: Object.fromEntries(Object.entries(stack.hosts).map(([n, h]) => [n, h.limits])),
      sinkHosts: this.opts.plan.collector ? [...collectorHosts(Object.keys(stack.hosts)), SINK] : [SINK], clientHost: LOADGEN, machineCores: this.record.environment.cores,
      distinctShare: ledger && ledger.stored > 0 ? ledger.distinct / ledger.stored : undefined,
      offeredPerSec: offeredRate(this.opts.plan.generator.config, this.generatorCount),
    });
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
    this.record.error = { code: "E_OOM_KILLED", kind: "run", message: prior ? `${message}\nthen: ${prior.code}: ${prior.message}` : message };
    this.record.status = "error";
    const k = kills.find((x) => x.host === SINK) ?? kills[0]!;
    if (this.record.summary) {
      const b = this.record.summary.bottleneck;
      const evidence = `OOM-killed under its memory cap: ${k.evidence}`;
      this.record.summary.bottleneck = { resource: "memory", host: k.host, score: 1, evidence, candidates: [{ resource: "memory", host: k.host, score: 1, evidence }, ...b.candidates] };
    }
  }

  private throwIfAborted(): void {
    if (this.opts.signal?.aborted) throw interruptedError(this.opts.signal);
  }
}

/** Total events/s offered by `n` open-loop generators with this config (`rate` is per generator), else undefined. */
function offeredRate(config: Record<string, unknown>, n: number): number | undefined {
  return typeof config.rate === "number" ? config.rate * n : undefined;
}

/** Rows the sink should hold once everything acknowledged has landed: accepted events plus deliberate repeats. */
function expectedRows(p: GeneratorProgress): number {
  return p.accepted + (p.repeated ?? 0);
}
