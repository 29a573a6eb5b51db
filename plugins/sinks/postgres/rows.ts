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
 * The table has no index (ingest stays honest). A sample (core/fidelity.ts `readSample`) is read in one sequential
 * pass: the wanted keys as an unnest()ed array, joined by hash (PostgreSQL 18 documentation, §9.19 "Array Functions",
 * §14.1 "Using EXPLAIN": Hash Semi Join), about as dear as the ledger's own pass. Reading every row (`readRange`
 * pages) instead adds an index on (gen, seq) before its first read, once the measurement is over, so that each page is
 * an index range scan rather than a pass of the whole table (the table is dropped at the next `prepare`). Building
 * that index over a large table is what the sample avoids: 18.2 s for 5.4M rows on local-2-cores (AMD EPYC, 2 cores).
 */
import type pg from "pg";
import { quoteIdent } from "../../../core/events/copy-text.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { FieldRule, StoredRow, StoredRowReader, StoredValue } from "../../../core/fidelity.ts";

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
      const e = f.type === "timestamp" ? `(extract(epoch FROM ${c}) * 1000000)::bigint::text`
        : f.type === "string" ? `convert_to(${c}, 'UTF8')`
        : f.type === "bool" ? c
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

/**
 * The reader over `conn()` (the verifier's connection) for `table` (already quoted) with the scenario's fields.
 * @throws the pg error of a failed query
 */
export function pgRowReader(conn: () => Promise<pg.Client>, table: string, fields: readonly EventField[]): StoredRowReader {
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
    const r = await c.query<Record<string, unknown>>(`SELECT gen, seq::text AS seq${list ? `, ${list}` : ""} FROM ${table} WHERE ${where}`, params);
    return r.rows.map((row) => ({ gen: Number(row.gen), seq: Number(row.seq), values: fields.map((f, i) => value(f, row[`f${i}`])) }));
  };
  return {
    rules: () => fields.map((f) => ({ name: f.name, readable: true, ...RULES[f.type] })),
    readRange: (gen, from, to) => select("gen = $1 AND seq >= $2 AND seq < $3", [gen, from, to], true),
    readSeqs: (gen, seqs) => select("gen = $1 AND seq = ANY($2::bigint[])", [gen, seqs], true),
    readSample: (wanted) => {
      const gens = wanted.flatMap((w) => w.seqs.map(() => w.gen));
      const seqs = wanted.flatMap((w) => w.seqs);
      // an index made for readRange serves this too; without one, the planner's hash semi join reads the table once
      return select("(gen, seq) IN (SELECT g, s FROM unnest($1::int[], $2::bigint[]) AS k(g, s))", [gens, seqs], false);
    },
  };
}
