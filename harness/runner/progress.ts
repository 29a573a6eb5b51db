/**
 * Progress of a set of runs (bench, nightly, aa), in one of four modes:
 *
 * - `live`  (the default on a terminal): one line on stderr, rewritten in place: runs done / total, the current
 *           stack, scenario, cell and replicate, phase and seconds, rows/s, ingest lag and the time left for all runs.
 * - `plain` (the default otherwise, e.g. a CI log): on stderr, a progress line at most every 30 s (PLAIN_QUIET_MS);
 *           with `verbose`, a line per run start, a sample line every 5 s and, after the load, a line every 5 s while
 *           one stage of the reading lasts (the completion check of a long run).
 *
 * When a run ends, live, plain and quiet print its line (ui/run-line.ts) and the note of each flag not said yet, or
 * with `verbose` its block (ui/run-block.ts), on stdout.
 * - `quiet`: no progress at all; only each run's result and the command's final summary are printed.
 * - `jsonl`: one JSON object per line on stdout, one per event (fields below); the human-readable run results and
 *            summaries go to stderr instead, so that stdout is machine-readable from the first line to the last.
 *
 * JSON-lines events (every object has `event` and `time`, an ISO timestamp; rates are stored rows per second as the
 * verifier measured them, lags in ms, durations in seconds):
 *
 *   {"event":"start", "runs":N, "estimatedSeconds":s}
 *   {"event":"cell-start", "index":i, "runs":N, "stack", "scenario", "cell", "replicate", "group"?, "runId"}
 *   {"event":"sample", "index":i, "stack", "scenario", "cell", "replicate", "group"?, "phase":"warmup|measure|drain",
 *    "elapsedS", "loadEndS", "stored", "rowsPerSec"|null, "lagMs"|null, "backlogLagMs"|null, "remainingSeconds"}
 *   {"event":"query", "index":i, "stack", "scenario", "cell", "replicate", "group"?, "statement", "cellId", "cellIndex",
 *    "cells", "pass"?, "done", "total", "errors", "elapsedS", "queriesPerSec"|null, "cellRemainingS"|null,
 *    "phaseRemainingS"|null, "ended", "remainingSeconds"}   (a query phase, every second and at each cell's end:
 *    harness/runner/query-load.ts QueryProgress; the live line and, every 5 s and at each cell's end, a plain line too)
 *   {"event":"stage", "index":i, "stack", "scenario", "cell", "replicate", "group"?, "stage", "remainingSeconds"}
 *   (a stage of the run after its load begins: "waiting for every acknowledged row", "settling the samples",
 *    "counting the ledger", …; harness/runner/run.ts emits it; the live line shows it too)
 *   {"event":"cell-end", "index":i, "stack", "scenario", "cell", "replicate", "group"?, "runId", "status",
 *    "rowsPerSecond"|null, "mibPerSecond"|null (wire), "logMibPerSecond"|null (the log lines' own bytes),
 *    "lagP99Ms"|null, "lagSamples"|null, "lost"|null, "duplicated"|null, "seconds"}
 *   {"event":"end", "runs":N, "done":n, "ok":n, "failed":n, "errored":n, "interrupted":signal|null, "interruptedRuns":n, "seconds"}
 *   and command-specific summaries, e.g. {"event":"nightly", ...} and {"event":"noise-floor", ...}
 *
 * `index` is 1-based over all runs of the invocation; `group` is "A" or "B" in an A/A invocation. `done` counts the
 * runs that ended, whatever their status; `ok`, `failed` (a check failed), `errored` and `interruptedRuns` split it.
 * Time left = what remains of the current run's load (warmup + duration) + the planned load of the runs not started,
 * each plus its overhead: what comes before the load (provisioning) and after it (drain, ledger and content check,
 * teardown), the means measured on the runs done so far, and before the first one OVERHEAD_ESTIMATE_S of the
 * run's platform. While a query phase runs after the load, the current run's time left adds the phase's own estimate
 * (QueryProgress.phaseRemainingS), and the overhead measured after a run's load leaves its query phase out (a query
 * phase's length is its own: it is not assumed for the runs to come).
 */
