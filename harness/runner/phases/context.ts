/**
 * What the phases of one run (../run.ts) share: its options, site, writer and record, the series as it grows, the
 * instrument's cost, its current stage, and what teardown must close or stop whatever phase the run ended in (the
 * verifier, the load, the fault steps, the generators' final reports).
 */
import type { EventEmitter } from "node:events";
import type { StackSpec } from "../../../core/limits.ts";
import { interruptedError } from "../../../core/errors.ts";
import type { Verifier } from "../../../core/verifier.ts";
import type { GeneratorFinal } from "../../generators/types.ts";
import type { RunWriter } from "../../results/store.ts";
import type { RunRecord, SeriesPoint } from "../../results/types.ts";
import type { CellPlan } from "../cell-plan.ts";
import { InstrumentCost } from "../instrument-cost.ts";
import type { Load } from "../load.ts";
import type { RunOptions } from "../run-options.ts";
import type { RunSite } from "../site.ts";
import type { StepRunner } from "../steps.ts";
import type { Sampler } from "./sampler.ts";

/** The state of one run across its phases (see the file comment). */
export class RunContext {
  readonly series: SeriesPoint[] = [];
  readonly cost = new InstrumentCost(() => this.stageName);
  /** the scenario's fault steps, once the entries are up (null without steps) */
  steps: StepRunner | null = null;
  verifier: Verifier | undefined;
  load: Load | undefined;
  /** the measurement's sampler, once the load has started */
  sampler: Sampler | undefined;
  /** the load's final reports, once it stopped */
  finals: GeneratorFinal[] | null = null;
  /** point the verifier at the sink's endpoint as the site reads it now (a restart may move it); unset: it cannot move */
  followSink: (() => Promise<void>) | undefined;
  /** what the run was doing, for the message of an unexpected error and the after-load memory by stage */
  private stageName = "starting";
  /** the load has ended: each stage from then on is shown (the stage setter) */
  private loadEnded = false;

  constructor(
    readonly opts: RunOptions,
    readonly dir: string,
    readonly record: RunRecord,
    readonly site: RunSite,
    readonly writer: RunWriter,
    readonly events: EventEmitter,
  ) {}

  get plan(): CellPlan {
    return this.opts.plan;
  }
  get stack(): StackSpec {
    return this.opts.stack;
  }
  get signal(): AbortSignal | undefined {
    return this.opts.signal;
  }
  get stage(): string {
    return this.stageName;
  }
  /** a new stage: after the load, the resident set is sampled at the end of the old one and the start of the new one,
   *  so that a stage shorter than the sampling interval has its figure too */
  set stage(next: string) {
    const sampling = this.cost.sampling;
    if (sampling) this.cost.sampleAfterLoadRss();
    this.stageName = next;
    if (sampling) this.cost.sampleAfterLoadRss();
    // the progress display's after-load stages (harness/runner/progress.ts stage())
    if (this.loadEnded) this.events.emit("stage", next);
  }

  /** The load is over: the harness's memory is sampled from now on and every later stage is shown. */
  endLoad(): void {
    this.cost.startAfterLoadSampler();
    this.loadEnded = true;
    this.events.emit("stage", this.stage);
  }

  /** @throws the interruption when the run's signal aborted */
  throwIfAborted(): void {
    if (this.opts.signal?.aborted) throw interruptedError(this.opts.signal);
  }
}
