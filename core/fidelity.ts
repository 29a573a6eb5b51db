/**
 * Content fidelity: after the drain, the stored rows are compared field by field with what the seeded generator sent
 * for their (gen, seq) (docs/design.md, "Rules for the numbers" → altered). Nothing sent is kept: generators are
 * deterministic (./events/source.ts: every row is a function of (fields, seed, genId, seq)), so the expectation is
 * recomputed here from the scenario's fields, the generator's seed and, for file replay, the replayed file (the
 * replayed field is compared by its SHA-256 digest, so a line is never held beyond its comparison).
 *
 * - Which rows: every stored row of every in-range (gen, seq) when the ledger's `stored` is at most `all`; beyond
 *   it a seeded sample of `sample` seqs drawn uniformly without replacement from all sent seqs (Floyd's algorithm
 *   over Mulberry32, ./events/source.ts), every stored copy of each drawn seq compared. The result says which mode
 *   ran, how many seqs and rows were compared, and the sample's seed.
 * - Rules per type (the sink states its own in `FieldRule.rule`):
 *   timestamp: the sent epoch milliseconds, truncated to the unit the sink keeps (`us`, `ms` or `s`), must equal the
 *   stored value in that unit; string: the sent UTF-8 bytes, after the sink's documented normalisation
 *   (`normalise`, identity when the sink stores bytes as given), must equal the stored bytes; int, float: exact
 *   (IEEE 754 equality of the double); bool: equal.
 * - altered = stored rows (copies counted) with at least one compared field that differs; `examples` lists the
 *   first MAX_ALTERED_EXAMPLES differences (gen, seq, field, expected, stored) in the order compared.
 * - Not compared: gen and seq (the keys the row is found by), sent_at (the send time, written when the batch is
 *   handed to the transport: not recomputable), rows whose (gen, seq) was never sent (the ledger's unexpected), and
 *   fields the sink cannot return (`FieldRule.readable` false, with the reason).
 */
import { createHash } from "node:crypto";
import type { ReplayIndexJson } from "./events/replay-index.ts";
import {
  createEventSource,
  fmix32,
  mulberry32,
  type EventSource,
  type ReplayReads,
} from "./events/source.ts";
import type { EventField } from "./events/types.ts";

/** How many differences a result lists. */
export const MAX_ALTERED_EXAMPLES = 5;
/** Seqs per `readRange` call when every row is compared. */
export const FIDELITY_PAGE = 10_000;
/** Seqs per `readSeqs` call when a sample is compared. */
export const FIDELITY_LOOKUP = 1000;
/** Seqs per `readSample` call (one pass of the table each): bounds the rows held at once (~100 MB at 1 KB a row). */
export const FIDELITY_SCAN = 100_000;
/** Default limits: compare every row up to a million stored rows, else a sample of 10 000 seqs. */
export const DEFAULT_FIDELITY: FidelityLimits = { all: 1_000_000, sample: 10_000 };

/** A scenario's `fidelity` setting: compare every row when stored ≤ `all`, else `sample` seeded seqs. */
export interface FidelityLimits {
  all: number;
  sample: number;
}

/** The unit a sink keeps timestamps in: microseconds, milliseconds or seconds since the epoch (UTC). */
export type TimeUnit = "us" | "ms" | "s";

/** How a sink keeps one declared field, as its row reader states it. */
export interface FieldRule {
  name: string;
  /** false: the sink cannot return this field (`reason` says why); it is listed as not compared */
  readable: boolean;
  /** timestamps: the unit of the stored value */
  unit?: TimeUnit;
  /** strings: the sink's documented normalisation of what it stores (absent: bytes kept as sent) */
  normalise?: (sent: Buffer) => Buffer;
  /** the sink's rule in words, e.g. "timestamptz, microseconds" or "String, bytes as sent" */
  rule: string;
  reason?: string;
}

/**
 * A stored value as a reader returns it: timestamps as an integer count of `FieldRule.unit` since the epoch,
 * strings as their bytes (Buffer) or a JS string (then UTF-8 encoded), ints and floats as numbers, bools as
 * booleans; null for SQL NULL or an absent key; undefined where the field is not readable.
 */
export type StoredValue = number | string | boolean | Buffer | null | undefined;

/** One stored row: its keys and its declared fields' values, in declared order. */
export interface StoredRow {
  gen: number;
  seq: number;
  values: StoredValue[];
}