import type { EventEmitter } from "node:events";
import type { Writable } from "node:stream";
import { InvalidArgumentError, Option, type Command } from "commander";
import { resultsDirFlag } from "../results/preflight.ts";
import { MAX_REPLICATES } from "../scenario/schema.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";
import type { CellPlan } from "./cell-plan.ts";
import type { QueryProgress } from "./query-load.ts";
import { clip, duration, int as fmtInt } from "../../ui/format.ts";
import { describeRun } from "../../ui/run-block.ts";
import { newFlagNotes, runFlagKeys, runLine, type FlagKey } from "../../ui/run-line.ts";

export const PROGRESS_MODES = ["auto", "live", "plain", "quiet", "jsonl"] as const;
export type ProgressMode = (typeof PROGRESS_MODES)[number];

/** What the display needs of one planned run. */
export interface ProgressRun {
  stack: string;
  plan: Pick<CellPlan, "scenario" | "cell" | "replicate" | "warmupMs" | "durationMs">;
  /** "A" or "B" in an A/A invocation */
  group?: string;
  /** the stack's platform ("local", "docker", "azure"): which OVERHEAD_ESTIMATE_S applies before a run has ended */
  platform?: string;
}

/** What a run costs besides its load, seconds: before the load (provisioning) and after it (drain, ledger, teardown). */
export interface RunOverhead {
  /** hosts provisioned (local: cgroups, namespaces, the sink started; docker, azure: the Pulumi deploy) */
  provision: number;
  /** the drain: the wait until the sink holds every acknowledged seq */
  drain: number;
  /** the ledger and the content check (core/verifier.ts, core/fidelity.ts): grows with the rows stored */
  ledger: number;
  /** teardown (local: processes, cgroups, namespaces; docker, azure: the Pulumi destroy) */
  teardown: number;
}

/**
 * The overhead assumed per run before one has ended, by platform. Local and docker: from the runs measured
 * here (docs/measurements.md, "Figures moved from code comments"); azure: Pulumi's VM create and delete,
 * an assumption of minutes (no measurement here).
 */
export const OVERHEAD_ESTIMATE_S: Record<string, RunOverhead> = {
  local: { provision: 6, drain: 2, ledger: 25, teardown: 5 },
  docker: { provision: 30, drain: 2, ledger: 15, teardown: 15 },
  azure: { provision: 300, drain: 2, ledger: 25, teardown: 180 },
};
const before = (o: RunOverhead): number => o.provision;
const after = (o: RunOverhead): number => o.drain + o.ledger + o.teardown;

/** Streams the display writes to (process.stdout / process.stderr by default; tests pass their own). */
export interface ProgressStreams {
  stdout: Pick<Writable, "write">;
  stderr: Pick<Writable, "write"> & { isTTY?: boolean };
}

/** Interval of sample lines in plain mode with `verbose`, ms. */
const PLAIN_SAMPLE_MS = 5000;
/** At most one progress line this often in plain mode without `verbose` (a CI log: a line per run and this), ms. */
export const PLAIN_QUIET_MS = 30_000;
/** The stage a run is in while its query phase runs after the load (harness/runner/run.ts): time left has its own estimate then. */
export const QUERY_STAGE = "running the query phase";
/** How often plain mode looks whether a stage after the load is due a line, ms. */
const STAGE_TICK_MS = 1000;

/** "45s", "4m10s", "1h02m" (ui/format.ts duration). */
export const formatSeconds = duration;

/** How much a display says: `verbose` prints each run's block and a plain line every 5 s, as before ui/run-line.ts. */
export interface ProgressOptions {
  verbose?: boolean;
}

/** Resolve `auto`: live on a terminal, plain otherwise. @throws RangeError on an unknown mode */
export function resolveMode(
  mode: ProgressMode | undefined,
  stderr: { isTTY?: boolean },
): Exclude<ProgressMode, "auto"> {
  const m = mode ?? "auto";
  if (!(PROGRESS_MODES as readonly string[]).includes(m))
    throw new RangeError(`progress mode must be one of ${PROGRESS_MODES.join(", ")}, got "${m}"`);
  if (m === "auto") return stderr.isTTY ? "live" : "plain";
  return m;
}

/**
 * The progress display of one invocation. Call `start` with every planned run, then per run `cellStart`, `sample`
 * (each series point) and `cellEnd`, and `end` once; `result` prints human-readable results (run descriptions,
 * final tables) where they belong in the mode, `event` adds a command-specific JSON-lines event.
 */
