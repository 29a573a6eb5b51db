/**
 * Reading stored rows back from PostgreSQL for the content check (core/fidelity.ts), over the verifier's `pg`
 * connection. What the table keeps (column types in ./verifier.ts PG_TYPES; PostgreSQL 18 documentation, "Data
 * Types"):
 * - timestamp → timestamptz, microsecond resolution (§8.5.1): read as integer microseconds since the epoch,
 *   `(extract(epoch FROM c) * 1000000)::bigint` (extract is exact numeric since PostgreSQL 14);
 * - string → text in the UTF8 database: stored as sent, no normalisation (text cannot hold NUL; the event source
 *   never sends one): read as bytes, `convert_to(c, 'UTF8')` (bytea);
 * - int → bigint, read as text; float → double precision, read as text with `extra_float_digits` 1 (the shortest
 *   text that reads back as the same double, PostgreSQL ≥ 12, §8.1.3); bool → boolean.
 * The table has no index (ingest stays honest). A sample (core/fidelity.ts `readSample`) told beforehand
 * (`expectSample`) is located during the ledger's own pass, which then reads each row's ctid beside gen and seq
 * (./verifier.ts scan(), SampleLocator below), and its rows are fetched by ctid (PostgreSQL 18 documentation, §5.6
 * "System Columns"; a TID Scan, §14.1 "Using EXPLAIN"), in batches close behind the pass (LOCATED_BATCH): a few
 * thousand pages, read while still in the page cache, rather than a second pass of the table.
 * Otherwise, or when a located ctid no longer holds its row, it is read in one sequential pass: the wanted keys as an
 * unnest()ed array, joined by hash (§9.19 "Array Functions", §14.1: Hash Semi Join), about as dear as the ledger's
 * pass. Reading every row (`readRange` pages) instead adds an index on (gen, seq) before its first read, once the
 * measurement is over, so that each page is an index range scan rather than a pass of the whole table (the table is
 * dropped at the next `prepare`). Building that index over a large table is what the sample avoids
 * (docs/measurements.md, "Figures moved from code comments").
 */
import type pg from "pg";
import { quoteIdent } from "../../../core/events/copy-text.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { FieldRule, StoredRow, StoredRowReader, StoredValue } from "../../../core/fidelity.ts";
import type { CopyInt } from "./binary-copy.ts";

/** Keys of a sample, as core/fidelity.ts passes them: per stamped gen, seqs ascending. */
export type Wanted = ReadonlyArray<{ gen: number; seqs: readonly number[] }>;

/** The keys of `wanted` as "gen:seq" strings. */
const wantedKeys = (wanted: Wanted): Set<string> =>
  new Set(wanted.flatMap((w) => w.seqs.map((q) => `${w.gen}:${q}`)));

/**
 * Where a sample's rows lie, noted during the ledger's pass (see the file comment): `see` is called with every row's
 * gen, seq and ctid (binary-copy.ts: block × 2^16 + offset), `finish` when the pass ended (true) or the ledger ended
 * without one (false). Memory: a bit per BLOCK_SEQS seqs up to each gen's largest wanted seq (a row is looked up in
 * the wanted seqs only inside a block that holds one), the wanted seqs, and three numbers per copy found. A bit per
 * seq was 40 MB after a 322M-row replay, beside the ledger's own bits.
 */
export class SampleLocator {
  /** Largest seq a sample is located for: its block map stays within 4 MiB per gen. */
  static readonly MAX_SEQ = 2 ** 31;
  /** Seqs per bit of a gen's block map. */
  static readonly BLOCK_SEQS = 64;
  /** a ledger has ended with it: later ledgers do not locate again */
  done = false;
  private readonly bits = new Map<number, { blocks: Uint8Array; seqs: Set<number> }>();
  /** gen, seq, ctid of each copy of a wanted key the pass saw */
  private readonly found: number[] = [];
  private lastGen = NaN;
  private lastBits: { blocks: Uint8Array; seqs: Set<number> } | undefined;
  /** a `copies()` waiter, woken once `wakeAt` entries of `found` are there or the pass ends */
  private wake: (() => void) | null = null;
  private wakeAt = Infinity;
  private settle!: (ok: boolean) => void;
  /** resolves true once a pass saw every row, false when the ledger ended without one */
  readonly located = new Promise<boolean>((resolve) => (this.settle = resolve));
  /** the rows another pass's locator fetched for the same sample (adopt), returned instead of fetching them again */
  private adoptedRows: Promise<StoredRow[] | null> | null = null;

