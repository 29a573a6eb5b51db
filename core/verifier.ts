/**
 * Verifier contract: the sink-side half. Runs in the harness process and talks to the sink over the control link.
 */
import type { EventField } from "./events/types.ts";
import type { FidelityResult, StoredRowReader } from "./fidelity.ts";

export interface VerifierContext {
  /** address and port of the sink as reachable from the harness (control link) */
  host: string;
  port: number;
  params: Record<string, string>;
  fields: EventField[];
}

/** One timed count. tBefore/tAfter are epoch milliseconds (performance.timeOrigin + performance.now()) around the query. */
export interface CountSample {
  tBefore: number;
  tAfter: number;
  stored: number;
  /** newest sent_at among stored rows, epoch ms, or null when empty */
  newestSentAtMs: number | null;
}

/** The integrity account of a run (docs/design.md, "Rules for the numbers"). */
export interface Ledger {
  sent: number;
  accepted: number;
  stored: number;
  distinct: number;
  lost: number;
  duplicated: number;
  overwritten: number;
  rejected: number;
  /** stored rows whose seq was never sent (stored > sent is a failure) */
  unexpected: number;
  /** first missing seq ranges, inclusive, per generator: [gen, from, to] */
  missingRanges: Array<[number, number, number]>;
  /**
   * stored rows whose content differs from what the generator sent for their (gen, seq) (core/fidelity.ts); absent
   * when the sink's verifier cannot read rows back (then `fidelity` says so)
   */
  altered?: number;
  /** the content check behind `altered`: mode, sizes, rules per field, first examples (core/fidelity.ts) */
  fidelity?: FidelityResult | { unavailable: string };
}

export interface Verifier {
  /** create the schema (table/index/container) from the scenario's fields */
  prepare(): Promise<void>;
  /** a timed count of stored rows; `full` asks for a count of every row even where the verifier counts incrementally */
  sample(options?: { full?: boolean }): Promise<CountSample>;
  /** exact account given what each generator sent (sent[genId] = number of seqs 0..n-1) and rejected ranges */
  ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger>;
  /** reads stored rows back for the content check (core/fidelity.ts); absent: the sink cannot, and the result says so */
  rows?: StoredRowReader;
  close(): Promise<void>;
}

export interface VerifierFactory {
  name: string;
  create(ctx: VerifierContext): Verifier;
}
