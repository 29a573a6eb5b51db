/**
 * The capacity store: `ingestbench capacity` (harness/cli/commands/capacity.ts) writes one file per stack and
 * scenario, results/<stack>/<scenario>.capacity/capacity.json (the latest search; its steps' runs are the run
 * directories beside it); ui/capacity.ts prints the steps, the result and, over several stacks, the capacity ratio.
 * The report reads the same file (harness/report/data.ts). The search itself is harness/runner/capacity.ts.
 */
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "./store.ts";

/* The search's shapes (judged and chosen by harness/runner/capacity.ts, which documents the rules). */

/** What a step must hold to sustain its rate (see the file comment). */
export interface CapacityBounds {
  /** delivery latency p99 bound, ms (lag p99 where the sink has no stored-at) */
  p99BoundMs: number;
  /** largest Theil–Sen slope of the ingest lag over the measurement, seconds of lag per second of run */
  maxLagSlope: number;
  /** smallest share of the offered events/s that must be sent and stored (0–1) */
  minShare: number;
}

/** How the rates are chosen (see the file comment). */
export interface SearchOptions {
  /** the first rate tried, events/s as the generator's `rate` */
  startRate: number;
  /** ramp factor (> 1) */
  factor: number;
  /** stop when (first bad − last good) ≤ tolerance × last good */
  tolerance: number;
  /** steps at most (≥ 1) */
  maxSteps: number;
  /** rates below this are not tried when ramping down (default 1) */
  minRate?: number;
}

/** A bound a step broke; `error` when the step did not give a measurement at all. */
export type CapacityBound = "error" | "loss" | "offered" | "latency" | "lag slope" | "verdict";

/** One step's measurement and judgement, as stored in capacity.json and printed per step. */
export interface StepJudgement {
  /** the generator's `rate` of this step (per generator entry point, as the scenario means it) */
  rate: number;
  /** events/s offered in total (rate × generator entry points) */
  offeredPerSec: number;
  /** events/s the generators sent over the whole load (the ledger's sent / load seconds); null without a ledger */
  sentPerSec: number | null;
  /** distinct rows/s stored over the measurement window (Summary.rowsPerSecond); null without a summary */
  storedPerSec: number | null;
  /** delivery latency p99, ms; null where unavailable */
  deliveryP99Ms: number | null;
  /** ingest lag p99, ms; null where not measured */
  lagP99Ms: number | null;
  /** Theil–Sen slope of the lag (or backlog age) over the measurement, s/s; null with fewer than 3 samples */
  lagSlope: number | null;
  /** the saturation verdict's label, e.g. "steady", "saturated (backpressure)"; null without a summary */
  verdict: string | null;
  lost: number | null;
  rejected: number | null;
  /** the run's status and id (results/<stack>/<scenario>.capacity/<runId>/) */
  status: "ok" | "failed" | "error" | "interrupted" | "running";
  runId: string;
  /** every bound held */
  ok: boolean;
  /** the bounds it broke, in the order of the file comment */
  boundBy: CapacityBound[];
  /** one reason per broken bound, with the figures */
  reasons: string[];
}

/** A judged step as the search keeps it. */
export interface CapacityStep extends StepJudgement {
  /** 1-based */
  index: number;
  phase: "ramp" | "bisect";
}

/** Why the search stopped. */
export type SearchStop = "converged" | "max-steps" | "no-sustainable-rate" | "error" | "interrupted";

export interface CapacityResult {
  /** the highest rate that sustained (last good), null when none did */
  sustainableRate: number | null;
  /** [last good, first bad]; either null when not found */
  interval: { lastGood: number | null; firstBad: number | null };
  /** (first bad − last good) / last good, null while either is missing */
  relativeWidth: number | null;
  steps: CapacityStep[];
  /** the step that set the first bad rate (its index), null when none failed */
  brokeAt: number | null;
  /** what bound that step */
  boundBy: CapacityBound[];
  stopped: SearchStop;
}

/**
 * A capacity search's steps are stored under results/<stack>/<scenario>.capacity/: a scenario directory of their
 * own, so that they never count as a night or as a stack's latest bench (as A/A runs, ./noise-floor.ts).
 */
export const CAPACITY_SUFFIX = ".capacity";

/** results/<stack>/<scenario>.capacity/capacity.json */
export interface CapacityFile {
  stack: string;
  scenario: string;
  scenarioFile: string;
  cell: string;
  /** the search's invocation (every step's run.json carries it) */
  invocation: string;
  createdAt: string;
  /** generator name and the events/s unit of `rate` */
  generator: string;
  /** generator entry points the rate applies to each (one per collector host) */
  entries: number;
  /** warmup and measurement of every step, ms */
  stepWarmupMs: number;
  stepDurationMs: number;
  bounds: CapacityBounds;
  search: SearchOptions;
  /** where it ran: CPU model, cores, kernel of the first step (docs/decisions/0007) */
  machine: { cpuModel: string; cores: number; kernel: string } | null;
  result: CapacityResult;
}

/** results/<stack>/<scenario>.capacity/capacity.json under resultsRoot. */
export function capacityPath(resultsRoot: string, stack: string, scenario: string): string {
  return path.join(resultsRoot, stack, `${scenario}${CAPACITY_SUFFIX}`, "capacity.json");
}

/** Write (replace) the stack's and scenario's capacity result; returns the file's path. */
export async function writeCapacity(resultsRoot: string, file: CapacityFile): Promise<string> {
  const p = capacityPath(resultsRoot, file.stack, file.scenario);
  await mkdir(path.dirname(p), { recursive: true });
  await writeFileAtomic(p, `${JSON.stringify(file, null, 2)}\n`);
  return p;
}

/** The stored capacity result of a stack and scenario, or null when there is none (or it cannot be read). */
export function loadCapacity(resultsRoot: string, stack: string, scenario: string): CapacityFile | null {
  try {
    return JSON.parse(readFileSync(capacityPath(resultsRoot, stack, scenario), "utf8")) as CapacityFile;
  } catch {
    return null;
  }
}

/** One stack's row of a capacity comparison. */
export interface CapacityRow {
  stack: string;
  file: CapacityFile | null;
}