export class Progress {
  readonly mode: Exclude<ProgressMode, "auto">;
  private runs: ProgressRun[] = [];
  private index = 0;
  private done = 0;
  /** runs ended, by status (ok, failed, error, interrupted) */
  private statuses: Record<string, number> = {};
  private startedAt = 0;
  private runStartedAt = 0;
  /** per ended run: seconds before its load began, and after its load ended */
  private measuredOverhead: Array<{ before: number; after: number }> = [];
  /** when the current run's first sample came (its load began), 0 before */
  private loadStartedAt = 0;
  private lastSampleAt = 0;
  /** the current run's stage after its load (stage()), since when (ms), and plain mode's timer for its lines */
  private afterLoad:
    { stage: string; since: number; timer: ReturnType<typeof setInterval> | undefined } | undefined;
  /** when plain mode last printed a line of the current run (this.now(), ms): a stage's line comes 5 s after any */
  private lastPlainLineAt = 0;
  /** a notice (a signal) was printed during the current run: plain mode prints no stage line after it */
  private noticed = false;
  /** the current run's time in after-load stages ended so far, the query phase's left out, ms */
  private afterLoadSpentMs = 0;
  /** the phase of the current run's last plain sample line (its first drain sample always gets a line) */
  private lastPlainPhase: SeriesPoint["phase"] | undefined;
  private loadElapsedS = 0;
  private lineShown = false;
  /** the current run's query phase: its estimated seconds left (after the load), its seconds so far, the last plain line */
  private queryLeftS = 0;
  private querySpentS = 0;
  private queryCellAt = 0;
  private lastQueryLineAt = 0;
  private lastQueryCell = "";
  private unmeasured: "estimate" | "leave-out" = "estimate";

  /** each run's block (ui/run-block.ts) instead of its line, plain lines every 5 s: `--verbose` */
  readonly verbose: boolean;
  /** flags whose note was said in this invocation (each once: ui/run-line.ts newFlagNotes) */
  private said = new Set<FlagKey>();
  /** when plain mode without `verbose` last printed a progress line (this.now(), ms): one per PLAIN_QUIET_MS */
  private lastQuietLineAt = 0;

  constructor(
    mode: ProgressMode | undefined,
    private readonly streams: ProgressStreams = { stdout: process.stdout, stderr: process.stderr },
    private readonly now: () => number = Date.now,
    options: ProgressOptions = {},
  ) {
    this.mode = resolveMode(mode, streams.stderr);
    this.verbose = options.verbose ?? false;
  }

  /** Plain mode's progress lines without `verbose`: whether one may be printed now (one per PLAIN_QUIET_MS), taken if so. */
  private quietLineDue(): boolean {
    if (this.verbose) return true;
    const t = this.now();
    if (t - this.lastQuietLineAt < PLAIN_QUIET_MS) return false;
    this.lastQuietLineAt = t;
    return true;
  }

  private json(obj: Record<string, unknown>): void {
    this.streams.stdout.write(
      `${JSON.stringify({ event: obj.event, time: new Date(this.now()).toISOString(), ...obj })}\n`,
    );
  }

  private clearLine(): void {
    if (this.lineShown) this.streams.stderr.write("\r\x1b[K");
    this.lineShown = false;
  }

  private loadS(r: ProgressRun): number {
    return (r.plan.warmupMs + r.plan.durationMs) / 1000;
  }

  /**
   * Seed the overhead with what earlier runs of the same kind measured (overheadMeasured of another display): a
   * capacity search gives each step its own display, and its steps are alike (harness/runner/capacity-run.ts).
   * With `unmeasured: "leave-out"` the display estimates no overhead until one is measured: load only, said so.
   */
  measuredFrom(
    samples: ReadonlyArray<{ before: number; after: number }>,
    unmeasured: "estimate" | "leave-out" = "estimate",
  ): this {
    this.measuredOverhead.push(...samples);
    this.unmeasured = unmeasured;
    return this;
  }

  /** Per ended run: seconds before its load began and after its load ended. */
  get overheadMeasured(): ReadonlyArray<{ before: number; after: number }> {
    return this.measuredOverhead;
  }

  /** True while the estimates hold the load only (measuredFrom "leave-out", nothing measured yet). */
  private get loadOnly(): boolean {
    return this.unmeasured === "leave-out" && this.measuredOverhead.length === 0;
  }

