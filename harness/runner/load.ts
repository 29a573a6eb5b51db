/**
 * The run's load, one interface for its three kinds (harness/runner/loads.ts picks one from the plan): the generator
 * processes (./load-generators.ts), an application under test in their place (./load-app.ts) and a collector's own
 * built-in generator, `generator: none` (./load-self.ts). The run's phases (./phases/) call this interface only, so
 * the run does not branch on its load mode (test/architecture/runner-shape.test.ts).
 *
 * Life of a load: ready → syncClock → go → (refresh, progress, backlog per sample; whenFinished/finished for a fixed
 * workload; settled for a load that ends by itself) → stop → expectContent → ledger → conclude → verifyLedger.
 */
import type { Ledger, Verifier } from "../../core/verifier.ts";
import type { ReplayIndexJson } from "../../core/events/replay-index.ts";
import type { GeneratorFinal, GeneratorProgress } from "../generators/types.ts";
import type { ClockOffset } from "../generators/clock.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";
import type { CellPlan } from "./cell-plan.ts";
import { expectContentSample, ledgerWithFidelity, type AfterLoadTimes } from "./fidelity.ts";
import type { LoadGroup } from "./generator-group.ts";

/** What the ledger of a load needs: the generators' totals per genId and what the content check reads. */
export interface LoadLedgerInput {
  verifier: Verifier;
  plan: CellPlan;
  sent: number[];
  rejected: Array<Array<[number, number]>>;
  genBase: number;
  signal?: AbortSignal;
  /** the generators' index of the replay file (./generator-group.ts takeReplayIndex) */
  replayIndex?: ReplayIndexJson;
  /** when the generators started (epoch ms) */
  generatorsStartedMs: number;
}

/** What a load adds to the record once the ledger is taken. */
export interface LoadConclusionInput {
  verifier: Verifier;
  plan: CellPlan;
  final: GeneratorFinal;
  ledger: Ledger;
  series: readonly SeriesPoint[];
  genBase: number;
}

/** The run's load (see the file comment). */
export interface Load {
  /** load entry points whose generator each runs at the scenario's `rate` (the offered rate's multiplier) */
  readonly generatorCount: number;
  /** why the harness knows no bytes of this load (Summary.bytesUnknown, MiB/s null), or undefined */
  readonly bytesUnknown: string | undefined;
  /** resolves once the load can start (every process or the app ready), or when `signal` aborts */
  ready(signal?: AbortSignal): Promise<void>;
  /** the load's clock against the harness's, before any load */
  syncClock(): Promise<ClockOffset>;
  /** start the load */
  go(): void;
  /** read what the load says of itself before a sample's progress (a collector's count); may reject */
  refresh(): Promise<void>;
  /** running totals */
  readonly progress: GeneratorProgress;
  /** the log lines' mean bytes per row sent as of `at` (epoch ms; ./generator-group.ts logBytesPerRowAt), or null */
  logBytesPerRowAt(at: number): number | null;
  /** rows acknowledged and not yet in `stored` at `at` (epoch ms), and their age; null: none, or unknown */
  backlog(stored: number, at: number): { rows: number; ageMs: number } | null;
  /** resolves when a fixed workload is done (never for a load that runs for the duration) */
  whenFinished(): Promise<void>;
  readonly finished: boolean;
  /** after the load phase: true once a load that ends by itself has (at once for the others) */
  settled(stored: number): Promise<boolean>;
  /** stop and return each generator's final report, by genId */
  stop(): Promise<GeneratorFinal[]>;
  /** seqs of `final` that are never stored by design (an app's dropped records), so never waited for */
  unstorable(final: GeneratorFinal): number;
  /** tell the verifier the content check's sample before the completion wait (./fidelity.ts), where there is one */
  expectContent(verifier: Verifier, plan: CellPlan, sent: number[], genBase: number): void;
  /** the run's ledger and how long it and its content check took */
  ledger(input: LoadLedgerInput): Promise<{ ledger: Ledger; times: Partial<AfterLoadTimes> }>;
  /** what the load adds to run.json beside the ledger (an app's own figures) */
  conclude(input: LoadConclusionInput): Promise<Pick<RunRecord, "app">>;
  /** @throws VerificationError when the load's own account disagrees with the ledger (E_APP_LEDGER) */
  verifyLedger(): void;
}

/**
 * A load driven through a LoadGroup (generator processes, an app, a collector's count): the group's calls, and the
 * defaults of a load whose every acknowledged row must be stored and whose content is compared.
 */
export abstract class GroupLoad implements Load {
  abstract readonly generatorCount: number;
  readonly bytesUnknown: string | undefined = undefined;

  constructor(protected readonly group: LoadGroup) {}

  ready(signal?: AbortSignal): Promise<void> {
    return this.group.ready(signal);
  }
  syncClock(): Promise<ClockOffset> {
    return this.group.syncClock();
  }
  go(): void {
    this.group.go();
  }
  async refresh(): Promise<void> {}
  get progress(): GeneratorProgress {
    return this.group.progress;
  }
  backlog(stored: number, at: number): { rows: number; ageMs: number } | null {
    return this.group.backlog(stored, at);
  }
  logBytesPerRowAt(at: number): number | null {
    return this.group.logBytesPerRowAt?.(at) ?? null;
  }
  whenFinished(): Promise<void> {
    return this.group.whenFinished();
  }
  get finished(): boolean {
    return this.group.finished;
  }
  async settled(_stored: number): Promise<boolean> {
    return true;
  }
  stop(): Promise<GeneratorFinal[]> {
    return this.group.stop();
  }
  unstorable(_final: GeneratorFinal): number {
    return 0;
  }
  expectContent(verifier: Verifier, plan: CellPlan, sent: number[], genBase: number): void {
    expectContentSample(verifier, plan, sent, genBase);
  }
  /** The ledger with its content check beside it (./fidelity.ts ledgerWithFidelity). */
  async ledger(i: LoadLedgerInput): Promise<{ ledger: Ledger; times: Partial<AfterLoadTimes> }> {
    return ledgerWithFidelity(i.verifier, i.plan, i.sent, i.rejected, {
      genBase: i.genBase,
      signal: i.signal,
      replayIndex: i.replayIndex,
      generatorsStartedMs: i.generatorsStartedMs,
    });
  }
  async conclude(_input: LoadConclusionInput): Promise<Pick<RunRecord, "app">> {
    return {};
  }
  verifyLedger(): void {}
}
