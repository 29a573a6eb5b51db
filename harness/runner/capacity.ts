/**
 * The capacity search of `ingestbench capacity` (harness/cli/commands/capacity.ts): the highest offered rate an
 * open-loop generator can drive through a stack while the stack keeps up, found by measured runs (the OpenMessaging
 * Benchmark's rate search and the OpenTelemetry Collector testbed's max-load tests do the same by hand; the rule is
 * docs/decisions/0010-capacity-search.md, the command docs/capacity.md).
 *
 * Pure: `judgeStep` reads one step's run (its run.json and measurement series), `searchCapacity` chooses the rates
 * over an async step function (a real run in the command, a fake in test/harness/runner/capacity.test.ts).
 *
 * A step **sustains** its rate when every bound holds (`judgeStep`):
 * - `error`: the run ended `ok` or `failed` (a failed check is judged by the bounds below), not `error`;
 * - `loss`: the ledger lost and rejected nothing;
 * - `offered`: the generators sent at least `minShare` of what the open loop offered over the whole load (warmup and
 *   measurement: offered events/s × load seconds, less one batch per connection still due; the load lasts until the
 *   last measurement sample, later than planned when counts are slow): an open loop that TCP
 *   pushes back sends less than it offers, and its sent_at stamps then hide the delay (harness/generators/loop.ts).
 *   What was sent but not stored shows as backlog, in the lag below;
 * - `latency`: delivery latency p99 (stored_at − sent_at, Summary.deliveryLatency) at most `p99BoundMs`; where the
 *   sink has no stored-at, the ingest lag's p99;
 * - `lag slope`: the Theil–Sen slope (harness/stats/trend.ts) of the ingest lag (or the backlog age where larger)
 *   over the measurement samples at most `maxLagSlope` seconds per second: a stack that falls behind by a share x of
 *   its capacity grows its lag by about x s/s, so the bound is the share of overload the search tolerates unseen.
 *   The newest row's lag saws by up to one batch period of the generator (batch / offered events/s) as batches
 *   land, so a slope counts only when its growth over the measurement also exceeds `lagFloorMs` (the larger of
 *   that period and 200 ms, saturation.ts GROWTH_MIN_MS);
 * - `verdict`: the saturation verdict (harness/runner/saturation.ts) is `steady`.
 *
 * The search (`searchCapacity`): a ramp from `startRate`, multiplying by `factor` while steps sustain (dividing while
 * none has yet), then a bisection of [last good, first bad] at the arithmetic midpoint until the interval is within
 * `tolerance` of the last good rate, at most `maxSteps` steps in all. The result is the last good rate with that
 * interval, and the step that set the first bad rate with what bound it.
 */
import type {
  CapacityBound,
  CapacityBounds,
  CapacityResult,
  CapacityStep,
  SearchOptions,
  SearchStop,
  StepJudgement,
} from "../results/capacity.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";
import { trendOf } from "../stats/trend.ts";
import { int as fmt, pct } from "../../ui/format.ts";

export type {
  CapacityBound,
  CapacityBounds,
  CapacityResult,
  CapacityStep,
  SearchOptions,
  SearchStop,
  StepJudgement,
};

/** The bounds `ingestbench capacity` applies unless told otherwise (docs/capacity.md). */
export const DEFAULT_BOUNDS: CapacityBounds = { p99BoundMs: 2000, maxLagSlope: 0.05, minShare: 0.95 };

/** The verdict's lag: the larger of the newest row's lag and the backlog age (harness/runner/saturation.ts). */
function lagOf(p: SeriesPoint): number | null {
  const xs = [p.lagMs, p.backlogLagMs ?? null].filter((v): v is number => v !== null);
  return xs.length ? Math.max(...xs) : null;
}

/** What a step offered: its rate, the events/s in total, for how long, and the slack of the open loop's batches. */
export interface StepOffer {
  /** the generator's `rate` */
  rate: number;
  /** events/s offered in total (rate × generator entry points) */
  offeredPerSec: number;
  /** seconds the load ran (warmup + measurement) */
  loadSeconds: number;
  /** events still due at the load's end without the loop being behind: one batch per connection and generator */
  slackEvents: number;
  /** smallest lag growth over the measurement that counts as growth, ms (see the file comment) */
  lagFloorMs: number;
}

/**
 * Judge one step's run (see the file comment). `series` is the run's series.jsonl (its measurement samples are
 * read); the events sent are the ledger's.
 */