  /** " left", or " of load left (+ setup, drain, ledger: not measured yet)" while the estimate is the load only. */
  private leftText(): string {
    return this.loadOnly ? " of load left (+ setup, drain, ledger: not measured yet)" : " left";
  }

  /** The overhead before and after a run's load: the mean of the runs ended, else OVERHEAD_ESTIMATE_S of its platform. */
  private overhead(r: ProgressRun): { before: number; after: number } {
    const m = this.measuredOverhead;
    if (m.length > 0)
      return {
        before: m.reduce((a, b) => a + b.before, 0) / m.length,
        after: m.reduce((a, b) => a + b.after, 0) / m.length,
      };
    if (this.loadOnly) return { before: 0, after: 0 };
    const o = OVERHEAD_ESTIMATE_S[r.platform ?? "local"] ?? OVERHEAD_ESTIMATE_S.local!;
    return { before: before(o), after: after(o) };
  }

  /** Seconds left for all runs: the current run's remaining load and those not started, each with its overhead. */
  remainingSeconds(): number {
    let left = 0;
    const current = this.runs[this.index - 1];
    if (current && this.index > this.done) {
      const o = this.overhead(current);
      // past the load, its after-load overhead counts down over the stages shown (not the query phase: its own estimate)
      left +=
        Math.max(0, this.loadS(current) - this.loadElapsedS) +
        Math.max(0, o.after - this.afterLoadSpentS()) +
        (this.loadStartedAt > 0 ? 0 : o.before) +
        this.queryLeftS;
    }
    for (const r of this.runs.slice(this.index)) {
      const o = this.overhead(r);
      left += o.before + this.loadS(r) + o.after;
    }
    return left;
  }

  private label(r: ProgressRun): string {
    return `${r.stack} ${r.plan.scenario} ${r.plan.cell} r${r.plan.replicate}${r.group ? ` ${r.group}` : ""}`;
  }

  private fields(r: ProgressRun): Record<string, unknown> {
    return {
      stack: r.stack,
      scenario: r.plan.scenario,
      cell: r.plan.cell,
      replicate: r.plan.replicate,
      ...(r.group ? { group: r.group } : {}),
    };
  }

  start(runs: ProgressRun[]): void {
    this.runs = runs;
    this.startedAt = this.now();
    this.lastQuietLineAt = this.startedAt;
    if (this.mode === "jsonl")
      this.json({ event: "start", runs: runs.length, estimatedSeconds: Math.round(this.remainingSeconds()) });
    else if (this.mode !== "quiet") {
      this.streams.stderr.write(
        `${runs.length} run(s) planned, about ${formatSeconds(this.remainingSeconds())}${this.loadOnly ? " of load (+ setup, drain, ledger: not measured yet)" : ""}\n`,
      );
    }
  }

  /** The next run (in `start` order) begins; `detail` is e.g. the hosts being provisioned. */
  cellStart(runId: string, detail = ""): void {
    const r = this.runs[this.index];
    if (!r)
      throw new RangeError(
        `progress: run ${this.index + 1} started but only ${this.runs.length} were planned`,
      );
    this.index++;
    this.runStartedAt = this.now();
    this.loadStartedAt = 0;
    this.loadElapsedS = 0;
    this.lastSampleAt = 0;
    this.lastPlainLineAt = this.now();
    this.lastPlainPhase = undefined;
    this.noticed = false;
    this.endStage();
    this.afterLoadSpentMs = 0;
    this.resetQuery();
    if (this.mode === "jsonl")
      this.json({ event: "cell-start", index: this.index, runs: this.runs.length, ...this.fields(r), runId });
    else if (this.mode === "plain" && this.verbose)
      this.streams.stderr.write(
        `[${this.index}/${this.runs.length}] ${this.label(r)}: ${detail || "starting"}\n`,
      );
    else if (this.mode === "live") this.liveLine(r, `starting${detail ? `: ${detail}` : ""}`);
  }

