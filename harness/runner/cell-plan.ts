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
  generator: { name: string; config: Record<string, unknown> };
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