export function judgeStep(
  record: RunRecord,
  series: readonly SeriesPoint[],
  offer: StepOffer,
  bounds: CapacityBounds,
): StepJudgement {
  const { rate, offeredPerSec } = offer;
  const s = record.summary;
  const l = record.ledger;
  const measure = series.filter((p) => p.phase === "measure");
  // the load runs until the last measurement sample at least: on a busy machine a slow count ends it past its nominal end
  const loadSeconds = Math.max(offer.loadSeconds, measure.at(-1)?.elapsedS ?? 0);
  const sentPerSec = l && loadSeconds > 0 ? l.sent / loadSeconds : null;
  const lags = measure.flatMap((p) => {
    const v = lagOf(p);
    return v === null ? [] : [[p.elapsedS, v] as const];
  });
  const lagSlope =
    lags.length >= 3
      ? trendOf(
          lags.map((p) => p[0]),
          lags.map((p) => p[1]),
        ).slope / 1000
      : null;
  const lagGrowthMs = lagSlope === null ? 0 : lagSlope * 1000 * (lags.at(-1)![0] - lags[0]![0]);
  const d = s?.deliveryLatency;
  const deliveryP99Ms = d && !("unavailable" in d) ? d.p99Ms : null;
  const out: StepJudgement = {
    rate,
    offeredPerSec,
    sentPerSec,
    storedPerSec: s?.rowsPerSecond ?? null,
    deliveryP99Ms,
    lagP99Ms: s?.lagP99Ms ?? null,
    lagSlope,
    verdict: s?.saturation?.label ?? null,
    lost: l?.lost ?? null,
    rejected: l?.rejected ?? null,
    status: record.status,
    runId: record.runId,
    ok: false,
    boundBy: [],
    reasons: [],
  };
  const broke = (b: CapacityBound, why: string): void => {
    out.boundBy.push(b);
    out.reasons.push(why);
  };
  if (record.status === "error" || record.status === "interrupted" || !s || !l) {
    broke(
      "error",
      record.error
        ? `${record.error.code}: ${record.error.message.split("\n")[0]}`
        : `the run ended ${record.status} without a summary and ledger`,
    );
    return out;
  }
  if (l.lost > 0 || l.rejected > 0) broke("loss", `lost ${fmt(l.lost)}, rejected ${fmt(l.rejected)}`);
  const due = offeredPerSec * loadSeconds - offer.slackEvents;
  if (l.sent < bounds.minShare * due)
    broke(
      "offered",
      `sent ${fmt(l.sent)} of the ${fmt(due)} events due in ${loadSeconds.toFixed(1)} s at ${fmt(offeredPerSec)}/s (below ${pct(bounds.minShare)})`,
    );
  const p99 = deliveryP99Ms ?? s.lagP99Ms;
  if (p99 !== null && p99 > bounds.p99BoundMs)
    broke(
      "latency",
      `${deliveryP99Ms !== null ? "delivery" : "lag"} p99 ${fmt(p99)} ms over the ${fmt(bounds.p99BoundMs)} ms bound`,
    );
  if (lagSlope !== null && lagSlope > bounds.maxLagSlope && lagGrowthMs > offer.lagFloorMs) {
    broke(
      "lag slope",
      `lag grows ${lagSlope.toFixed(3)} s/s, +${fmt(lagGrowthMs)} ms over the measurement (bound ${bounds.maxLagSlope} s/s beyond ${fmt(offer.lagFloorMs)} ms)`,
    );
  }
  if (s.saturation && s.saturation.state !== "steady") broke("verdict", `verdict ${s.saturation.label}`);
  out.ok = out.boundBy.length === 0;
  return out;
}

/**
 * A step function: run at `rate` and judge it; null when the search was interrupted (nothing measured).
 * `index` is the step's 1-based number, `phase` why it runs.
 */
export type StepFunction = (
  rate: number,
  index: number,
  phase: CapacityStep["phase"],
) => Promise<StepJudgement | null>;

/**
 * Search the highest sustainable rate (see the file comment). Rates are whole events/s.
 * @throws RangeError for options that cannot make a search (start ≤ 0, factor ≤ 1, tolerance ≤ 0, maxSteps < 1)
 */
export async function searchCapacity(
  o: SearchOptions,
  step: StepFunction,
  onStep?: (s: CapacityStep) => void,
): Promise<CapacityResult> {
  if (
    !(o.startRate > 0) ||
    !(o.factor > 1) ||
    !(o.tolerance > 0) ||
    !(Number.isInteger(o.maxSteps) && o.maxSteps >= 1)
  ) {
    throw new RangeError(
      `capacity search: start rate > 0, factor > 1, tolerance > 0 and at least one step are needed, got ${JSON.stringify(o)}`,
    );
  }
  const minRate = o.minRate ?? 1;
  const steps: CapacityStep[] = [];
  let good: number | null = null;
  let bad: number | null = null;
  let brokeAt: number | null = null;
  let stopped: SearchStop = "max-steps";
  let rate = Math.max(minRate, Math.round(o.startRate));
  while (steps.length < o.maxSteps) {
    const index = steps.length + 1;
    const phase: CapacityStep["phase"] = good !== null && bad !== null ? "bisect" : "ramp";
    const j = await step(rate, index, phase);
    if (j === null) {
      stopped = "interrupted";
      break;
    }
    const s: CapacityStep = { ...j, index, phase };
    steps.push(s);
    onStep?.(s);
    if (s.boundBy.includes("error")) {
      stopped = "error";
      break;
    }
    if (s.ok) good = good === null ? rate : Math.max(good, rate);
    else if (bad === null || rate < bad) {
      bad = rate;
      brokeAt = index;
    }
    let next: number;
    if (bad === null) next = Math.round(rate * o.factor);
    else if (good === null) {
      next = Math.round(rate / o.factor);
      if (next < minRate || next === rate) {
        stopped = "no-sustainable-rate";
        break;
      }
    } else {
      if (bad - good <= o.tolerance * good) {
        stopped = "converged";
        break;
      }
      next = Math.round((good + bad) / 2);
      if (next <= good || next >= bad) {
        stopped = "converged";
        break;
      }
    }
    rate = next;
  }
  if (stopped === "max-steps" && good === null && bad !== null) stopped = "no-sustainable-rate";
  const breaking = brokeAt === null ? undefined : steps[brokeAt - 1];
  return {
    sustainableRate: good,
    interval: { lastGood: good, firstBad: bad },
    relativeWidth: good !== null && bad !== null ? (bad - good) / good : null,
    steps,
    brokeAt,
    boundBy: breaking?.boundBy ?? [],
    stopped,
  };
}
