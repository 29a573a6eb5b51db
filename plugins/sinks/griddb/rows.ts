/**
 * Reading stored rows back from GridDB for the content check (core/fidelity.ts), over the verifier's SQL SELECT
 * calls of the Web API (griddb/webapi, "SQL SELECT execution": `results` rows of JSON values in column order).
 * What the container keeps (./verifier.ts GRIDDB_TYPES): TIMESTAMP at millisecond resolution, answered as ISO 8601
 * text (compared to the millisecond); STRING as sent, no normalisation, answered as a JSON string (compared byte for
 * byte after JSON decoding); LONG, DOUBLE exact as JSON numbers; BOOL as JSON true/false.
 * A range with more rows than one answer (GRIDDB_PAGE, the Web API's default maxLimit) is split in halves and read
 * again. A TIME_SERIES container keeps one row per timestamp: an overwritten row is read with the newer content.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import type { EventField } from "../../../core/events/types.ts";
import { jsonValues, type FieldRule, type StoredRow, type StoredRowReader } from "../../../core/fidelity.ts";

/** Rows per answer (the Web API's default maxLimit for SQL results). */
export const GRIDDB_ROWS_PAGE = 10_000;

const RULES: Readonly<Record<EventField["type"], Omit<FieldRule, "name" | "readable">>> = {
  timestamp: {
    unit: "ms",
    rule: "TIMESTAMP (milliseconds), answered as ISO 8601: compared to the millisecond",
  },
  string: { rule: "STRING, bytes as sent: no normalisation" },
  int: { rule: "LONG, exact" },
  float: { rule: "DOUBLE, exact" },
  bool: { rule: "BOOL, exact" },
};

/** A GridDB identifier in SQL (double quotes doubled). */
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/**
 * The reader over `select` (the verifier's: a SQL SELECT → its result rows) for `container` with the scenario's fields.
 * @throws IngestbenchError E_GRIDDB_ANSWER when one seq alone has more rows than an answer holds
 */
export function gridDbRowReader(
  select: (stmt: string) => Promise<unknown[][]>,
  container: string,
  fields: readonly EventField[],
): StoredRowReader {
  const cols = ["gen", "seq", ...fields.map((f) => f.name)].map(ident).join(", ");
  const rows = async (where: string): Promise<{ full: boolean; rows: StoredRow[] }> => {
    const res = await select(
      `SELECT ${cols} FROM ${ident(container)} WHERE ${where} ORDER BY seq LIMIT ${GRIDDB_ROWS_PAGE + 1}`,
    );
    const out = res.slice(0, GRIDDB_ROWS_PAGE).map((r) => ({
      gen: Number(r[0]),
      seq: Number(r[1]),
      values: jsonValues(fields, Object.fromEntries(fields.map((f, i) => [f.name, r[i + 2]]))),
    }));
    return { full: res.length > GRIDDB_ROWS_PAGE, rows: out };
  };
  const range = async (gen: number, from: number, to: number): Promise<StoredRow[]> => {
    const r = await rows(`gen = ${gen} AND seq >= ${from} AND seq < ${to}`);
    if (!r.full) return r.rows;
    if (to - from <= 1)
      throw new IngestbenchError(
        "E_GRIDDB_ANSWER",
        `GridDB holds more than ${GRIDDB_ROWS_PAGE} rows of gen ${gen} seq ${from}`,
      );
    const mid = from + Math.floor((to - from) / 2);
    return [...(await range(gen, from, mid)), ...(await range(gen, mid, to))];
  };
  return {
    rules: () => fields.map((f) => ({ name: f.name, readable: true, ...RULES[f.type] })),
    readRange: range,
    readSeqs: async (gen, seqs) => {
      const r = await rows(`gen = ${gen} AND seq IN (${seqs.join(", ")})`);
      if (!r.full) return r.rows;
      const want = new Set(seqs);
      return (await range(gen, seqs[0]!, seqs.at(-1)! + 1)).filter((x) => want.has(x.seq));
    },
  };
}