  private liveLine(r: ProgressRun, what: string): void {
    const pct = Math.floor((this.done / Math.max(1, this.runs.length)) * 100);
    const errored = (this.statuses.error ?? 0) + (this.statuses.failed ?? 0);
    const line = `[${this.done}/${this.runs.length} done${errored ? `, ${errored} not ok` : ""}, ${pct} %] ${this.label(r)} · ${what} · ${formatSeconds(this.remainingSeconds())}${this.leftText()}`;
    // one terminal row, or the next rewrite would leave the wrapped part behind
    const cols = (this.streams.stderr as { columns?: number }).columns;
    this.streams.stderr.write(`\r\x1b[K${cols && cols > 20 ? clip(line, cols - 1) : line}`);
    this.lineShown = true;
  }

  /** One series point of the current run. */
  sample(p: SeriesPoint, ctx: { loadEndS: number }): void {
    const r = this.runs[this.index - 1];
    if (!r) return;
    if (this.loadStartedAt === 0) this.loadStartedAt = this.now() - p.elapsedS * 1000;
    this.loadElapsedS = Math.min(p.elapsedS, ctx.loadEndS);
    // past the planned load (the drain, or a fixed workload waiting for its last rows): "35s+2s", never "37s/35s"; the
    // sample that closes the measurement, taken just after the load's end, is still "35s/35s"
    const over = p.elapsedS - ctx.loadEndS;
    const at =
      over <= 0 || (p.phase !== "drain" && over < 0.5)
        ? `${Math.min(p.elapsedS, ctx.loadEndS).toFixed(0)}/${ctx.loadEndS.toFixed(0)}`
        : `${ctx.loadEndS.toFixed(0)}+${over.toFixed(0)}`;
    const rate = p.rowsPerSec === null ? "–" : fmtInt(p.rowsPerSec);
    const lag =
      (p.lagMs === null ? "–" : `${fmtInt(p.lagMs)} ms`) +
      (p.backlogLagMs == null ? "" : ` (backlog ≥ ${fmtInt(p.backlogLagMs)} ms)`);
    if (this.mode === "jsonl") {
      this.json({
        event: "sample",
        index: this.index,
        ...this.fields(r),
        phase: p.phase,
        elapsedS: p.elapsedS,
        loadEndS: ctx.loadEndS,
        stored: p.stored,
        rowsPerSec: p.rowsPerSec,
        lagMs: p.lagMs,
        backlogLagMs: p.backlogLagMs ?? null,
        remainingSeconds: Math.round(this.remainingSeconds()),
      });
    } else if (this.mode === "live") {
      this.liveLine(r, `${p.phase} ${at} s · ${rate} rows/s · lag ${lag}`);
    } else if (
      this.mode === "plain" &&
      (this.verbose
        ? p.t - this.lastSampleAt >= PLAIN_SAMPLE_MS ||
          (p.phase === "drain" && this.lastPlainPhase !== "drain")
        : this.quietLineDue())
    ) {
      // the drain's samples come every 250 ms (harness/runner/run.ts): its first gets a line, the rest one per 5 s
      this.lastSampleAt = p.t;
      this.lastPlainLineAt = this.now();
      this.lastPlainPhase = p.phase;
      this.streams.stderr.write(
        this.verbose
          ? `[${this.index}/${this.runs.length}] ${this.label(r)} ${p.phase.padEnd(7)} ${at.replace(/^(\d+)/, "$1s").padStart(5)}s  ${rate} rows/s  stored ${fmtInt(p.stored)}  lag ${lag}  ${formatSeconds(this.remainingSeconds())}${this.leftText()}\n`
          : `${clip(`[${this.index}/${this.runs.length}] ${r.stack} ${r.plan.cell} ${p.phase} ${at.replace(/^(\d+)/, "$1s")}s · ${rate} rows/s · lag ${p.lagMs === null ? "–" : `${fmtInt(p.lagMs)} ms`} · ${formatSeconds(this.remainingSeconds())}${this.leftText()}`, 100)}\n`,
      );
    }
  }

  private resetQuery(): void {
    this.queryLeftS = 0;
    this.querySpentS = 0;
    this.queryCellAt = 0;
    this.lastQueryLineAt = 0;
    this.lastQueryCell = "";
  }

  /**
   * Show a run's progress: its series points ("tick") and its query phase's reports ("query"). `run` is a BenchRun
   * (harness/runner/run.ts events).
   */
  follow(run: Pick<EventEmitter, "on">): void {
    run.on("tick", (p: SeriesPoint, ctx: { loadEndS: number }) => this.sample(p, ctx));
    run.on("query", (q: QueryProgress) => this.query(q));
    run.on("stage", (stage: string) => this.stage(stage));
  }

