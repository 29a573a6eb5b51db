/**
 * One run to make: a matrix cell of a scenario, at one replicate, with the timing after command-line overrides
 * (harness/runner/plan.ts planCells builds them; the run, its sites and the progress read them).
 */
import type { EventField } from "../../core/events/types.ts";
import type { FidelityLimits } from "../../core/fidelity.ts";
import type { Check, QueryPhase, Step } from "../scenario/schema.ts";
import type { AppPlan } from "./app-host.ts";

/** Everything one run needs, resolved from the scenario and its cell. Durations in milliseconds. */
export interface CellPlan {
  scenario: string;
  scenarioFile: string;
  /** stable id of the matrix cell, e.g. "batch=8000" ("default" without a matrix) */
  cell: string;
  replicate: number;
  fields: EventField[];
  replayFile?: string;
  /** the generator; for `generator: none`, name "none" and config {} (no generator process runs: see selfLoad) */
  generator: { name: string; config: Record<string, unknown> };
  /**
   * `generator: none`: the collector's built-in generator makes the load (core/plugin.ts SelfLoad), and the ledger's
   * `sent` is inferred from its own counter (harness/runner/self-load.ts); absent when a generator runs
   */
  selfLoad?: {
    collector: string;
    /** the input in the collector's words, e.g. "example-msg-generator()" */
    input: string;
    /** where its count of made events comes from */
    counter: string;
    /** generator ids one collector host uses (gen = genBase + host index × this + k) */
    generatorsPerHost: number;
    /** ms the count must stand still, everything stored, before the input has surely stopped (core/plugin.ts SelfLoad) */
    quietMs: number;
  };
  sink: { name: string; config: Record<string, unknown> };
  /** the collector between generator and sink; null for `collector: none` */
  collector: { name: string; config: Record<string, unknown> } | null;
  warmupMs: number;
  durationMs: number;
  intervalMs: number;
  drainTimeoutMs: number;
  checks: Check[];
  /** the content check's limits (scenario `fidelity`; absent: core/fidelity.ts DEFAULT_FIDELITY) */
  fidelity?: FidelityLimits;
  seed: number | null;
  /** the query phase after the ingest (scenario `query`; harness/runner/query-load.ts); absent without one */
  query?: QueryPhase;
  /**
   * the application under test and this cell's variant (scenario `app` and `variants`; ./app-host.ts): it runs in
   * place of the generator processes; absent without one
   */
  app?: AppPlan;
  /** fault steps during the load (harness/scenario/steps.ts); absent or [] when none */
  steps?: Step[];
  /** the scenario as loaded, recorded verbatim */
  scenarioConfig: unknown;
}