/** The optional part of a verifier that reads stored rows back (core/verifier.ts `Verifier.rows`). */
export interface StoredRowReader {
  /** how the sink keeps each declared field, in declared order */
  rules(): FieldRule[];
  /** every stored row (all copies) whose gen column is `gen` with from ≤ seq < to, in any order */
  readRange(gen: number, from: number, to: number): Promise<StoredRow[]>;
  /** every stored row (all copies) whose gen column is `gen` and whose seq is in `seqs` (sorted, distinct), in any order */
  readSeqs(gen: number, seqs: readonly number[]): Promise<StoredRow[]>;
  /**
   * Optional, for a sink whose table has no (gen, seq) index: every stored row (all copies) of any of the keys
   * `wanted` (per gen column value, seqs sorted and distinct; at most FIDELITY_SCAN seqs in all), in any order, in
   * one pass over the table. When present, a sample is read with it instead of `readSeqs` chunks: one sequential
   * scan rather than an index built over every stored row (plugins/sinks/postgres/rows.ts).
   */
  readSample?(wanted: ReadonlyArray<{ gen: number; seqs: readonly number[] }>): Promise<StoredRow[]>;
  /**
   * Optional, with readSample: told every key the sample will read (samplePlan's `wanted`) before the ledger runs
   * (harness/runner/fidelity.ts), so that the ledger's own pass of the table can note where their rows lie and
   * readSample, waiting for that pass, reads those rows alone (plugins/sinks/postgres/rows.ts: by ctid).
   */
  expectSample?(wanted: ReadonlyArray<{ gen: number; seqs: readonly number[] }>): void;
}

/** One difference between what was sent and what is stored. Values rendered as text (timestamps ISO 8601 UTC). */
export interface AlteredExample {
  /** the generator's index 0..n-1 (as in the ledger's missingRanges) */
  gen: number;
  seq: number;
  field: string;
  expected: string;
  stored: string;
}

/** The content check of a run, written beside the ledger as `ledger.fidelity`. */
export interface FidelityResult {
  /** "all": every stored row compared; "sample": the stored copies of a seeded sample of seqs */
  mode: "all" | "sample";
  limits: FidelityLimits;
  /** seqs drawn (sample mode) */
  sampleSize?: number;
  /** seed of the sample (sample mode) */
  sampleSeed?: number;
  /** distinct (gen, seq) found and compared */
  seqsCompared: number;
  /** stored rows compared (copies included) */
  rowsCompared: number;
  /** stored rows with at least one differing field */
  altered: number;
  /** differing rows per field */
  alteredByField: Record<string, number>;
  examples: AlteredExample[];
  /** the declared fields compared, each with the sink's rule */
  compared: Array<{ field: string; type: string; rule: string }>;
  /** what is not compared, and why */
  notCompared: Array<{ field: string; reason: string }>;
  /** wall-clock time the check took (reading rows back and comparing), seconds */
  seconds: number;
  /**
   * what was read of the replay file (bytes, reopenings at the index's marks, an index dropped and why) and the wall
   * time of those reads, seconds (beside the sink's reads: the check's `seconds` is the longer of the two and more)
   */
  replay?: ReplayCheckReads;
  /**
   * set when the replay file's mtime is later than the generators' start (harness/runner/fidelity.ts): the lines
   * recomputed after the load may not be the ones sent, so altered rows may be the file's doing, not the pipeline's
   */
  replayModified?: { at: string; generatorsStarted: string };
  /**
   * of the replay file's lines the generators read (`lines`, from line 0), how many they changed before sending, by
   * the generators' own account (their index, ./events/replay-index.ts): `cut` at 64 KiB, `repaired` (invalid UTF-8 or
   * NUL replaced). A compared row is "as sent", which for those lines is not the file's text. Absent without a replay
   * file or an index.
   */
  replayLines?: { lines: number; cut: number; repaired: number };
}

/** What the content check read of a replay file (./events/source.ts ReplayReads) and the reads' wall time, seconds. */
export type ReplayCheckReads = ReplayReads & { seconds: number };

