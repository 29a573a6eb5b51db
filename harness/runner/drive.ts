/**
 * Driving BenchRuns for a command: provision each stack, run each planned cell, print progress and a description
 * of every run, stop cleanly on SIGINT/SIGTERM. Shared by `ingestbench bench` and `ingestbench nightly`.
 */
import type { StackSpec } from "../../infra/limits.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";
import { BenchRun, type CellPlan } from "./run.ts";

/** Exit code per error kind recorded in run.json (see errors.ts). */
export const EXIT_BY_KIND: Record<string, number> = { configuration: 2, provisioning: 3, verification: 4, run: 3 };

const fmtInt = (n: number): string => Math.round(n).toLocaleString("en-US");

function progressPrinter(label: string, quiet: boolean): (p: SeriesPoint, ctx: { loadEndS: number }) => void {
  const tty = process.stderr.isTTY;
  let lastPrinted = 0;
  return (p, ctx) => {
    if (quiet) return;
    const line = `${label} ${p.phase.padEnd(7)} ${p.elapsedS.toFixed(0).padStart(4)}s/${ctx.loadEndS.toFixed(0)}s  `
      + `${p.rowsPerSec === null ? "–" : fmtInt(p.rowsPerSec)} rows/s  stored ${fmtInt(p.stored)}  `
      + `lag ${p.lagMs === null ? "–" : `${fmtInt(p.lagMs)} ms`}`;
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else if (p.t - lastPrinted >= 5000 || p.phase === "drain") {
      process.stderr.write(`${line}\n`);
      lastPrinted = p.t;
    }
  };
}

export function describeRun(r: RunRecord): string {
  const lines = [`run ${r.runId}: ${r.status}  → results/${r.stack}/${r.scenario}/${r.runId}/`];
  for (const [host, l] of Object.entries(r.limits)) {
    if (!l.enforced) lines.push(`  !! limits NOT enforced on ${host}: ${l.notes.join("; ")}`);
  }
  if (r.summary) {
    const s = r.summary;
    lines.push(`  ${fmtInt(s.rowsPerSecond)} rows/s, ${s.mibPerSecond.toFixed(2)} MiB/s over ${s.measuredSeconds.toFixed(1)} s; sink ${s.sinkCores.toFixed(2)} cores`
      + `${s.throttledShare === null ? "" : `, throttled in ${(s.throttledShare * 100).toFixed(0)} % of periods`}, link ${s.sinkNetworkMbitPerSecond.toFixed(1)} Mbit/s`);
    lines.push(`  bottleneck: ${s.bottleneck.resource} (${s.bottleneck.evidence})`);
  }
  if (r.ledger) {
    const l = r.ledger;
    lines.push(`  ledger: sent ${fmtInt(l.sent)}, stored ${fmtInt(l.stored)}, distinct ${fmtInt(l.distinct)}, lost ${fmtInt(l.lost)}, duplicated ${fmtInt(l.duplicated)}, rejected ${fmtInt(l.rejected)}`
      + (l.missingRanges.length ? `; first missing ${l.missingRanges.slice(0, 3).map(([g, a, b]) => `gen ${g} ${a}..${b}`).join(", ")}` : ""));
  }
  for (const c of r.checks.filter((c) => !c.ok)) lines.push(`  check failed: ${c.check} ${c.expected}, got ${c.actual}`);
  if (r.error) lines.push(`  error ${r.error.code}: ${r.error.message}`);
  return lines.join("\n");
}

/** One unit of work: a stack and the cells planned for it. */
export interface StackWork {
  stack: StackSpec;
  plans: CellPlan[];
}

export interface DriveOptions {
  resultsRoot: string;
  /** invocation timestamp shared by every run (ISO) */
  invocation: string;
  projectRoot: string;
  quiet?: boolean;
}

export interface DriveResult {
  records: RunRecord[];
  /** the signal that interrupted the runs, or null */
  interrupted: NodeJS.Signals | null;
}

/**
 * Run every planned cell of every stack in order (one BenchRun each), printing progress to stderr and a
 * description of each run to stdout. SIGINT/SIGTERM stop after the current run has torn down.
 */
export async function driveRuns(work: StackWork[], options: DriveOptions): Promise<DriveResult> {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      process.stderr.write(`\n${sig} again: still tearing down, please wait\n`);
      return;
    }
    process.stderr.write(`\n${sig}: stopping; tearing down and keeping what was measured\n`);
    controller.abort(sig);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const records: RunRecord[] = [];
  try {
    for (const { stack, plans } of work) {
      for (const plan of plans) {
        if (controller.signal.aborted) break;
        const label = `[${stack.name} ${plan.scenario} ${plan.cell} r${plan.replicate}]`;
        if (!options.quiet) process.stderr.write(`${label} provisioning ${stack.platform} hosts: ${Object.keys(stack.hosts).join(", ")}\n`);
        const run = new BenchRun({ stack, plan, resultsRoot: options.resultsRoot, invocation: options.invocation, signal: controller.signal, projectRoot: options.projectRoot });
        run.on("tick", progressPrinter(label, Boolean(options.quiet)));
        const record = await run.run();
        if (process.stderr.isTTY && !options.quiet) process.stderr.write("\n");
        process.stdout.write(`${describeRun(record)}\n`);
        records.push(record);
      }
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return { records, interrupted: controller.signal.aborted ? (controller.signal.reason as NodeJS.Signals) : null };
}

/** The exit code of a set of runs: 130/143 when interrupted, the worst error kind, 1 on failed checks, else 0. */
export function runsExitCode(result: DriveResult): number {
  if (result.interrupted) return result.interrupted === "SIGTERM" ? 143 : 130;
  const errors = result.records.filter((r) => r.status === "error");
  if (errors.length > 0) return Math.max(...errors.map((r) => EXIT_BY_KIND[r.error?.kind ?? "run"] ?? 3));
  if (result.records.some((r) => r.status === "failed")) return 1;
  return 0;
}
