// The Elasticsearch/OpenSearch row reader (./rows.ts) against byte-level vectors: the documents are the es-bulk
// encoder's own bytes (what `_bulk` stores as `_source`), answered by an in-process stand-in in the documented
// `_search` response shape (Elasticsearch reference 8.15, "Search API"); no Elasticsearch or OpenSearch here.
import { describe, expect, it } from "vitest";
import { checkFidelity } from "../../../core/fidelity.ts";
import { EsBulkEncoder } from "../../../core/events/es-bulk.ts";
import { createEventSource } from "../../../core/events/source.ts";
import { fields, httpReceiver, type GotRequest } from "../../../test/harness/generators/run-generator.ts";
import { elasticsearchVerifier } from "./verifier.ts";
import { opensearchVerifier } from "../opensearch/verifier.ts";
import { ES_ROWS_PAGE } from "./rows.ts";

/** The `_source` documents of a bulk body (every second NDJSON line), parsed as Elasticsearch keeps them. */
function bulkDocuments(n: number): Array<Record<string, unknown>> {
  const enc = new EsBulkEncoder(createEventSource({ fields, seed: 42, genId: 0 }));
  const lines = enc.encode(0, n).payload.toString("utf8").trimEnd().split("\n");
  return lines.filter((_, i) => i % 2 === 1).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** `POST /ib_events/_search` over `docs`: bool filter of term gen + range or terms on seq, sorted by seq. */
function searchAnswers(docs: Array<Record<string, unknown>>, seen: Array<Record<string, any>>) {
  return (req: GotRequest) => {
    const body = JSON.parse(req.body.toString("utf8")) as Record<string, any>;
    seen.push(body);
    expect(req.url).toBe("/ib_events/_search?filter_path=hits.total,hits.hits._source");
    const [term, seq] = body.query.bool.filter as Array<Record<string, any>>;
    const match = docs.filter(
      (d) =>
        d.gen === term!.term.gen &&
        (seq!.range
          ? (d.seq as number) >= seq!.range.seq.gte && (d.seq as number) < seq!.range.seq.lt
          : (seq!.terms.seq as number[]).includes(d.seq as number)),
    );
    match.sort((a, b) => (a.seq as number) - (b.seq as number));
    const hits = match.slice(0, body.size).map((d, i) => ({
      _index: "ib_events",
      _id: `doc-${i}`,
      _score: null,
      _source: Object.fromEntries(Object.entries(d).filter(([k]) => (body._source as string[]).includes(k))),
      sort: [d.seq],
    }));
    return {
      status: 200,
      body: JSON.stringify({
        took: 3,
        timed_out: false,
        hits: { total: { value: match.length, relation: "eq" }, max_score: null, hits },
      }),
    };
  };
}

describe("elasticsearch/opensearch row reader (byte-level vectors: the es-bulk encoder's documents in documented _search answers; no Elasticsearch here)", () => {
  it("reads _source back and the content check finds exactly the altered documents (no Elasticsearch here)", async () => {
    const docs = bulkDocuments(3000);
    docs[17]!.msg = `${docs[17]!.msg as string}!`; // a pipeline that appended a byte
    docs[18]!.ts = "2024-11-07T01:00:00.018Z"; // moved one hour
    docs[19]!.n = String(docs[19]!.n); // a number re-typed as text
    const seen: Array<Record<string, any>> = [];
    const r = await httpReceiver(searchAnswers(docs, seen));
    const v = elasticsearchVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      const res = await checkFidelity(v.rows!, {
        fields,
        seed: 42,
        sent: [3000],
        stored: 3000,
        limits: { all: 10_000, sample: 10 },
      });
      expect(res).toMatchObject({
        mode: "all",
        rowsCompared: 3000,
        altered: 3,
        alteredByField: { msg: 1, ts: 1, n: 1 },
      });
      expect(res.examples.map((e) => [e.seq, e.field])).toEqual([
        [17, "msg"],
        [18, "ts"],
        [19, "n"],
      ]);
      expect(res.examples[1]).toMatchObject({
        expected: "2024-11-07T00:00:00.018Z",
        stored: "2024-11-07T01:00:00.018Z",
      });
      expect(res.examples[2]!.stored).toBe(JSON.stringify(String(docs[19]!.n)));
      expect(seen[0]).toMatchObject({
        size: ES_ROWS_PAGE,
        track_total_hits: true,
        _source: ["ts", "level", "msg", "n", "gen", "seq"],
        sort: [{ seq: "asc" }],
      });
      expect(seen[0]!.query.bool.filter).toEqual([
        { term: { gen: 0 } },
        { range: { seq: { gte: 0, lt: 3000 } } },
      ]);
      expect(v.rows!.rules().find((x) => x.name === "ts")).toMatchObject({ unit: "ms" });
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("a range with more documents than one page is read in halves; a sample is read with a terms query (no OpenSearch here)", async () => {
    const docs = bulkDocuments(10_000);
    docs.push({ ...docs[5000]! }); // a duplicate: 10 001 documents for seqs 0..9999
    const seen: Array<Record<string, any>> = [];
    const r = await httpReceiver(searchAnswers(docs, seen));
    const v = opensearchVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      const all = await checkFidelity(v.rows!, {
        fields,
        seed: 42,
        sent: [10_000],
        stored: 10_001,
        limits: { all: 20_000, sample: 10 },
      });
      expect(all).toMatchObject({ rowsCompared: 10_001, seqsCompared: 10_000, altered: 0 });
      expect(seen.map((b) => b.query.bool.filter[1].range.seq)).toEqual([
        { gte: 0, lt: 10_000 },
        { gte: 0, lt: 5000 },
        { gte: 5000, lt: 10_000 },
      ]);
      seen.length = 0;
      const sample = await checkFidelity(v.rows!, {
        fields,
        seed: 42,
        sent: [10_000],
        stored: 10_001,
        limits: { all: 0, sample: 50 },
      });
      expect(sample).toMatchObject({ mode: "sample", sampleSize: 50, seqsCompared: 50, altered: 0 });
      expect(seen[0]!.query.bool.filter[1].terms.seq).toHaveLength(50);
    } finally {
      await v.close();
      await r.close();
    }
  });
});