  /**
   * A stage of the current run after its load began (harness/runner/run.ts): jsonl, a "stage" event; live, the run's
   * line names it; plain, a line once the stage has lasted PLAIN_SAMPLE_MS and no other line of the run came for as
   * long (a drain sample's, a query phase's), checked every second, and none after a notice (a signal: the run only
   * tears down). Ignored once the run has ended.
   */
  stage(stage: string): void {
    const r = this.runs[this.index - 1];
    if (!r || this.index <= this.done) return;
    this.endStage();
    const at = { stage, since: this.now(), timer: undefined as ReturnType<typeof setInterval> | undefined };
    this.afterLoad = at;
    if (this.mode === "jsonl")
      this.json({
        event: "stage",
        index: this.index,
        ...this.fields(r),
        stage,
        remainingSeconds: Math.round(this.remainingSeconds()),
      });
    else if (this.mode === "live") this.liveLine(r, stage);
    else if (this.mode === "plain" && !this.noticed) {
      at.timer = setInterval(() => {
        const t = this.now();
        if (t - Math.max(at.since, this.lastPlainLineAt) < PLAIN_SAMPLE_MS) return;
        if (!this.quietLineDue()) return;
        this.lastPlainLineAt = t;
        const line = `[${this.index}/${this.runs.length}] ${this.label(r)}: ${stage}, ${formatSeconds(Math.round((t - at.since) / 1000))} so far  ${formatSeconds(this.remainingSeconds())}${this.leftText()}`;
        this.streams.stderr.write(`${this.verbose ? line : clip(line, 100)}\n`);
      }, STAGE_TICK_MS);
      at.timer.unref();
    }
  }

  /** The current stage's plain timer stopped (a new stage, the run's end, the invocation's end). */
  private endStage(): void {
    if (this.afterLoad?.timer) clearInterval(this.afterLoad.timer);
    this.afterLoadSpentMs += this.stageSpentMs();
    this.afterLoad = undefined;
  }

  /** The current stage's time so far, ms; 0 for the query phase (QUERY_STAGE), which has its own estimate. */
  private stageSpentMs(): number {
    return this.afterLoad && this.afterLoad.stage !== QUERY_STAGE ? this.now() - this.afterLoad.since : 0;
  }

  /** Seconds the current run has spent in its after-load stages (the query phase's left out). */
  private afterLoadSpentS(): number {
    return (this.afterLoadSpentMs + this.stageSpentMs()) / 1000;
  }

  /**
   * One report of the current run's query phase (harness/runner/query-load.ts QueryProgress): live, the run's line
   * says which statement and cell, queries done / total, queries/s, errors and the cell's time left; plain, a line
   * every 5 s and when a cell ends; jsonl, a "query" event per report.
   */
  query(q: QueryProgress): void {
    const r = this.runs[this.index - 1];
    if (!r) return;
    const t = this.now();
    // the phase's seconds so far: the cells ended plus the current cell's (the load's end is not the phase's start)
    if (this.queryCellAt === 0 || q.elapsedS === 0) this.queryCellAt = t;
    if (q.pass === undefined) {
      // after the ingest the load is over, however much of its planned duration a fixed workload left unused
      this.loadElapsedS = this.loadS(r);
      this.queryLeftS = q.phaseRemainingS ?? 0;
    }
    const cellS = (t - this.queryCellAt) / 1000;
    if (q.ended) {
      this.querySpentS += cellS;
      this.queryCellAt = 0;
    }
    const rate = q.queriesPerSec === null ? "–" : fmtInt(q.queriesPerSec);
    const cellLeft = q.ended
      ? "done"
      : q.cellRemainingS === null
        ? "– left"
        : `${formatSeconds(q.cellRemainingS)} left`;
    const where = `${q.cellId} [${q.cellIndex}/${q.cells}${q.pass === undefined ? "" : `, pass ${q.pass}`}]`;
    const counts = `${fmtInt(q.done)}/${fmtInt(q.total)} queries · ${rate} queries/s · ${fmtInt(q.errors)} error${q.errors === 1 ? "" : "s"}`;
    if (this.mode === "jsonl") {
      this.json({
        event: "query",
        index: this.index,
        ...this.fields(r),
        ...q,
        remainingSeconds: Math.round(this.remainingSeconds()),
      });
    } else if (this.mode === "live") {
      this.liveLine(r, `query ${where} ${counts} · cell ${cellLeft}`);
    } else if (
      this.mode === "plain" &&
      (this.verbose
        ? q.ended || where !== this.lastQueryCell || t - this.lastQueryLineAt >= PLAIN_SAMPLE_MS
        : this.quietLineDue())
    ) {
      this.lastQueryLineAt = t;
      this.lastPlainLineAt = t;
      this.lastQueryCell = where;
      const line = `[${this.index}/${this.runs.length}] ${this.label(r)} query   ${where}  ${counts.replaceAll(" · ", "  ")}  cell ${cellLeft}  ${formatSeconds(this.remainingSeconds())} left`;
      this.streams.stderr.write(`${this.verbose ? line : clip(line, 100)}\n`);
    }
  }

