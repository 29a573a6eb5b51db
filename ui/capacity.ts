/**
 * The capacity search's printed words (harness/results/capacity.ts holds the records): a step's line, the sustainable
 * rate in words, the steps as a table with the result, and the capacity ratio across stacks.
 */
import Table from "cli-table3";
import { kernelRelease } from "../harness/results/format.ts";
import type { CapacityFile, CapacityRow, CapacityStep } from "../harness/results/capacity.ts";
import { int as fmt, ms, pct } from "./format.ts";

/** "step 3/8 bisect 3,000/s: sustained (stored 2,990/s, delivery p99 410 ms, lag +0.002 s/s, steady)" or "… NOT sustained: …". */
export function stepLine(s: CapacityStep, maxSteps: number): string {
  const figures = [
    `sent ${fmt(s.sentPerSec)}/s`,
    `stored ${fmt(s.storedPerSec)}/s`,
    s.deliveryP99Ms !== null ? `delivery p99 ${ms(s.deliveryP99Ms)}` : `lag p99 ${ms(s.lagP99Ms)}`,
    s.lagSlope === null ? null : `lag ${s.lagSlope >= 0 ? "+" : ""}${s.lagSlope.toFixed(3)} s/s`,
    s.verdict,
  ]
    .filter(Boolean)
    .join(", ");
  const head = `step ${s.index}/${maxSteps} ${s.phase} ${fmt(s.offeredPerSec)}/s offered`;
  return s.ok
    ? `${head}: sustained (${figures})`
    : `${head}: NOT sustained, ${s.boundBy.join(" + ")}: ${s.reasons.join("; ")} (${figures})`;
}

/** "3,000 events/s (last good 3,000, first bad 3,500: within 16.7 %)", or what was not found. */
export function sustainedText(f: CapacityFile): string {
  const r = f.result;
  const scale = f.entries;
  const good = r.interval.lastGood === null ? null : r.interval.lastGood * scale;
  const bad = r.interval.firstBad === null ? null : r.interval.firstBad * scale;
  if (good === null)
    return bad === null ? "not measured" : `none: even ${fmt(bad)} events/s was not sustained`;
  if (bad === null) return `≥ ${fmt(good)} events/s (no step failed within ${f.search.maxSteps} steps)`;
  return `${fmt(good)} events/s (last good ${fmt(good)}, first bad ${fmt(bad)}: within ${pct(r.relativeWidth ?? 0, 1)})`;
}

/** The steps as a table (the capacity curve: offered vs sent vs stored vs p99 latency), then the result. */
export function renderCapacity(f: CapacityFile, where?: string): string {
  const table = new Table({
    head: [
      "step",
      "phase",
      "offered/s",
      "sent/s",
      "stored/s",
      "delivery p99",
      "lag p99",
      "lag slope s/s",
      "verdict",
      "lost",
      "result",
    ],
    style: { head: [], border: [] },
  });
  for (const s of f.result.steps) {
    table.push([
      s.index,
      s.phase,
      fmt(s.offeredPerSec),
      fmt(s.sentPerSec),
      fmt(s.storedPerSec),
      ms(s.deliveryP99Ms),
      ms(s.lagP99Ms),
      s.lagSlope === null ? "–" : s.lagSlope.toFixed(3),
      s.verdict ?? "–",
      fmt(s.lost),
      s.ok ? "sustained" : `bound: ${s.boundBy.join(", ")}`,
    ]);
  }
  const r = f.result;
  // with no failed step sustainedText already says so
  const broke =
    r.brokeAt === null
      ? null
      : `broke at step ${r.brokeAt} (${fmt(r.steps[r.brokeAt - 1]!.offeredPerSec)}/s) on ${r.boundBy.join(" + ")}: ${r.steps[r.brokeAt - 1]!.reasons.join("; ")}`;
  const b = f.bounds;
  const lines = [
    `capacity of ${f.scenario} (${f.cell}) on ${f.stack}: steps of ${(f.stepWarmupMs / 1000).toFixed(0)} s warmup + ${(f.stepDurationMs / 1000).toFixed(0)} s measured; bounds: no loss, ≥ ${pct(b.minShare)} of the offered rate sent and stored, p99 ≤ ${fmt(b.p99BoundMs)} ms, lag slope ≤ ${b.maxLagSlope} s/s, verdict steady`,
    table.toString(),
    `sustainable: ${sustainedText(f)}${broke ? `; ${broke}` : ""}; stopped: ${r.stopped}`,
  ];
  if (f.machine)
    lines.push(
      `measured on ${f.machine.cpuModel}, ${f.machine.cores} cores, kernel ${kernelRelease(f.machine.kernel)}`,
    );
  if (where) lines.push(`stored in ${where}`);
  return lines.join("\n");
}

/**
 * Capacity across stacks: per stack the sustainable rate, its interval, what bound it, and the capacity ratio
 * (sustainable rate / the first stack's; "–" when either has none).
 */
export function renderCapacityComparison(scenario: string, rows: readonly CapacityRow[]): string {
  const base = rows[0]?.file?.result.sustainableRate ?? null;
  const baseScale = rows[0]?.file?.entries ?? 1;
  const table = new Table({
    head: ["stack", "sustainable events/s", "interval", "bound by", "steps", "capacity ratio"],
    style: { head: [], border: [] },
  });
  for (const { stack, file } of rows) {
    if (!file) {
      table.push([stack, "–", "–", "no capacity.json", "–", "–"]);
      continue;
    }
    const r = file.result;
    const good = r.interval.lastGood === null ? null : r.interval.lastGood * file.entries;
    const bad = r.interval.firstBad === null ? null : r.interval.firstBad * file.entries;
    const ratio =
      base !== null && base > 0 && good !== null ? `${(good / (base * baseScale)).toFixed(2)}x` : "–";
    table.push([
      stack,
      fmt(good),
      `[${fmt(good)}, ${fmt(bad)}]`,
      r.boundBy.join(", ") || "–",
      r.steps.length,
      ratio,
    ]);
  }
  return `${scenario}: capacity per stack; ratio to ${rows[0]?.stack ?? "–"}\n${table.toString()}`;
}
