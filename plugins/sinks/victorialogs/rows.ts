/**
 * Reading stored entries back from VictoriaLogs for the content check (core/fidelity.ts), with LogsQL over the
 * verifier's run window (./query.ts): generator g's seqs [a, b) are
 *
 *   gen:=g seq:range[a, b) | fields gen, seq, _msg, <the declared fields>
 *
 * and a sample's seqs `seq:in(s1, s2, …)` instead of the range. Everything VictoriaLogs has taken is made searchable
 * first (`/internal/force_flush`, once per reader).
 *
 * What is compared: VictoriaLogs keeps every field as text (its JSON parsers keep a JSON string's decoded text and a
 * number's or boolean's JSON text; an OTLP attribute's int, double or bool as its decimal or true/false text), so a
 * string is compared byte for byte, an int or float as the number its text parses to, a bool as "true"/"false", a
 * timestamp field as the millisecond its ISO 8601 text (or epoch-ms number) names. The `_msg_field` (`msgField`,
 * default msg) is read from `_msg`, where VictoriaLogs moved it (a record whose field kept its own name is read by
 * that name). VictoriaLogs stores no empty field: an empty string sent reads back as absent (null), and is counted as
 * altered.
 */
import type { EventField } from "../../../core/events/types.ts";
import type { FieldRule, StoredRow, StoredRowReader, StoredValue } from "../../../core/fidelity.ts";
import type { LogsQuery } from "./query.ts";

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

const RULES: Readonly<Record<EventField["type"], Omit<FieldRule, "name" | "readable">>> = {
  timestamp: { unit: "ms", rule: "text as sent (ISO 8601 or epoch ms): compared to the millisecond" },
  string: { rule: "text as sent, byte for byte, no normalisation (an empty string is not stored)" },
  int: { rule: "number text, compared as the number it parses to" },
  float: { rule: "number text, compared as the number it parses to" },
  bool: { rule: "true/false text" },
};

/** A stored field's text as the StoredValue of a declared field of `type` (see the file comment). */
export function storedValue(type: EventField["type"], v: string | undefined): StoredValue {
  if (v === undefined) return null;
  switch (type) {
    case "string":
      return Buffer.from(v, "utf8");
    case "timestamp": {
      if (/^\d+$/.test(v)) return Number(v);
      const t = Date.parse(v);
      return Number.isFinite(t) ? t : v;
    }
    case "int":
    case "float":
      return NUMBER.test(v) ? Number(v) : v;
    case "bool":
      return v === "true" ? true : v === "false" ? false : v;
  }
}

/** A LogsQL field name, quoted where it is not a plain word. */
export const fieldRef = (name: string): string =>
  /^[A-Za-z_][A-Za-z0-9_.]*$/.test(name) ? name : JSON.stringify(name);

/**
 * The reader over `query` for the declared `fields`, `msgField` read from `_msg`; `flush` makes everything taken
 * searchable (called before the first read).
 */
export function vlRowReader(
  query: LogsQuery,
  fields: readonly EventField[],
  msgField: string,
  flush: () => Promise<void>,
): StoredRowReader {
  let flushed: Promise<void> | null = null;
  const names = [
    "gen",
    "seq",
    "_msg",
    ...fields.map((f) => f.name).filter((n) => !["gen", "seq", "_msg"].includes(n)),
  ];
  const pipe = `| fields ${names.map(fieldRef).join(", ")}`;
  const read = async (filter: string): Promise<StoredRow[]> => {
    flushed ??= flush();
    await flushed;
    return (await query(`${filter} ${pipe}`)).map((doc) => ({
      gen: Number(doc.gen),
      seq: Number(doc.seq),
      values: fields.map((f) =>
        storedValue(f.type, f.name === msgField ? (doc[f.name] ?? doc._msg) : doc[f.name]),
      ),
    }));
  };
  return {
    rules: () => fields.map((f) => ({ name: f.name, readable: true, ...RULES[f.type] })),
    readRange: (gen, from, to) => read(`gen:=${gen} seq:range[${from}, ${to})`),
    readSeqs: (gen, seqs) => read(`gen:=${gen} seq:in(${seqs.join(", ")})`),
  };
}
