/**
 * The run's content check (core/fidelity.ts) after its ledger: recomputes what each generator sent from the cell's
 * fields, the generator's `seed` (default 42, harness/generators/loop.ts batchLoopFields) and the replayed file, and
 * compares the sink's stored rows with it. Writes `altered` and `fidelity` into the ledger; a verifier without a row
 * reader leaves `altered` absent and says so in `fidelity.unavailable`.
 */
import { checkFidelity, DEFAULT_FIDELITY } from "../../core/fidelity.ts";
import type { Ledger, Verifier } from "../../core/verifier.ts";
import type { CellPlan } from "./cell-plan.ts";

/** The generators' seed: their config's `seed`, else the batch loop's default 42. */
export function generatorSeed(plan: Pick<CellPlan, "generator">): number {
  const s = plan.generator.config.seed;
  return typeof s === "number" && Number.isSafeInteger(s) ? s : 42;
}

/**
 * Add `altered` and `fidelity` to `ledger` (in place) for the rows `verifier` holds; `sent[g]` as given to the ledger,
 * `genBase` the run's first generator id (core/ledger.ts, "Run identity": rows of other runs are never compared).
 * @throws what the verifier's row reader throws (the run ends in error: a verdict without its content check is none)
 */
export async function addFidelity(ledger: Ledger, verifier: Verifier, plan: Pick<CellPlan, "fields" | "generator" | "replayFile" | "fidelity" | "sink">, sent: number[], genBase = 0): Promise<Ledger> {
  if (!verifier.rows) {
    ledger.fidelity = { unavailable: `the ${plan.sink.name} verifier cannot read stored rows back: content not compared` };
    return ledger;
  }
  const result = await checkFidelity(verifier.rows, {
    fields: plan.fields, seed: generatorSeed(plan), replayFile: plan.replayFile, sent, genBase, stored: ledger.stored,
    limits: plan.fidelity ?? DEFAULT_FIDELITY,
  });
  ledger.altered = result.altered;
  ledger.fidelity = result;
  return ledger;
}
