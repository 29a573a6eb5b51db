/**
 * Reading stored rows back from ClickHouse for the content check (core/fidelity.ts), over the verifier's HTTP
 * queries. What the table keeps (column types in ./verifier.ts CLICKHOUSE_TYPES; ClickHouse 18.16 has no
 * DateTime64):
 * - timestamp → UInt64 epoch milliseconds: compared to the millisecond (a collector writing a DateTime column
 *   instead would keep seconds; this table is the verifier's own);
 * - string → String, arbitrary bytes kept as sent, no normalisation: read as `hex(c)` so no text escaping sits in
 *   between;
 * - int → Int64, read as text; float → Float64, read as its IEEE 754 bits `reinterpretAsUInt64(c)` (exact, no
 *   decimal rendering in between); bool → UInt8 0/1.
 * Range reads use the table's ORDER BY (gen, seq) primary key.
 */
import { quoteIdent } from "../../../core/events/copy-text.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { FieldRule, StoredRow, StoredRowReader, StoredValue } from "../../../core/fidelity.ts";

const RULES: Readonly<Record<EventField["type"], Omit<FieldRule, "name" | "readable">>> = {
  timestamp: { unit: "ms", rule: "UInt64 epoch milliseconds: compared to the millisecond" },
  string: { rule: "String, bytes as sent: no normalisation" },
  int: { rule: "Int64, exact" },
  float: { rule: "Float64, exact (IEEE 754 bits)" },
  bool: { rule: "UInt8 0/1, exact" },
};

/** The SELECT list for `fields` (after gen, seq), one TabSeparated column each (see the file comment). */
export function clickhouseSelectList(fields: readonly EventField[]): string {
  return fields
    .map((f) => {
      const c = quoteIdent(f.name);
      return f.type === "string"
        ? `hex(${c})`
        : f.type === "float"
          ? `reinterpretAsUInt64(${c})`
          : `toString(${c})`;
    })
    .join(", ");
}

/** The double whose IEEE 754 bits are the decimal `bits`. */
export function doubleOfBits(bits: string): number {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setBigUint64(0, BigInt(bits));
  return dv.getFloat64(0);
}

/** One TabSeparated cell of field `f` as a StoredValue (`\N` is NULL). */
function value(f: EventField, cell: string | undefined): StoredValue {
  if (cell === undefined || cell === "\\N") return null;
  switch (f.type) {
    case "string":
      return Buffer.from(cell, "hex");
    case "float":
      return doubleOfBits(cell);
    case "bool":
      return cell === "1" ? true : cell === "0" ? false : cell;
    default:
      return Number(cell);
  }
}

/** Parse a TabSeparated answer of `gen, seq, <fields>` (every cell plain digits or hex: nothing is escaped). */
export function parseClickhouseRows(text: string, fields: readonly EventField[]): StoredRow[] {
  return text
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => {
      const cells = l.split("\t");
      return {
        gen: Number(cells[0]),
        seq: Number(cells[1]),
        values: fields.map((f, i) => value(f, cells[i + 2])),
      };
    });
}

/** The reader over `query` (the verifier's: SQL → answer text) for `table` (already quoted). */
export function clickhouseRowReader(
  query: (sql: string) => Promise<string>,
  table: string,
  fields: readonly EventField[],
): StoredRowReader {
  const list = clickhouseSelectList(fields);
  const select = async (where: string): Promise<StoredRow[]> =>
    parseClickhouseRows(
      await query(
        `SELECT gen, seq${list ? `, ${list}` : ""} FROM ${table} WHERE ${where} FORMAT TabSeparated`,
      ),
      fields,
    );
  return {
    rules: () => fields.map((f) => ({ name: f.name, readable: true, ...RULES[f.type] })),
    readRange: (gen, from, to) => select(`gen = ${gen} AND seq >= ${from} AND seq < ${to}`),
    readSeqs: (gen, seqs) => select(`gen = ${gen} AND seq IN (${seqs.length ? seqs.join(", ") : "NULL"})`),
  };
}
