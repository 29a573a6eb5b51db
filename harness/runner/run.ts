/**
 * One run: one replicate of one cell on one stack, on the local platform.
 *
 * provision hosts ─▶ start sink ─▶ check versions ─▶ prepare schema ─▶ [start the collector with the sink as its
 * downstream, check its version] ─▶ start observer and generator (warmup, then measurement) ─▶ sample stored count
 * each interval ─▶ stop generator ─▶ drain until stored == accepted or timeout (with a collector, this is the wait
 * for the collector to flush) ─▶ ledger [+ the collector's claimed counts] ─▶ summary ─▶ checks ─▶ teardown
 * (always) ─▶ run.json.
 *
 * Without a collector the topology is loadgen → sink (the generator writes to the sink's data endpoint). With one,
 * the stack needs a `collector` host and the topology is loadgen → collector → sink: the generator writes to the
 * collector's data endpoint, the collector to the sink's; observers cover all three hosts and the bottleneck
 * candidates include the collector host. The collector's claimed counts (its own stats, when it has any) are
 * written beside the ledger as `collectorClaims`; the ledger itself is always what the sink stored.
 *
 * A run is an event emitter (after autocannon): "start" (RunRecord), "sink" ({ host, port, params }: where the
 * harness reaches the sink, once its schema exists), "collector" (RunningComponent, { host, downstream }: once it is
 * ready, with what restarting it would take), "tick" (SeriesPoint, { plan, loadEndS }), "done" (RunRecord).
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { components } from "../../infra/components/index.ts";
import type { RunningComponent } from "../../infra/components/types.ts";
import type { StackSpec } from "../../infra/limits.ts";
import { liftCpuLimit } from "../../infra/local/cgroup.ts";
import { provisionLocal } from "../../infra/local/platform.ts";
import type { LocalStack } from "../../infra/local/types.ts";
import { ConfigurationError, IngestbenchError, ProvisioningError, VerificationError } from "../errors.ts";
import type { EventField } from "../events/types.ts";
import { startGeneratorProcess } from "../generators/process.ts";
import type { GeneratorFinal, GeneratorProgress } from "../generators/types.ts";
import { createLocalObserver } from "../observers/local.ts";
import type { Observer } from "../observers/types.ts";
import { RunWriter, runDir } from "../results/store.ts";
import type { Phase, RunRecord, SeriesPoint, Summary } from "../results/types.ts";
import { verifiers } from "../verifiers/index.ts";
import type { CountSample, Ledger, Verifier } from "../verifiers/types.ts";
import { evaluateChecks } from "./checks.ts";
import type { Check } from "../scenario/schema.ts";
import { environment, gitCommit } from "./environment.ts";
import { computeSummary } from "./summary.ts";

/** Everything one run needs, resolved from the scenario and its cell. Durations in milliseconds. */
export interface CellPlan {
  scenario: string;
  scenarioFile: string;
  /** stable id of the matrix cell, e.g. "batch=8000" ("default" without a matrix) */
  cell: string;
  replicate: number;
  fields: EventField[];
  replayFile?: string;
  generator: { name: string; config: Record<string, unknown> };
  sink: { name: string; config: Record<string, unknown> };
  /** the collector between generator and sink; null for `collector: none` */
  collector: { name: string; config: Record<string, unknown> } | null;
  warmupMs: number;
  durationMs: number;
  intervalMs: number;
  drainTimeoutMs: number;
  checks: Check[];
  seed: number | null;
  /** the scenario as loaded, recorded verbatim */
  scenarioConfig: unknown;
}

export interface RunOptions {
  stack: StackSpec;
  plan: CellPlan;
  resultsRoot: string;
  invocation: string;
  /** aborting stops the run: what was measured is written with status "interrupted" */
  signal?: AbortSignal;
  /** project root (for the generator process and git commit) */
  projectRoot: string;
}