/** What the expectation is recomputed from: the scenario's fields, the generator's seed, the replayed file. */
export interface FidelityInput {
  fields: readonly EventField[];
  /** the generator's `seed` (every generator of a run uses the same one, with its own genId) */
  seed: number;
  replayFile?: string;
  /** the generators' index of replayFile (./events/replay-index.ts): sampled lines are read from their marks */
  replayIndex?: ReplayIndexJson;
  /** sent[g]: seqs 0..sent[g]-1 of generator index g */
  sent: readonly number[];
  /**
   * the run's first generator id (core/ledger.ts, "Run identity"): generator index g's rows carry gen = genBase + g
   * and are read by that gen, so rows of another run are never compared (they are the ledger's foreign). Default 0.
   */
  genBase?: number;
  /** stored rows (the ledger's), deciding between all and sample */
  stored: number;
  limits: FidelityLimits;
  /** when it aborts (Ctrl-C), the file's pass stops at its next line (the sink's reads end with their connection) */
  signal?: AbortSignal;
}

const UNIT_MS: Readonly<Record<TimeUnit, number>> = { us: 0.001, ms: 1, s: 1000 };

/** The sent epoch ms in `unit`, truncated toward −∞ (what a sink that keeps `unit` stores). */
export function timeInUnit(ms: number, unit: TimeUnit): number {
  return unit === "us" ? Math.round(ms * 1000) : unit === "ms" ? Math.floor(ms) : Math.floor(ms / 1000);
}