  /** @throws RangeError when a wanted seq is not below MAX_SEQ (see `fits`) */
  constructor(wanted: Wanted) {
    if (!SampleLocator.fits(wanted))
      throw new RangeError(`a sample seq is not below ${SampleLocator.MAX_SEQ}`);
    for (const w of wanted) {
      if (w.seqs.length === 0) continue;
      const blocks = new Uint8Array(
        Math.floor(w.seqs[w.seqs.length - 1]! / SampleLocator.BLOCK_SEQS / 8) + 1,
      );
      for (const q of w.seqs) {
        const b = Math.floor(q / SampleLocator.BLOCK_SEQS);
        blocks[b >>> 3]! |= 1 << (b & 7);
      }
      this.bits.set(w.gen, { blocks, seqs: new Set(w.seqs) });
    }
  }

  /** Whether every wanted seq is below MAX_SEQ (a larger sample is read by its own pass instead). */
  static fits(wanted: Wanted): boolean {
    return wanted.every((w) =>
      w.seqs.every((q) => Number.isInteger(q) && q >= 0 && q < SampleLocator.MAX_SEQ),
    );
  }

  /** One row of the pass (hot: every stored row). */
  see(gen: CopyInt, seq: CopyInt, tid: CopyInt): void {
    if (gen !== this.lastGen) {
      this.lastGen = gen as number;
      this.lastBits = typeof gen === "number" ? this.bits.get(gen) : undefined;
    }
    const bits = this.lastBits;
    if (bits === undefined || typeof seq !== "number" || seq < 0 || typeof tid !== "number") return;
    const b = Math.floor(seq / SampleLocator.BLOCK_SEQS);
    const byte = bits.blocks[Math.floor(b / 8)];
    if (byte !== undefined && (byte & (1 << (b % 8))) !== 0 && bits.seqs.has(seq)) {
      this.found.push(gen as number, seq, tid);
      if (this.found.length >= this.wakeAt) this.wakeUp();
    }
  }

  /**
   * Take another pass's locator of the same sample as this one's finished pass: its copies found, and `rows`, the
   * rows fetched close behind that pass (PgRowReader.fetchLocated), which the reader then returns as they are (null:
   * fetched anew from the copies). ./verifier.ts ledger() does so when it takes the completion check's pass.
   */
  adopt(from: SampleLocator, rows: Promise<StoredRow[] | null> | null): void {
    this.adoptedRows = rows;
    for (const v of from.found) this.found.push(v);
    this.finish(true);
  }

  /** The rows adopted with another pass (adopt), if any. */
  get adopted(): Promise<StoredRow[] | null> | null {
    return this.adoptedRows;
  }

  finish(ok: boolean): void {
    this.done = true;
    this.settle(ok);
    this.wakeUp();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = null;
    this.wakeAt = Infinity;
    w?.();
  }

  /**
   * The copies found from the `from`-th on, once there are `from + atLeast` or the pass has ended (`ended`): the
   * ctids (PostgreSQL's tid text, "(block,offset)") of those whose key is one of `keys` ("gen:seq"), and where the
   * next call goes on (`next`). One waiter at a time.
   */
  async copies(
    from: number,
    atLeast: number,
    keys: ReadonlySet<string>,
  ): Promise<{ ctids: string[]; next: number; ended: boolean }> {
    if (!this.done && this.found.length < (from + atLeast) * 3) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.wakeAt = (from + atLeast) * 3;
      });
    }
    const ended = this.done;
    const out: string[] = [];
    const end = this.found.length;
    for (let i = from * 3; i < end; i += 3) {
      if (!keys.has(`${this.found[i]}:${this.found[i + 1]}`)) continue;
      const t = this.found[i + 2]!;
      out.push(`(${Math.floor(t / 0x10000)},${t % 0x10000})`);
    }
    return { ctids: out, next: end / 3, ended };
  }
}

/**
 * Copies fetched per statement while the ledger's pass goes on: each batch is read close behind the pass, while
 * its pages are still in the page cache. Fetched after the pass, on a table larger than
 * memory, they were read back from disk one page at a time, a large part of the after-load (docs/measurements.md,
 * "Figures moved from code comments").
 */
const LOCATED_BATCH = 256;

/**
 * The rows of `keys` that `located` finds, fetched by ctid (`fetch`) in batches of LOCATED_BATCH close behind the
 * ledger's pass, the rest once it ends. Null when the pass did not finish, or when a ctid did not give back the row
 * located there (a fetched ctid gives at most one row, so fewer rows than ctids means one moved or went).
 */
async function fetchLocated(
  located: SampleLocator,
  keys: ReadonlySet<string>,
  fetch: (ctids: string[]) => Promise<StoredRow[]>,
): Promise<StoredRow[] | null> {
  const rows: StoredRow[] = [];
  let expected = 0;
  for (let from = 0, ended = false; !ended;) {
    const batch = await located.copies(from, LOCATED_BATCH, keys);
    // adopted before this reader fetched anything (adopt() fills `found` at once): the other pass's rows stand
    const adopted = from === 0 ? await located.adopted : null;
    if (adopted) return adopted.filter((r) => keys.has(`${r.gen}:${r.seq}`));
    ({ next: from, ended } = batch);
    if (batch.ctids.length === 0) continue;
    expected += batch.ctids.length;
    for (const r of await fetch(batch.ctids)) if (keys.has(`${r.gen}:${r.seq}`)) rows.push(r);
  }
  if (!(await located.located)) return null;
  return rows.length === expected ? rows : null;
}

