/** What a run (./run.ts BenchRun) is given: the stack, the cell's plan, where results go, and the site. */
import type { EventEmitter } from "node:events";
import type { StackSpec } from "../../core/limits.ts";
import type { LockWait } from "../results/types.ts";
import type { CellPlan } from "./cell-plan.ts";
import type { RunSite } from "./site.ts";

export interface RunOptions {
  stack: StackSpec;
  plan: CellPlan;
  resultsRoot: string;
  invocation: string;
  /** aborting stops the run: what was measured is written with status "interrupted" */
  signal?: AbortSignal;
  /** the invocation's wait for the stack's lock before this run (./drive.ts lockStacks), kept in run.json */
  lockWait?: LockWait;
  /** project root (for the generator process and git commit) */
  projectRoot: string;
  /**
   * where the cell's components run; default: the local platform, provisioned for this run (LocalSite). A deployed
   * docker or azure stack passes its own (harness/remote/site.ts).
   */
  site?: (ctx: { runId: string; dir: string; events: EventEmitter }) => RunSite;
  /**
   * For tests only: awaited after the drain and before the ledger, with where the harness reaches the sink (e.g. to
   * inject faults at the sink that the ledger and the content check must find; test/e2e/fidelity-faults.test.ts).
   */
  beforeLedger?: (sink: { host: string; port: number; params: Record<string, string> }) => Promise<void>;
}
