/**
 * The run's content check (core/fidelity.ts) beside or after its ledger: recomputes what each generator sent from the
 * cell's fields, the generator's `seed` (default 42, harness/generators/loop.ts batchLoopFields) and the replayed file,
 * and compares the sink's stored rows with it. Writes `altered` and `fidelity` into the ledger; a verifier without a row
 * reader leaves `altered` absent and says so in `fidelity.unavailable`.
 */
import {
  checkFidelity,
  DEFAULT_FIDELITY,
  samplePlan,
  type FidelityInput,
  type FidelityResult,
} from "../../core/fidelity.ts";
import { stat } from "node:fs/promises";
import type { ReplayIndexJson } from "../../core/events/replay-index.ts";
import type { Ledger, Verifier } from "../../core/verifier.ts";
import type { CellPlan } from "./cell-plan.ts";

/** The generators' seed: their config's `seed`, else the batch loop's default 42. */
export function generatorSeed(plan: Pick<CellPlan, "generator">): number {
  const s = plan.generator.config.seed;
  return typeof s === "number" && Number.isSafeInteger(s) ? s : 42;
}

/** How long the ledger and the content check took, ms (wall): each on its own, and both together (they overlap). */
export interface AfterLoadTimes {
  ledgerMs: number;
  fidelityMs: number | null;
  afterLoadMs: number;
}

/** What the after-load work needs beside the plan and the generators' totals. */
export interface AfterLoadOptions {
  /** the run's first generator id (core/ledger.ts, "Run identity"); default 0 */
  genBase?: number;
  /** the run's Ctrl-C: stops the replay file's pass at its next line */
  signal?: AbortSignal;
  /** the generators' index of the replay file (core/events/replay-index.ts): the content check reads near each line */
  replayIndex?: ReplayIndexJson;
  /** when the generators started (epoch ms): a replay file modified since is said to be (FidelityResult.replayModified) */
  generatorsStartedMs?: number;
}

/**
 * The run's ledger, then `altered` and `fidelity` added to it (addFidelity), with the content check started beside
 * the ledger when it will compare a sample: the sample depends only on what was sent (core/fidelity.ts seededSample),
 * and the ledger decides "sample" rather than "all" whenever it finds more than `fidelity.all` stored rows, so with
 * more than that sent the sample's reads start at once: the replay file's sampled lines beside the ledger's pass
 * (read at the marks of `opts.replayIndex` when the generators gave one), and the sink's rows as the reader can (told
 * the sample first, `expectSample`, PostgreSQL's reader locates its rows during the ledger's own pass and fetches them
 * close behind it: plugins/sinks/postgres/rows.ts). Should the ledger find at most
 * `all` stored rows after all (rows lost), the early sample is awaited and discarded, and every row is compared.
 * `signal` (the run's Ctrl-C) stops the file's pass of a replay at its next line.
 * @throws what the ledger or the row reader throws (a verdict without its content check is none)
 */
export async function ledgerWithFidelity(
  verifier: Verifier,
  plan: Pick<CellPlan, "fields" | "generator" | "replayFile" | "fidelity" | "sink">,
  sent: number[],
  rejected: Array<Array<[number, number]>>,
  opts: AfterLoadOptions = {},
): Promise<{ ledger: Ledger; times: AfterLoadTimes }> {
  const { genBase = 0, signal, replayIndex } = opts;
  const started = performance.now();
  const limits = plan.fidelity ?? DEFAULT_FIDELITY;
  const totalSent = sent.reduce((a, b) => a + b, 0);
  let fidelityMs: number | null = null;
  let early: Promise<FidelityResult> | null = null;
  if (verifier.rows && totalSent > limits.all) {
    const input = { ...fidelityInput(plan, sent, genBase, replayIndex), stored: totalSent, signal };
    expectContentSample(verifier, plan, sent, genBase);
    early = checkFidelity(verifier.rows, input).finally(() => {
      fidelityMs = performance.now() - started;
    });
  }
  let ledger: Ledger;
  try {
    ledger = await verifier.ledger(sent, rejected);
  } catch (err) {
    early?.catch(() => undefined); // ended with the verifier's connections; its error is not the run's
    throw err;
  }
  const ledgerMs = performance.now() - started;
  if (early && ledger.stored > limits.all) setFidelity(ledger, await early);
  else {
    await early?.catch(() => undefined);
    const t = performance.now();
    await addFidelity(ledger, verifier, plan, sent, opts);
    if (verifier.rows) fidelityMs = performance.now() - t;
  }
  const afterLoadMs = performance.now() - started;
  await noteReplayModified(ledger, plan.replayFile, opts.generatorsStartedMs);
  return { ledger, times: { ledgerMs, fidelityMs, afterLoadMs } };
}