/** The rule stated for each field type (see the file comment). */
const RULES: Readonly<Record<EventField["type"], Omit<FieldRule, "name" | "readable">>> = {
  timestamp: { unit: "us", rule: "timestamptz, microseconds: compared to the microsecond" },
  string: { rule: "text (UTF8 database), bytes as sent: no normalisation" },
  int: { rule: "bigint, exact" },
  float: { rule: "double precision, exact (shortest round-trip text)" },
  bool: { rule: "boolean, exact" },
};

/** The SELECT list for `fields` (after gen, seq): one expression per field, aliased f0, f1, … */
export function pgSelectList(fields: readonly EventField[]): string {
  return fields
    .map((f, i) => {
      const c = quoteIdent(f.name);
      const e =
        f.type === "timestamp"
          ? `(extract(epoch FROM ${c}) * 1000000)::bigint::text`
          : f.type === "string"
            ? `convert_to(${c}, 'UTF8')`
            : f.type === "bool"
              ? c
              : `${c}::text`;
      return `${e} AS f${i}`;
    })
    .join(", ");
}

/** A result row's field i as a StoredValue. */
function value(f: EventField, v: unknown): StoredValue {
  if (v === null || v === undefined) return null;
  if (f.type === "string") return Buffer.isBuffer(v) ? v : String(v);
  if (f.type === "bool") return typeof v === "boolean" ? v : v === "t";
  return Number(v);
}

/** The content check's reader, plus the fetch of a located sample by itself (./verifier.ts missing()). */
export interface PgRowReader extends StoredRowReader {
  /** the rows of `wanted` that `located`'s pass finds, fetched close behind it; null as fetchLocated's */
  fetchLocated(located: SampleLocator, wanted: Wanted): Promise<StoredRow[] | null>;
}

/**
 * The reader over `conn()` (the verifier's row-reading connection) for `table` (already quoted) with the scenario's
 * fields; `locator()` gives the sample the ledger's pass located, if any (SampleLocator).
 * @throws the pg error of a failed query
 */
export function pgRowReader(
  conn: () => Promise<pg.Client>,
  table: string,
  fields: readonly EventField[],
  locator: () => SampleLocator | null = () => null,
): PgRowReader {
  const list = pgSelectList(fields);
  let session: pg.Client | null = null;
  let indexed = false;
  const select = async (where: string, params: unknown[], index: boolean): Promise<StoredRow[]> => {
    const c = await conn();
    if (session !== c) {
      // once per connection (a lost one is replaced)
      await c.query("SET extra_float_digits = 1");
      session = c;
    }
    if (index && !indexed) {
      await c.query(`CREATE INDEX ON ${table} (gen, seq)`);
      await c.query(`ANALYZE ${table}`);
      indexed = true;
    }
    const r = await c.query<Record<string, unknown>>(
      `SELECT gen, seq::text AS seq${list ? `, ${list}` : ""} FROM ${table} WHERE ${where}`,
      params,
    );
    return r.rows.map((row) => ({
      gen: Number(row.gen),
      seq: Number(row.seq),
      values: fields.map((f, i) => value(f, row[`f${i}`])),
    }));
  };
  const byCtid = (ctids: string[]): Promise<StoredRow[]> => select("ctid = ANY($1::tid[])", [ctids], false);
  return {
    fetchLocated: (located, wanted) => fetchLocated(located, wantedKeys(wanted), byCtid),
    rules: () => fields.map((f) => ({ name: f.name, readable: true, ...RULES[f.type] })),
    readRange: (gen, from, to) => select("gen = $1 AND seq >= $2 AND seq < $3", [gen, from, to], true),
    readSeqs: (gen, seqs) => select("gen = $1 AND seq = ANY($2::bigint[])", [gen, seqs], true),
    readSample: async (wanted) => {
      const located = locator();
      if (located) {
        const rows = await fetchLocated(located, wantedKeys(wanted), byCtid);
        if (rows) return rows;
        // the pass did not finish, or a ctid no longer holds its row (an UPDATE or VACUUM FULL since): the pass below
      }
      const gens = wanted.flatMap((w) => w.seqs.map(() => w.gen));
      const seqs = wanted.flatMap((w) => w.seqs);
      // an index made for readRange serves this too; without one, the planner's hash semi join reads the table once
      return select(
        "(gen, seq) IN (SELECT g, s FROM unnest($1::int[], $2::bigint[]) AS k(g, s))",
        [gens, seqs],
        false,
      );
    },
  };
}