const LOADGEN = "loadgen";
const SINK = "sink";
const COLLECTOR = "collector";
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
  private progress: GeneratorProgress = { sent: 0, accepted: 0, rejected: 0, bytes: 0, requests: 0 };

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
    if (stack.platform !== "local") {
      throw new ConfigurationError("E_PLATFORM", `stack ${stack.name}: platform "${stack.platform}" is provisioned with Pulumi; this command runs local stacks`);
    }
    const roles = plan.collector ? [LOADGEN, COLLECTOR, SINK] : [LOADGEN, SINK];
    for (const role of roles) {
      if (!stack.hosts[role]) {
        const need = roles.map((r) => `"${r}"`).join(plan.collector ? ", " : " and ");
        throw new ConfigurationError("E_STACK_HOSTS", `${stack.file}: this scenario needs hosts ${need}; the stack has ${Object.keys(stack.hosts).join(", ")}`, { field: `config.ingestbench:hosts.${role}` });
      }
    }
    const writer = new RunWriter(this.dir);
    await writer.open();
    await writer.writeRecord({ ...this.record, status: "running" });
    this.emit("start", this.record);

    let local: LocalStack | undefined;
    let sink: RunningComponent | undefined;
    let collector: RunningComponent | undefined;
    let verifier: Verifier | undefined;
    let generator: ReturnType<typeof startGeneratorProcess> | undefined;
    let final: GeneratorFinal | null = null;
    try {
      const sinkFactory = components[plan.sink.name];
      const verifierFactory = verifiers[plan.sink.name];
      if (!sinkFactory || !verifierFactory) throw new ConfigurationError("E_SINK", `no component and verifier for sink "${plan.sink.name}"`);
      const collectorFactory = plan.collector ? components[plan.collector.name] : undefined;
      if (plan.collector && collectorFactory?.kind !== "collector") throw new ConfigurationError("E_COLLECTOR", `no collector component "${plan.collector.name}"`);

      // the sink component makes and owns its own directories under the host's data directory
      local = await provisionLocal(stack, { runId: this.runId.slice(-6) });
      this.record.limits = local.limits;
      this.throwIfAborted();

      const sinkHost = local.hosts[SINK]!;
      const loadgenHost = local.hosts[LOADGEN]!;
      sink = await sinkFactory.startLocal(sinkHost, plan.sink.config, this.opts.signal);
      this.record.versions[sink.name] = { pinned: sink.pinned, running: sink.running };
      if (!sinkFactory.matchesPin(sink.pinned, sink.running)) {
        throw new VerificationError("E_VERSION", `${sink.name} runs version ${sink.running} but the scenario pins ${sink.pinned}; refusing to start`);
      }
      this.throwIfAborted();

      const table = "ib_events";
      verifier = verifierFactory.create({ host: sink.control.host, port: sink.control.port, params: { ...sink.params, table }, fields: plan.fields });
      await verifier.prepare();
      this.emit("sink", { host: sink.control.host, port: sink.control.port, params: { ...sink.params, table }, runDir: this.dir });

      // The collector, between the generator and the sink: started once the table exists, with the sink downstream.
      const collectorHost = plan.collector ? local.hosts[COLLECTOR]! : undefined;
      if (plan.collector && collectorFactory && collectorHost) {
        collector = await collectorFactory.startLocal(collectorHost, plan.collector.config, this.opts.signal, { sink, params: { ...sink.params, table }, fields: plan.fields });
        this.record.versions[collector.name] = { pinned: collector.pinned, running: collector.running };
        if (!collectorFactory.matchesPin(collector.pinned, collector.running)) {
          throw new VerificationError("E_VERSION", `${collector.name} runs version ${collector.running} but the scenario pins ${collector.pinned}; refusing to start`);
        }
        this.emit("collector", collector, { host: collectorHost, downstream: { sink, params: { ...sink.params, table }, fields: plan.fields } });
        this.throwIfAborted();
      }
      const entry = collector ?? sink;

      const observed = collectorHost ? [loadgenHost, collectorHost, sinkHost] : [loadgenHost, sinkHost];
      const observer = createLocalObserver(observed, new Set(Object.entries(stack.hosts).filter(([, h]) => h.limits.cpu).map(([n]) => n)));
      await observer.read();
      let prev = await verifier.sample();

      generator = startGeneratorProcess(loadgenHost.spawn.bind(loadgenHost), {
        name: plan.generator.name,
        config: plan.generator.config,
        ctx: { target: { host: entry.data.host, port: entry.data.port, params: { ...sink.params, table } }, fields: plan.fields, genId: 0, replayFile: plan.replayFile },
        projectRoot: this.opts.projectRoot,
      });
      generator.on("progress", (p: GeneratorProgress) => { this.progress = p; });
      generator.on("error", () => { /* surfaced by stop() */ });

      const t0 = now();
      const loadEnd = t0 + plan.warmupMs + plan.durationMs;
      let bytesPerRow = 0;
      const tick = async (phase: Phase): Promise<CountSample> => {
        const obs = await observer.read();
        const s = await verifier!.sample({ full: phase === "drain" });
        const mid = (s.tBefore + s.tAfter) / 2;
        const prevMid = (prev.tBefore + prev.tAfter) / 2;
        const rowsPerSec = mid > prevMid ? ((s.stored - prev.stored) * 1000) / (mid - prevMid) : null;
        if (this.progress.sent > 0) bytesPerRow = this.progress.bytes / this.progress.sent;
        const point: SeriesPoint = {
          t: mid, elapsedS: (mid - t0) / 1000, phase, stored: s.stored, countQueryMs: s.tAfter - s.tBefore,
          rowsPerSec, mibPerSec: rowsPerSec === null ? null : (rowsPerSec * bytesPerRow) / MiB,
          lagMs: s.newestSentAtMs === null ? null : Math.max(0, s.tAfter - s.newestSentAtMs),
          sent: this.progress.sent, accepted: this.progress.accepted, hosts: obs?.hosts ?? {},
        };
        this.series.push(point);
        writer.append(point);
        this.emit("tick", point, { plan, loadEndS: (loadEnd - t0) / 1000 });
        prev = s;
        return s;
      };

      // Load phase: sample on a fixed cadence measured from t0 (a slow count shifts samples, never the cadence).
      for (let k = 1; ; k++) {
        const due = t0 + k * plan.intervalMs;
        if (due > loadEnd + 1) break;
        await sleep(Math.max(0, due - now()), undefined, { signal: this.opts.signal }).catch(() => undefined);
        this.throwIfAborted();
        await tick(due - t0 <= plan.warmupMs ? "warmup" : "measure");
      }

      final = await generator.stop();
      this.record.generator = final;
      if (final.errors.length > 0 && final.accepted === 0) {
        throw new IngestbenchError("E_GENERATOR", `generator ${plan.generator.name} stored nothing: ${final.errors.slice(0, 3).join("; ")}`);
      }

      // Drain: keep counting until the sink holds everything it acknowledged, or the timeout passes. With a collector
      // this is the wait for it to flush its queue (accepted = what the collector's socket took in).
      const drainEnd = now() + plan.drainTimeoutMs;
      let last = await tick("drain");
      while (last.stored < final.accepted && now() < drainEnd) {
        await sleep(Math.min(plan.intervalMs, 250), undefined, { signal: this.opts.signal }).catch(() => undefined);
        this.throwIfAborted();
        last = await tick("drain");
      }

      // What the collector claims it received and wrote, beside the ledger (a dead collector's error is kept instead).
      if (collector?.stats) {
        const name = collector.name;
        this.record.collectorClaims = await collector.stats().then(
          (counts) => ({ name, counts }),
          (e: Error) => ({ name, counts: null, error: e.message }),
        );
      }
      // The measurement is over: lift the sink's CPU cap so that the ledger's full-table queries take seconds, not
      // minutes on a quarter core. Memory, IO and network caps stay; nothing after this point is a measurement.
      if (await liftCpuLimit(sinkHost.cgroup)) this.record.limits[SINK]?.notes.push("CPU cap lifted after the drain, for the ledger queries");
      const ledger: Ledger = await verifier.ledger([final.sent], [final.rejectedRanges]);
      this.record.ledger = ledger;
      this.record.summary = this.summarize(final.sent > 0 ? final.bytes / final.sent : 0);
      this.record.checks = evaluateChecks(plan.checks, { ledger, summary: this.record.summary, generator: final });
      this.record.status = this.record.checks.every((c) => c.ok) ? "ok" : "failed";
    } catch (err) {
      this.record.status = this.opts.signal?.aborted ? "interrupted" : "error";
      const e = err as Error & { code?: string };
      this.record.error = { code: e.code ?? "E_UNEXPECTED", kind: errorKind(err), message: e.message };
      if (!(err instanceof IngestbenchError) && !this.opts.signal?.aborted) this.record.error.message = e.stack ?? e.message;
    } finally {
      // an interrupted or failed run still gets the summary of what it measured, when it measured enough
      if (!this.record.summary && this.series.filter((p) => p.phase === "measure").length >= 2) {
        try {
          this.record.summary = this.summarize(this.progress.sent > 0 ? this.progress.bytes / this.progress.sent : 0);
        } catch {
          // nothing to summarise: the series is still written
        }
      }
      const errors: string[] = [];
      const attempt = async (what: string, f: () => Promise<unknown>): Promise<void> => {
        try { await f(); } catch (e) { errors.push(`${what}: ${(e as Error).message}`); }
      };
      if (generator && !final) await attempt("generator", async () => { this.record.generator = await generator!.stop(); });
      if (collector) await attempt("collector", () => collector!.stop());
      if (verifier) await attempt("verifier", () => verifier!.close());
      if (sink) await attempt("sink", () => sink!.stop());
      if (local) await attempt("teardown", () => local!.teardown());
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

  private summarize(bytesPerRow: number): Summary {
    const { stack } = this.opts;
    return computeSummary({
      series: this.series, bytesPerRow,
      limits: Object.fromEntries(Object.entries(stack.hosts).map(([n, h]) => [n, h.limits])),
      sinkHosts: this.opts.plan.collector ? [COLLECTOR, SINK] : [SINK], clientHost: LOADGEN, machineCores: this.record.environment.cores,
    });
  }

  private throwIfAborted(): void {
    if (this.opts.signal?.aborted) throw new IngestbenchError("E_INTERRUPTED", `interrupted (${String(this.opts.signal.reason ?? "signal")}); results so far are kept`);
  }
}
