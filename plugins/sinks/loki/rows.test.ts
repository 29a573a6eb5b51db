// The Loki row reader (./rows.ts) against byte-level vectors: the entries are the loki-push encoder's own push body
// (what Loki keeps: the lines byte for byte), answered by an in-process stand-in for `GET /loki/api/v1/query_range`
// in the documented streams shape (Loki docs, "Loki HTTP API"), applying the reader's LogQL filter; no Loki here.
import { describe, expect, it } from "vitest";
import { checkFidelity } from "../../../core/fidelity.ts";
import { LokiPushEncoder } from "../../../core/events/loki-push.ts";
import { createEventSource } from "../../../core/events/source.ts";
import { fields, httpReceiver, type GotRequest } from "../../../test/harness/generators/run-generator.ts";
import { lokiVerifier } from "./verifier.ts";
import { LOKI_ROWS_PAGE, lokiRowsQuery } from "./rows.ts";

interface Entry {
  ts: bigint;
  line: string;
  labels: Record<string, string>;
}

/** The entries of one push body of seqs 0..n-1 of generator 0. */
function pushedEntries(n: number): Entry[] {
  const body = JSON.parse(
    new LokiPushEncoder(createEventSource({ fields, seed: 42, genId: 0 }))
      .encode(0, n)
      .payload.toString("utf8"),
  ) as { streams: Array<{ stream: Record<string, string>; values: Array<[string, string]> }> };
  return body.streams.flatMap((s) =>
    s.values.map(([ts, line]) => ({ ts: BigInt(ts), line, labels: s.stream })),
  );
}

/** query_range over `entries`, with the reader's filter `| json ib_gen="gen", ib_seq="seq" | ib_gen == g and (range | regex)`. */
function queryAnswers(entries: Entry[], queries: URLSearchParams[]) {
  return (req: GotRequest) => {
    const u = new URL(req.url, "http://x");
    expect(u.pathname).toBe("/loki/api/v1/query_range");
    const q = u.searchParams;
    queries.push(q);
    const m =
      /^\{job="ingestbench"\} \| json ib_gen="gen", ib_seq="seq" \| ib_gen == (\d+) and (?:ib_seq >= (\d+) and ib_seq < (\d+)|ib_seq =~ "\^\(([\d|]+)\)\$")$/.exec(
        q.get("query")!,
      );
    if (!m) return { status: 400, body: `parse error: ${q.get("query")}` };
    expect(q.get("direction")).toBe("forward");
    const list = m[4] ? new Set(m[4].split("|").map(Number)) : null;
    const start = BigInt(q.get("start")!);
    const hits = entries
      .filter((e) => e.ts >= start)
      .filter((e) => {
        const d = JSON.parse(e.line) as { gen: number; seq: number };
        return (
          d.gen === Number(m[1]) && (list ? list.has(d.seq) : d.seq >= Number(m[2]) && d.seq < Number(m[3]))
        );
      })
      .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0))
      .slice(0, Number(q.get("limit")));
    const result = hits.map((e) => ({
      stream: { ...e.labels, ib_gen: "0", ib_seq: String((JSON.parse(e.line) as { seq: number }).seq) },
      values: [[String(e.ts), e.line]],
    }));
    return {
      status: 200,
      body: JSON.stringify({ status: "success", data: { resultType: "streams", result, stats: {} } }),
    };
  };
}

describe("loki row reader (byte-level vectors: the loki-push encoder's entries in documented query_range answers; no Loki here)", () => {
  it("reads lines back over pages; the content check finds exactly the altered lines; a sample is read by a seq regex (no Loki here)", async () => {
    expect(lokiRowsQuery('{job="a"}', 1, { from: 5, to: 9 })).toBe(
      '{job="a"} | json ib_gen="gen", ib_seq="seq" | ib_gen == 1 and ib_seq >= 5 and ib_seq < 9',
    );
    const entries = pushedEntries(12_000);
    const doc = JSON.parse(entries[700]!.line) as Record<string, unknown>;
    doc.msg = (doc.msg as string).slice(0, 100); // a collector that truncated the text
    entries[700]!.line = JSON.stringify(doc);
    const queries: URLSearchParams[] = [];
    const r = await httpReceiver(queryAnswers(entries, queries));
    const v = lokiVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      const res = await checkFidelity(v.rows!, {
        fields,
        seed: 42,
        sent: [12_000],
        stored: 12_000,
        limits: { all: 20_000, sample: 10 },
      });
      expect(res).toMatchObject({
        mode: "all",
        rowsCompared: 12_000,
        seqsCompared: 12_000,
        altered: 1,
        alteredByField: { msg: 1 },
      });
      expect(res.examples[0]).toMatchObject({ seq: 700, field: "msg" });
      expect(res.examples[0]!.stored).toContain("(100 bytes, first difference at byte 100)");
      // 0..9999 in pages of 5000 (two full pages, then an empty one), then 10000..11999 in one
      expect(queries.map((q) => q.get("limit"))).toEqual(Array(4).fill(String(LOKI_ROWS_PAGE)));
      queries.length = 0;
      const sample = await checkFidelity(v.rows!, {
        fields,
        seed: 42,
        sent: [12_000],
        stored: 12_000,
        limits: { all: 0, sample: 30 },
      });
      expect(sample).toMatchObject({ mode: "sample", sampleSize: 30, seqsCompared: 30 });
      expect(queries[0]!.get("query")).toMatch(/ib_seq =~ "\^\((\d+\|){29}\d+\)\$"$/);
    } finally {
      await v.close();
      await r.close();
    }
  });
});