/**
 * Tell the verifier's row reader the sample the content check will read (StoredRowReader.expectSample), when it will
 * read a sample (more than `fidelity.all` sent): it depends only on what was sent (core/fidelity.ts seededSample), so
 * the runner tells it before the completion wait, whose passes can then locate it (plugins/sinks/postgres/verifier.ts
 * missing()), and ledgerWithFidelity again before the ledger.
 */
export function expectContentSample(
  verifier: Verifier,
  plan: Pick<CellPlan, "fields" | "generator" | "replayFile" | "fidelity">,
  sent: number[],
  genBase = 0,
): void {
  const limits = plan.fidelity ?? DEFAULT_FIDELITY;
  if (!verifier.rows?.expectSample || sent.reduce((a, b) => a + b, 0) <= limits.all) return;
  verifier.rows.expectSample(samplePlan({ seed: generatorSeed(plan), sent, limits, genBase }).wanted);
}

/**
 * When the replay file's mtime is later than `since` (the generators' start, epoch ms), say so in the content check's
 * result: it recomputed the lines from the file as it is now. A file that cannot be stat()ed is left to the check's
 * own error.
 */
async function noteReplayModified(
  ledger: Ledger,
  file: string | undefined,
  since: number | undefined,
): Promise<void> {
  const f = ledger.fidelity;
  if (file === undefined || since === undefined || !f || !("mode" in f)) return;
  const st = await stat(file).catch(() => null);
  if (st && st.mtimeMs > since)
    f.replayModified = {
      at: new Date(st.mtimeMs).toISOString(),
      generatorsStarted: new Date(since).toISOString(),
    };
}

/** What checkFidelity recomputes the run's rows from, but the ledger's stored count. */
function fidelityInput(
  plan: Pick<CellPlan, "fields" | "generator" | "replayFile" | "fidelity">,
  sent: number[],
  genBase: number,
  replayIndex: ReplayIndexJson | undefined,
): Omit<FidelityInput, "stored"> {
  return {
    fields: plan.fields,
    seed: generatorSeed(plan),
    replayFile: plan.replayFile,
    replayIndex,
    sent,
    genBase,
    limits: plan.fidelity ?? DEFAULT_FIDELITY,
  };
}

function setFidelity(ledger: Ledger, result: FidelityResult): void {
  ledger.altered = result.altered;
  ledger.fidelity = result;
}

/**
 * Add `altered` and `fidelity` to `ledger` (in place) for the rows `verifier` holds; `sent[g]` as given to the ledger,
 * `opts` as ledgerWithFidelity's (rows of other runs than genBase's are never compared: core/ledger.ts, "Run identity").
 * @throws what the verifier's row reader throws (the run ends in error: a verdict without its content check is none)
 */
async function addFidelity(
  ledger: Ledger,
  verifier: Verifier,
  plan: Pick<CellPlan, "fields" | "generator" | "replayFile" | "fidelity" | "sink">,
  sent: number[],
  opts: AfterLoadOptions,
): Promise<Ledger> {
  if (!verifier.rows) {
    ledger.fidelity = {
      unavailable: `the ${plan.sink.name} verifier cannot read stored rows back: content not compared`,
    };
    return ledger;
  }
  const input = fidelityInput(plan, sent, opts.genBase ?? 0, opts.replayIndex);
  setFidelity(
    ledger,
    await checkFidelity(verifier.rows, { ...input, stored: ledger.stored, signal: opts.signal }),
  );
  return ledger;
}
