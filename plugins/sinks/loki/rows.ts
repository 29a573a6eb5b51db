/**
 * Reading stored lines back from Loki for the content check (core/fidelity.ts), over `GET /loki/api/v1/query_range`
 * (Loki docs, "Loki HTTP API"; LogQL "Log queries": the json parser with extraction expressions and label filter
 * expressions). A read of generator g's seqs [a, b) is the log query
 *
 *   <selector> | json ib_gen="gen", ib_seq="seq" | ib_gen == g and ib_seq >= a and ib_seq < b
 *
 * over the run window, paged forward by timestamp (limit LOKI_PAGE; the next page starts at the last timestamp seen,
 * entries at that timestamp already read are skipped), as the ledger pages (./verifier.ts). The extracted labels get
 * their own names so that they cannot clash with a stream's `gen` label (LogQL suffixes a clash with `_extracted`).
 * A sample's seqs are read with `ib_seq =~ "^(s1|s2|…)$"` instead of the range.
 *
 * What is compared is the line: Loki keeps it as sent (it is the event's JSON), so timestamps are parsed from the
 * line's ISO 8601 text or epoch-ms number and compared to the millisecond, strings are the decoded JSON string byte
 * for byte, numbers and booleans exact. The entry's own timestamp is the send time (the loki-push generator's
 * default) and is not compared. Loki drops an entry identical to one already in its stream, so a duplicate that is
 * byte-identical is never read back (the ledger's account of Loki says so).
 */
import { IngestbenchError } from "../../../core/errors.ts";
import type { EventField } from "../../../core/events/types.ts";
import { jsonValues, type FieldRule, type StoredRow, type StoredRowReader } from "../../../core/fidelity.ts";
import type { HttpJsonApi } from "../../../core/http.ts";

/** Entries per page of a read (Loki's default limits_config.max_entries_limit_per_query). */
export const LOKI_ROWS_PAGE = 5000;

const RULES: Readonly<Record<EventField["type"], Omit<FieldRule, "name" | "readable">>> = {
  timestamp: { unit: "ms", rule: "line JSON (ISO 8601 or epoch ms as sent): compared to the millisecond" },
  string: { rule: "line JSON string as sent, decoded: byte for byte, no normalisation" },
  int: { rule: "line JSON number, exact" },
  float: { rule: "line JSON number, exact" },
  bool: { rule: "line JSON boolean, exact" },
};

/** Epoch ms → Loki's nanosecond epoch string. */
const ns = (ms: number): bigint => BigInt(Math.floor(ms)) * 1_000_000n;

/** The log query of generator `gen`'s seqs [from, to), or of the seqs listed (a regular expression on ib_seq). */
export function lokiRowsQuery(
  selector: string,
  gen: number,
  seqs: { from: number; to: number } | readonly number[],
): string {
  const which =
    "from" in seqs ? `ib_seq >= ${seqs.from} and ib_seq < ${seqs.to}` : `ib_seq =~ "^(${seqs.join("|")})$"`;
  return `${selector} | json ib_gen="gen", ib_seq="seq" | ib_gen == ${gen} and ${which}`;
}

/** A query_range answer of streams (the fields read here). */
interface StreamsAnswer {
  status?: string;
  data?: {
    resultType?: string;
    result?: Array<{ stream?: Record<string, string>; values?: Array<[unknown, unknown]> }>;
  };
}

/**
 * The reader over `api` for `selector`, reading entries from `windowStartMs()` (the verifier's run window) to now.
 * @throws IngestbenchError E_LOKI_ANSWER for an answer that is not a success, E_LOKI_PAGE when one timestamp holds
 *   more than a page of entries
 */
export function lokiRowReader(
  api: HttpJsonApi,
  selector: string,
  windowStartMs: () => number,
  fields: readonly EventField[],
): StoredRowReader {
  const read = async (query: string): Promise<StoredRow[]> => {
    const out: StoredRow[] = [];
    const end = `${ns(Date.now() + 1)}`;
    let start = ns(windowStartMs());
    let boundary = new Set<string>();
    for (;;) {
      const r = await api.call(
        "GET",
        `/loki/api/v1/query_range?${new URLSearchParams({ query, start: `${start}`, end, limit: String(LOKI_ROWS_PAGE), direction: "forward" })}`,
      );
      const a = r.json as StreamsAnswer | null;
      if (a?.status !== "success" || !Array.isArray(a.data?.result))
        throw new IngestbenchError("E_LOKI_ANSWER", `Loki query_range answered ${r.body.slice(0, 200)}`);
      const entries: Array<{ ts: bigint; key: string; line: string }> = [];
      for (const s of a.data.result) {
        const streamKey = JSON.stringify(s.stream ?? {});
        for (const [ts, line] of s.values ?? [])
          entries.push({
            ts: BigInt(String(ts)),
            key: `${streamKey}\u0000${String(ts)}\u0000${String(line)}`,
            line: String(line),
          });
      }
      let maxTs = start;
      let added = 0;
      for (const e of entries) {
        if (e.ts === start && boundary.has(e.key)) continue;
        added++;
        if (e.ts > maxTs) maxTs = e.ts;
        let doc: Record<string, unknown> | null = null;
        try {
          doc = JSON.parse(e.line) as Record<string, unknown>;
        } catch {
          doc = null;
        }
        if (doc && typeof doc.gen === "number" && typeof doc.seq === "number")
          out.push({ gen: doc.gen, seq: doc.seq, values: jsonValues(fields, doc) });
      }
      if (entries.length < LOKI_ROWS_PAGE) break;
      if (added === 0)
        throw new IngestbenchError(
          "E_LOKI_PAGE",
          `more than ${LOKI_ROWS_PAGE} entries share timestamp ${start} ns: raise Loki's max_entries_limit_per_query and LOKI_ROWS_PAGE`,
        );
      const next = new Set(maxTs === start ? boundary : []);
      for (const e of entries) if (e.ts === maxTs) next.add(e.key);
      boundary = next;
      start = maxTs;
    }
    return out;
  };
  return {
    rules: () => fields.map((f) => ({ name: f.name, readable: true, ...RULES[f.type] })),
    readRange: (gen, from, to) => read(lokiRowsQuery(selector, gen, { from, to })),
    readSeqs: async (gen, seqs) => (seqs.length === 0 ? [] : read(lokiRowsQuery(selector, gen, seqs))),
  };
}