/** A stored time in `unit` as ISO 8601 UTC (microseconds written as 6 fraction digits). */
export function renderTime(v: number, unit: TimeUnit): string {
  if (!Number.isFinite(v)) return String(v);
  if (unit !== "us") return new Date(v * UNIT_MS[unit]).toISOString();
  const ms = Math.floor(v / 1000);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 23)}${String(v - ms * 1000).padStart(3, "0")}Z`;
}

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
/** Bytes shown on either side of a string example's first difference. */
const CONTEXT_BYTES = 24;

/**
 * `b` as an example: JSON-quoted text (as UTF-8, lossy), whole when short, else the bytes around `at` (the first
 * difference) with "…" where cut, then "(N bytes, first difference at byte at)".
 */
export function shownBytes(b: Buffer, at = 0): string {
  if (b.length <= 2 * CONTEXT_BYTES + 16) return JSON.stringify(b.toString("utf8"));
  const from = Math.max(0, at - CONTEXT_BYTES);
  const to = Math.min(b.length, at + CONTEXT_BYTES);
  const text = `${from > 0 ? "…" : ""}${JSON.stringify(b.subarray(from, to).toString("utf8"))}${to < b.length ? "…" : ""}`;
  return `${text} (${b.length} bytes, first difference at byte ${at})`;
}

/** The first index where `a` and `b` differ (the shorter length when one is a prefix of the other). */
function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

/**
 * Draw `k` distinct integers from [0, n) with Floyd's algorithm (Bentley & Floyd, CACM 1987, "A sample of
 * brilliance") over Mulberry32(seed); sorted ascending. k ≥ n gives every integer.
 */
export function seededSample(n: number, k: number, seed: number): number[] {
  if (k >= n) return Array.from({ length: n }, (_, i) => i);
  const next = mulberry32(seed);
  const chosen = new Set<number>();
  for (let j = n - k; j < n; j++) {
    // uniform in [0, j]: 53 bits from two draws
    const t = Math.floor(((next() * 2 ** 21 + (next() >>> 11)) / 2 ** 53) * (j + 1));
    chosen.add(chosen.has(t) ? j : t);
  }
  return [...chosen].sort((a, b) => a - b);
}

/**
 * The sample of a run (see the file comment): its seed, and the drawn seqs per generator as `wanted` keys (gen the
 * stamped generator id, genBase + index; seqs ascending), in (gen, seq) order.
 */
export function samplePlan(input: Pick<FidelityInput, "seed" | "sent" | "limits" | "genBase">): {
  sampleSeed: number;
  wanted: Array<{ gen: number; seqs: number[] }>;
} {
  const totalSent = input.sent.reduce((a, b) => a + b, 0);
  const sampleSeed = fmix32((input.seed ^ 0x5f1de11) >>> 0);
  const picks = seededSample(totalSent, input.limits.sample, sampleSeed);
  // the picks (ascending over all sent seqs) per generator index, as that generator's seqs
  const perGen: number[][] = input.sent.map(() => []);
  let g = 0;
  let base = 0;
  for (const p of picks) {
    while (g < input.sent.length && p >= base + input.sent[g]!) base += input.sent[g++]!;
    if (g < input.sent.length) perGen[g]!.push(p - base);
  }
  return { sampleSeed, wanted: perGen.map((seqs, k) => ({ gen: (input.genBase ?? 0) + k, seqs })) };
}

/**
 * Compares stored rows with the recomputed rows of one run; `result()` summarises. A replayed line is read from the
 * file apart from the rest of its row (`replayDigests`), so that reading the file can overlap reading the sink: the
 * other fields are functions of (seed, generator index, field index, seq) alone (./events/source.ts fieldState), so a
 * source without the file gives them, and a line depends on the seq alone, whichever generator sent it.
 */
class Comparison {
  private readonly sources = new Map<number, EventSource>();
  /** the replayed file's lines, for every generator (absent without a replay) */
  private readonly lines: EventSource | null;
  private readonly perField: Record<string, number> = {};
  readonly examples: AlteredExample[] = [];
  altered = 0;
  rows = 0;
  seqsCompared = 0;
  readonly replayField: number;
  readonly genBase: number;
  private closed = false;
  /** wall time in replayDigests, ms */
  private replayMs = 0;

  constructor(
    private readonly input: FidelityInput,
    private readonly rules: FieldRule[],
  ) {
    this.genBase = input.genBase ?? 0;
    this.replayField =
      input.replayFile !== undefined ? input.fields.map((f) => f.type).lastIndexOf("string") : -1;
    this.lines =
      input.replayFile !== undefined
        ? createEventSource({
            fields: input.fields,
            seed: input.seed,
            genId: 0,
            genBase: this.genBase,
            replayFile: input.replayFile,
            replayIndex: input.replayIndex,
          })
        : null;
  }

  private source(gen: number): EventSource {
    let s = this.sources.get(gen);
    // the replayed field as short generated text here: it is never read from this source (replayDigests)
    const fields = this.input.fields.map((f, i) => (i === this.replayField ? { ...f, size: 1 } : f));
    if (!s)
      this.sources.set(
        gen,
        (s = createEventSource({ fields, seed: this.input.seed, genId: gen, genBase: this.genBase })),
      );
    return s;
  }

  /**
   * The SHA-256 digest (hex) of each wanted seq's replayed line as the sink would keep it (its `normalise`), read
   * forward through the file once per call: in line order (seq mod the file's line count) once that count is known,
   * since a load that went through the file several times samples each pass; null without a replay.
   * @throws ConfigurationError E_REPLAY when the file cannot be read
   */
  async replayDigests(
    wanted: ReadonlyArray<{ seqs: readonly number[] }>,
  ): Promise<Map<number, string> | null> {
    if (!this.lines) return null;
    const seqs = [...new Set(wanted.flatMap((w) => w.seqs))];
    const count = await this.lines.replayLineCount();
    // the seq of the first pass that carries each wanted seq's line (./events/source.ts: seq k carries line k mod count)
    const lineSeq = (seq: number): number => (count > 0 ? seq % count : seq);
    const read = [...new Set(seqs.map(lineSeq))].sort((a, b) => a - b);
    const normalise = this.rules[this.replayField]!.normalise;
    const digests = new Map<number, string>();
    const started = performance.now();
    for (const seq of read) {
      // the check ended (the sink's read failed beside this one) or the run was interrupted: stop rather than read on
      if (this.closed) throw new Error("content check closed");
      this.input.signal?.throwIfAborted();
      await this.lines.load(seq, 1);
      const row = this.lines.fill(seq);
      const line = Buffer.from(
        row.bytes[this.replayField]!.buffer,
        row.bytes[this.replayField]!.byteOffset,
        row.len[this.replayField]!,
      );
      digests.set(seq, sha256(normalise ? normalise(line) : line));
    }
    this.replayMs += performance.now() - started;
    return new Map(seqs.map((seq) => [seq, digests.get(lineSeq(seq))!]));
  }

  /**
   * Compare the stored rows read for one chunk of generator index `gen`'s seqs, with `digests` from replayDigests
   * over (at least) the chunk's seqs.
   */
  compare(gen: number, rows: StoredRow[], digests: Map<number, string> | null): void {
    const sent = this.input.sent[gen] ?? 0;
    const mine = rows
      .filter(
        (r) => r.gen === this.genBase + gen && Number.isSafeInteger(r.seq) && r.seq >= 0 && r.seq < sent,
      )
      .sort((a, b) => a.seq - b.seq);
    if (mine.length === 0) return;
    const src = this.source(gen);
    let prevSeq = -1;
    for (const r of mine) {
      const row = src.fill(r.seq);
      this.rows++;
      if (r.seq !== prevSeq) this.seqsCompared++;
      prevSeq = r.seq;
      let bad = false;
      this.input.fields.forEach((f, i) => {
        const rule = this.rules[i]!;
        if (!rule.readable) return;
        const got = r.values[i];
        let expected: string;
        let stored: string;
        let same: boolean;
        switch (f.type) {
          case "timestamp": {
            const unit = rule.unit ?? "ms";
            const want = timeInUnit(row.num[i]!, unit);
            same = typeof got === "number" && got === want;
            expected = renderTime(want, unit);
            stored = typeof got === "number" ? renderTime(got, unit) : String(got);
            break;
          }
          case "string": {
            const have =
              typeof got === "string" ? Buffer.from(got, "utf8") : Buffer.isBuffer(got) ? got : null;
            if (i === this.replayField) {
              const wd = digests?.get(r.seq);
              if (wd === undefined) throw new RangeError(`no replayed line read for seq ${r.seq}`);
              const hd = have ? sha256(have) : null;
              same = hd === wd;
              expected = `sha256:${wd}`;
              stored = hd ? `sha256:${hd} ${shownBytes(have!)}` : String(got);
            } else {
              const sentBytes = Buffer.from(row.bytes[i]!.buffer, row.bytes[i]!.byteOffset, row.len[i]!);
              const want = rule.normalise ? rule.normalise(sentBytes) : sentBytes;
              same = have !== null && have.equals(want);
              const at = have ? firstDifference(want, have) : 0;
              expected = shownBytes(want, at);
              stored = have ? shownBytes(have, at) : String(got);
            }
            break;
          }
          case "bool": {
            const want = row.num[i]! !== 0;
            same = got === want;
            expected = String(want);
            stored = String(got);
            break;
          }
          default: {
            const want = row.num[i]!;
            same = typeof got === "number" && got === want;
            expected = String(want);
            stored = String(got);
          }
        }
        if (same) return;
        bad = true;
        this.perField[f.name] = (this.perField[f.name] ?? 0) + 1;
        if (this.examples.length < MAX_ALTERED_EXAMPLES)
          this.examples.push({ gen, seq: r.seq, field: f.name, expected, stored });
      });
      if (bad) this.altered++;
    }
  }

  get byField(): Record<string, number> {
    return { ...this.perField };
  }

  /** What the file's pass read and how long it took (null without a replay); final once closed. */
  get replayReads(): ReplayCheckReads | null {
    const r = this.lines?.replayReads();
    return r ? { ...r, seconds: Number((this.replayMs / 1000).toFixed(3)) } : null;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.sources.values()) await s.close();
    await this.lines?.close();
  }
}

/**
 * Compare what the sink stored with what was sent (see the file comment).
 * @throws whatever the reader throws (a sink error while reading rows back), or ConfigurationError from the event
 *   source (bad fields, an unreadable replay file)
 */
export async function checkFidelity(reader: StoredRowReader, input: FidelityInput): Promise<FidelityResult> {
  const rules = reader.rules();
  if (rules.length !== input.fields.length)
    throw new RangeError(`row reader states ${rules.length} field rules for ${input.fields.length} fields`);
  const cmp = new Comparison(input, rules);
  const started = performance.now();
  const mode: FidelityResult["mode"] = input.stored <= input.limits.all ? "all" : "sample";
  let sampleSeed: number | undefined;
  let sampleSize: number | undefined;
  try {
    if (mode === "all") {
      for (let g = 0; g < input.sent.length; g++) {
        for (let from = 0; from < input.sent[g]!; from += FIDELITY_PAGE) {
          const to = Math.min(input.sent[g]!, from + FIDELITY_PAGE);
          const [rows, digests] = await Promise.all([
            reader.readRange(cmp.genBase + g, from, to),
            cmp.replayDigests([{ seqs: Array.from({ length: to - from }, (_, k) => from + k) }]),
          ]);
          cmp.compare(g, rows, digests);
        }
      }
    } else {
      const plan = samplePlan(input);
      sampleSeed = plan.sampleSeed;
      const perGen = plan.wanted.map((w) => w.seqs);
      sampleSize = perGen.reduce((n, seqs) => n + seqs.length, 0);
      if (reader.readSample) {
        // passes of up to FIDELITY_SCAN seqs in (gen, seq) order; a pass's rows compared per generator, in order
        let wanted: { gen: number; seqs: number[] }[] = [];
        let n = 0;
        const pass = async (): Promise<void> => {
          if (n === 0) return;
          // the sink's pass and the file's pass at once: they wait on different things (the sink's table, the file)
          const [rows, digests] = await Promise.all([reader.readSample!(wanted), cmp.replayDigests(wanted)]);
          for (const w of wanted)
            cmp.compare(
              w.gen - cmp.genBase,
              rows.filter((r) => r.gen === w.gen),
              digests,
            );
          wanted = [];
          n = 0;
        };
        for (let k = 0; k < perGen.length; k++) {
          for (let at = 0; at < perGen[k]!.length;) {
            const take = Math.min(FIDELITY_SCAN - n, perGen[k]!.length - at);
            wanted.push({ gen: cmp.genBase + k, seqs: perGen[k]!.slice(at, at + take) });
            n += take;
            at += take;
            if (n === FIDELITY_SCAN) await pass();
          }
        }
        await pass();
      } else {
        for (let k = 0; k < perGen.length; k++) {
          for (let at = 0; at < perGen[k]!.length; at += FIDELITY_LOOKUP) {
            const seqs = perGen[k]!.slice(at, at + FIDELITY_LOOKUP);
            const [rows, digests] = await Promise.all([
              reader.readSeqs(cmp.genBase + k, seqs),
              cmp.replayDigests([{ seqs }]),
            ]);
            cmp.compare(k, rows, digests);
          }
        }
      }
    }
  } finally {
    await cmp.close();
  }
  const compared: FidelityResult["compared"] = [];
  const notCompared: FidelityResult["notCompared"] = [
    { field: "gen, seq", reason: "the keys each row is found by" },
    {
      field: "sent_at",
      reason:
        "the send time, written when the batch is handed to the transport: not recomputable from the seed",
    },
  ];
  input.fields.forEach((f, i) => {
    const r = rules[i]!;
    if (r.readable)
      compared.push({
        field: f.name,
        type: f.type,
        rule: i === cmp.replayField ? `${r.rule}; replayed lines compared by SHA-256 digest` : r.rule,
      });
    else notCompared.push({ field: f.name, reason: r.reason ?? "the sink cannot return it" });
  });
  return {
    mode,
    limits: { ...input.limits },
    ...(mode === "sample" ? { sampleSize, sampleSeed } : {}),
    seqsCompared: cmp.seqsCompared,
    rowsCompared: cmp.rows,
    altered: cmp.altered,
    alteredByField: cmp.byField,
    examples: cmp.examples,
    compared,
    notCompared,
    seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
    ...(cmp.replayReads ? { replay: cmp.replayReads } : {}),
    ...(input.replayFile !== undefined && input.replayIndex
      ? {
          replayLines: {
            lines: input.replayIndex.lines,
            cut: input.replayIndex.cut ?? 0,
            repaired: input.replayIndex.repaired ?? 0,
          },
        }
      : {}),
  };
}

/**
 * A JSON document's declared fields as StoredValues, for sinks that keep the event as JSON (an Elasticsearch
 * `_source`, a Loki line): timestamps from ISO 8601 text (Date.parse: milliseconds, finer digits dropped) or an
 * epoch-ms number, in ms; strings as the UTF-8 bytes of the decoded JSON string (RFC 8259 §7: escapes decoded, the
 * text otherwise as sent); numbers and booleans as parsed. An absent key is null; a value of another JSON type is
 * kept as its JSON text, so it differs from what was sent.
 */
export function jsonValues(fields: readonly EventField[], doc: unknown): StoredValue[] {
  const d = doc !== null && typeof doc === "object" ? (doc as Record<string, unknown>) : {};
  return fields.map((f) => {
    const v = d[f.name];
    if (v === undefined || v === null) return null;
    switch (f.type) {
      case "timestamp":
        if (typeof v === "number") return Math.floor(v);
        if (typeof v === "string") {
          const t = Date.parse(v);
          return Number.isFinite(t) ? t : v;
        }
        break;
      case "string":
        if (typeof v === "string") return Buffer.from(v, "utf8");
        break;
      case "bool":
        if (typeof v === "boolean") return v;
        break;
      default:
        if (typeof v === "number") return v;
    }
    return JSON.stringify(v);
  });
}