  /** The current run ended with this record; `description` is its human-readable result. */
  cellEnd(record: RunRecord, description: string): void {
    const r = this.runs[this.index - 1];
    const seconds = (this.now() - this.runStartedAt) / 1000;
    this.done++;
    this.endStage();
    this.statuses[record.status] = (this.statuses[record.status] ?? 0) + 1;
    if (r) {
      // a run that failed before its load measured no split: all of it counts as before the load
      const beforeS =
        this.loadStartedAt > 0
          ? (this.loadStartedAt - this.runStartedAt) / 1000
          : Math.max(0, seconds - this.loadS(r));
      // a query phase after the load is its own length, not overhead (the next run's phase has its own estimate)
      const afterS =
        this.loadStartedAt > 0 ? Math.max(0, seconds - beforeS - this.loadS(r) - this.querySpentS) : 0;
      this.measuredOverhead.push({ before: Math.max(0, beforeS), after: afterS });
    }
    this.loadStartedAt = 0;
    this.loadElapsedS = 0;
    this.resetQuery();
    if (this.mode === "jsonl" && r) {
      this.json({
        event: "cell-end",
        index: this.index,
        ...this.fields(r),
        runId: record.runId,
        status: record.status,
        rowsPerSecond: record.summary?.rowsPerSecond ?? null,
        mibPerSecond: record.summary?.mibPerSecond ?? null,
        logMibPerSecond: record.summary?.logMibPerSecond ?? null,
        lagP99Ms: record.summary?.lagP99Ms ?? null,
        lagSamples: record.summary?.lagSamples ?? null,
        lost: record.ledger?.lost ?? null,
        duplicated: record.ledger?.duplicated ?? null,
        altered: record.ledger?.altered ?? null,
        seconds: Number(seconds.toFixed(1)),
      });
    }
    this.result(description);
  }

  /**
   * The current run ended: its line (ui/run-line.ts, with the note of each flag not said yet in this invocation), or
   * with `verbose` its block (ui/run-block.ts; its directory under `resultsRoot`). The runner hands the record; the
   * words are ui/'s.
   */
  runEnded(record: RunRecord, resultsRoot: string): void {
    if (this.verbose) return this.cellEnd(record, describeRun(record, resultsRoot));
    const first = this.done === 0;
    const notes = newFlagNotes(runFlagKeys(record), this.said);
    if (first) notes.push("  (a run in full: ingestbench show <run>; or bench --verbose)");
    this.cellEnd(record, [runLine(record), ...notes].join("\n"));
  }

  /** Human-readable output (run results, final tables): stdout, or stderr in jsonl mode. */
  result(text: string): void {
    this.clearLine();
    (this.mode === "jsonl" ? this.streams.stderr : this.streams.stdout).write(`${text}\n`);
  }

  /** A notice that must be seen in every mode (e.g. a signal): stderr. The stage shown so far ends with it. */
  notice(text: string): void {
    this.endStage();
    this.noticed = true;
    this.clearLine();
    this.streams.stderr.write(`${text}\n`);
  }

  /** A command-specific JSON-lines event (only in jsonl mode). */
  event(name: string, fields: Record<string, unknown>): void {
    if (this.mode === "jsonl") this.json({ event: name, ...fields });
  }

  end(interrupted: string | null): void {
    this.endStage();
    this.clearLine();
    const seconds = Number(((this.now() - this.startedAt) / 1000).toFixed(1));
    const n = (status: string): number => this.statuses[status] ?? 0;
    if (this.mode === "jsonl") {
      this.json({
        event: "end",
        runs: this.runs.length,
        done: this.done,
        ok: n("ok"),
        failed: n("failed"),
        errored: n("error"),
        interrupted,
        interruptedRuns: n("interrupted"),
        seconds,
      });
    } else if (this.mode !== "quiet")
      this.streams.stderr.write(
        `${this.endSummary()} in ${formatSeconds(seconds)}${interrupted ? ` (interrupted by ${interrupted})` : ""}\n`,
      );
  }

  /**
   * "2/2 run(s) ok", or what the runs that ended came to: "1/3 run(s) ok, 1 failed a check, 1 errored" (and
   * "N interrupted", "N not run" for runs that never started).
   */
  endSummary(): string {
    const n = (status: string): number => this.statuses[status] ?? 0;
    const parts = [`${n("ok")}/${this.runs.length} run(s) ok`];
    if (n("failed")) parts.push(`${n("failed")} failed a check`);
    if (n("error")) parts.push(`${n("error")} errored`);
    if (n("interrupted")) parts.push(`${n("interrupted")} interrupted`);
    const other = this.done - n("ok") - n("failed") - n("error") - n("interrupted");
    if (other > 0) parts.push(`${other} other`);
    if (this.runs.length > this.done) parts.push(`${this.runs.length - this.done} not run`);
    return parts.join(", ");
  }
}

/** The `--progress <mode>` option shared by bench, nightly and aa (commander). */
export function progressOption(): Option {
  return new Option(
    "--progress <mode>",
    "progress display: auto (live on a terminal, else plain), live, plain, quiet, jsonl (docs/output.md)",
  )
    .choices(PROGRESS_MODES)
    .default("auto");
}

/**
 * A commander argument parser for a positive integer option, e.g. `--replicates`: decimal digits only (Number() would
 * also take "1e3", "0x10", "1.0" and " 3"), a safe integer, and at most `max.n` when given (`max.why` says why, e.g. "as a
 * scenario's replicates"). @throws InvalidArgumentError
 */
export function positiveInt(flag: string, max?: { n: number; why: string }): (value: string) => number {
  return (value) => {
    const n = /^[0-9]+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new InvalidArgumentError(
        `${flag} must be a positive integer, got "${value}"${Number.isNaN(n) ? " (decimal digits only, e.g. 3)" : ""}`,
      );
    }
    if (max && n > max.n)
      throw new InvalidArgumentError(`${flag} must be at most ${max.n} (${max.why}), got ${value}`);
    return n;
  };
}

/**
 * The options of every command that runs cells, in help order: -r/--results (checked by resultsDirFlag), --replicates <n> (described by
 * `replicatesHelp`, checked by positiveInt) and, unless `overrides` is false, --duration and --warmup. Command
 * modules call it so that the shared options keep one spelling, default and check. Returns `cmd`.
 */
export function addRunOptions(cmd: Command, replicatesHelp: string, overrides = true): Command {
  cmd
    .option("-r, --results <dir>", "results directory", resultsDirFlag, "results")
    .option(
      "--replicates <n>",
      replicatesHelp,
      positiveInt("--replicates", {
        n: MAX_REPLICATES,
        why: "as a scenario's replicates: each is a whole run per cell",
      }),
    )
    .option(
      "--lock-wait <d>",
      "when another run holds a stack, wait this long for it (e.g. 10m) instead of refusing (default: INGESTBENCH_LOCK_WAIT, else 0)",
    );
  if (overrides) {
    cmd
      .option("--duration <d>", "override the measurement duration, e.g. 10s")
      .option("--warmup <d>", "override the warmup, e.g. 2s");
  }
  return cmd;
}

/**
 * --progress <mode>, -q/--quiet and -v/--verbose (each run in full as it ends: ProgressOptions.verbose), the last
 * options of every command that runs cells. Returns `cmd`.
 */
export function addProgressOptions(cmd: Command): Command {
  return cmd
    .addOption(progressOption())
    .addOption(new Option("-q, --quiet", "same as --progress quiet"))
    .addOption(
      new Option(
        "-v, --verbose",
        "each run in full as it ends (as `ingestbench show <run>` prints it), plain progress lines every 5 s",
      ),
    );
}
