import { describe, expect, it } from "vitest";
import { GEN_STRIDE, genBaseOf } from "../../../core/ledger.ts";
import { ES_PAGE, elasticsearchVerifier, indexDefinition, storeSizeOf } from "./verifier.ts";
import { sinks } from "../../registry.ts";
import { withEnv } from "../../../test/helpers/env.ts";
import { fields, httpReceiver, type GotRequest } from "../../../test/harness/generators/run-generator.ts";

interface Doc {
  _id: string;
  _version: number;
  gen?: number;
  seq?: number;
}

/**
 * An in-process stand-in for Elasticsearch 8.15's REST API over `docs`, answering with the documented response
 * shapes: index create/delete, _refresh, _count, max aggregation, composite aggregation pages (size and after
 * honoured), point in time + search_after over _shard_doc with version: true.
 */
function esAnswers(docs: Doc[], sentAtMax: number) {
  const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) });
  let created = false;
  return (req: GotRequest) => {
    const body = req.body.length ? (JSON.parse(req.body.toString("utf8")) as Record<string, any>) : {};
    const path = req.url.split("?")[0];
    if (req.method === "DELETE" && path === "/ib_events") {
      if (!created)
        return json(404, {
          error: {
            root_cause: [{ type: "index_not_found_exception", reason: "no such index [ib_events]" }],
            type: "index_not_found_exception",
            reason: "no such index [ib_events]",
            index: "ib_events",
          },
          status: 404,
        });
      created = false;
      return json(200, { acknowledged: true });
    }
    if (req.method === "PUT" && path === "/ib_events") {
      created = true;
      return json(200, { acknowledged: true, shards_acknowledged: true, index: "ib_events" });
    }
    if (req.method === "POST" && path === "/ib_events/_refresh")
      return json(200, { _shards: { total: 1, successful: 1, failed: 0 } });
    if (req.method === "GET" && path === "/ib_events/_count")
      return json(200, { count: docs.length, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } });
    if (req.method === "POST" && path === "/ib_events/_count" && body.query?.range?.gen) {
      const { gte, lt } = body.query.range.gen as { gte: number; lt: number };
      const count = docs.filter((d) => typeof d.gen === "number" && d.gen >= gte && d.gen < lt).length;
      return json(200, { count, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } });
    }
    if (req.method === "POST" && path === "/ib_events/_search" && body.aggs?.newest)
      return json(200, {
        aggregations: { newest: { value: sentAtMax, value_as_string: new Date(sentAtMax).toISOString() } },
      });
    if (req.method === "POST" && path === "/ib_events/_search" && body.aggs?.seqs?.composite) {
      const c = body.aggs.seqs.composite;
      expect(c.sources).toEqual([{ gen: { terms: { field: "gen" } } }, { seq: { terms: { field: "seq" } } }]);
      const counts = new Map<string, { gen: number; seq: number; n: number }>();
      for (const d of docs) {
        if (d.gen === undefined || d.seq === undefined) continue; // composite skips documents without a value
        const k = `${d.gen}:${d.seq}`;
        const e = counts.get(k);
        if (e) e.n++;
        else counts.set(k, { gen: d.gen, seq: d.seq, n: 1 });
      }
      let keys = [...counts.values()].sort((a, b) => a.gen - b.gen || a.seq - b.seq);
      if (c.after)
        keys = keys.filter((k) => k.gen > c.after.gen || (k.gen === c.after.gen && k.seq > c.after.seq));
      const page = keys.slice(0, c.size).map((k) => ({ key: { gen: k.gen, seq: k.seq }, doc_count: k.n }));
      return json(200, {
        aggregations: { seqs: { ...(page.length ? { after_key: page.at(-1)!.key } : {}), buckets: page } },
      });
    }
    if (req.method === "POST" && path === "/ib_events/_pit")
      return json(200, { id: "pit-1", _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } });
    if (req.method === "POST" && path === "/_search") {
      expect(body.pit.id).toBe("pit-1");
      expect(body.version).toBe(true);
      expect(body.sort).toEqual([{ _shard_doc: "asc" }]);
      const from = body.search_after ? (body.search_after[0] as number) + 1 : 0;
      const hits = docs.slice(from, from + body.size).map((d, i) => ({
        _index: "ib_events",
        _id: d._id,
        _version: d._version,
        _score: null,
        sort: [from + i],
      }));
      return json(200, { pit_id: "pit-1", hits: { hits } });
    }
    if (req.method === "DELETE" && path === "/_pit") return json(200, { succeeded: true, num_freed: 1 });
    return json(400, { error: `unexpected ${req.method} ${req.url}` });
  };
}

describe("elasticsearch and opensearch verifiers' Basic auth (RFC 7617 bytes against an in-process stand-in; no Elasticsearch or OpenSearch here)", () => {
  it("sends Authorization: Basic base64(user:password) with the variable's password (default users elastic / admin), none without it, and a 401 is E_SINK_AUTH naming the variable, never the password (no server here)", async () => {
    const r = await httpReceiver((req) =>
      req.headers.authorization === "Basic ZWxhc3RpYzpyaWdodA=="
        ? { status: 200, body: "{}" }
        : {
            status: 401,
            body: JSON.stringify({
              error: {
                type: "security_exception",
                reason: "unable to authenticate user [elastic] for REST request [/ib_events]",
              },
              status: 401,
            }),
          },
    );
    try {
      const ok = await withEnv({ INGESTBENCH_ELASTICSEARCH_PASSWORD: "right" }, () =>
        elasticsearchVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields }),
      );
      await ok.prepare();
      await ok.close();
      // "elastic:right" → ZWxhc3RpYzpyaWdodA== (base64 of the UTF-8 user-pass, RFC 7617 section 2)
      expect(r.got.map((g) => g.headers.authorization)).toEqual([
        "Basic ZWxhc3RpYzpyaWdodA==",
        "Basic ZWxhc3RpYzpyaWdodA==",
      ]);
      const os = await withEnv({ INGESTBENCH_OPENSEARCH_PASSWORD: "right" }, () =>
        sinks.opensearch.verifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields }),
      );
      await expect(os.prepare()).rejects.toThrow(
        /refused user "admin" with the password from INGESTBENCH_OPENSEARCH_PASSWORD/,
      );
      await os.close();
      expect(r.got.at(-1)!.headers.authorization).toBe(
        `Basic ${Buffer.from("admin:right").toString("base64")}`,
      );
      const wrong = await withEnv({ INGESTBENCH_ELASTICSEARCH_PASSWORD: "wrong-9f1" }, () =>
        elasticsearchVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields }),
      );
      const err = await wrong.prepare().then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string },
      );
      await wrong.close();
      expect(err?.code).toBe("E_SINK_AUTH");
      expect(err?.message).toContain("INGESTBENCH_ELASTICSEARCH_PASSWORD");
      expect(err?.message).not.toContain("wrong-9f1");
      const none = await withEnv({ INGESTBENCH_ELASTICSEARCH_PASSWORD: undefined }, () =>
        elasticsearchVerifier.create({
          host: "127.0.0.1",
          port: r.port,
          params: { user: "elastic", password: "not-read" },
          fields,
        }),
      );
      await expect(none.prepare()).rejects.toThrow(
        /asks user "elastic" for a password and none is set: set INGESTBENCH_ELASTICSEARCH_PASSWORD/,
      );
      await none.close();
      expect(r.got.at(-1)!.headers.authorization).toBeUndefined();
    } finally {
      await r.close();
    }
  });
});

describe("elasticsearch verifier (REST answers of the documented Elasticsearch 8.15 shapes from an in-process stand-in; no Elasticsearch here)", () => {
  it("is registered; prepare drops the index (404 tolerated) and creates it with the explicit mapping of the event fields (no Elasticsearch here)", async () => {
    expect(sinks.elasticsearch.verifier).toBe(elasticsearchVerifier);
    const r = await httpReceiver(esAnswers([], 0));
    // the password from INGESTBENCH_ELASTICSEARCH_PASSWORD only, never a param (params are recorded in run.json)
    const v = await withEnv({ INGESTBENCH_ELASTICSEARCH_PASSWORD: "pw" }, () =>
      elasticsearchVerifier.create({
        host: "127.0.0.1",
        port: r.port,
        params: { user: "elastic", password: "not-read" },
        fields,
      }),
    );
    try {
      await v.prepare();
      expect(r.got.map((g) => `${g.method} ${g.url}`)).toEqual(["DELETE /ib_events", "PUT /ib_events"]);
      expect(JSON.parse(r.got[1]!.body.toString())).toEqual({
        settings: { number_of_shards: 1, number_of_replicas: 0 },
        mappings: {
          dynamic: false,
          properties: {
            ts: { type: "date" },
            level: { type: "text" },
            msg: { type: "text" },
            n: { type: "long" },
            gen: { type: "integer" },
            seq: { type: "long" },
            sent_at: { type: "date" },
          },
        },
      });
      expect(indexDefinition(fields, 3).settings.number_of_shards).toBe(3);
      expect(r.got[0]!.headers.authorization).toBe(`Basic ${Buffer.from("elastic:pw").toString("base64")}`);
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("documents of another run are foreign: not in the sample's count (a range query on gen), not in any other ledger figure (documented response shapes; no Elasticsearch here)", async () => {
    const base = genBaseOf("20261201T100000Z-es0001");
    const docs: Doc[] = [];
    for (let s = 0; s < 100; s++) docs.push({ _id: `a-${s}`, _version: 1, gen: base, seq: s });
    docs.push(
      { _id: "late-1", _version: 1, gen: genBaseOf("20261201T090000Z-es0000"), seq: 1 },
      { _id: "late-2", _version: 1, gen: base + GEN_STRIDE, seq: 2 },
      { _id: "old", _version: 1, gen: 0, seq: 3 },
    );
    const r = await httpReceiver(esAnswers(docs, Date.UTC(2026, 10, 29)));
    const v = elasticsearchVerifier.create({
      host: "127.0.0.1",
      port: r.port,
      params: {},
      fields,
      genBase: base,
    });
    try {
      expect((await v.sample()).stored).toBe(100);
      expect(JSON.parse(r.got.find((g) => g.url === "/ib_events/_count")!.body.toString())).toEqual({
        query: { range: { gen: { gte: base, lt: base + GEN_STRIDE } } },
      });
      expect(await v.ledger([100], [[]])).toMatchObject({
        stored: 100,
        distinct: 100,
        duplicated: 0,
        unexpected: 0,
        lost: 0,
        foreign: 3,
        deduplicated: 0,
      });
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("sample refreshes then counts; the ledger from composite-aggregation pages and _version tells lost, duplicated, overwritten, rejected, unexpected apart exactly (documented response shapes; no Elasticsearch here)", async () => {
    const docs: Doc[] = [];
    const put = (gen: number | undefined, seq: number | undefined, version = 1): void => {
      docs.push({ _id: `auto-${docs.length}`, _version: version, gen, seq });
    };
    // generator 0 sent 25 000 seqs; 100..199 rejected (only 150 stored anyway); 5000..5009 and 24990..24999 lost
    for (let s = 0; s < 25_000; s++) {
      if ((s >= 100 && s < 200 && s !== 150) || (s >= 5000 && s < 5010) || s >= 24_990) continue;
      put(0, s);
    }
    put(0, 7);
    put(0, 7);
    put(0, 20_000); // the same event under other _ids: 3 duplicates
    docs[42]!._id = "0-42";
    docs[42]!._version = 2; // re-sent with _id = gen-seq: overwritten once
    docs[43]!._id = "0-43";
    docs[43]!._version = 4; // three times
    put(1, 0);
    put(1, 2); // generator 1 sent 3: seq 1 lost
    put(0, 30_000);
    put(5, 1); // seq beyond sent, unknown generator: unexpected
    put(0, undefined);
    put(undefined, undefined); // no gen/seq at all: unexpected
    const newest = Date.UTC(2026, 10, 29, 22, 0, 0, 123);
    const r = await httpReceiver(esAnswers(docs, newest));
    const v = elasticsearchVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      const s = await v.sample();
      // the sample counts this run's documents: a gen in its space (genBase 0: gens 0..255); the one without a gen is not
      expect(s.stored).toBe(docs.length - 1);
      expect(s.newestSentAtMs).toBe(newest);
      expect(s.tAfter).toBeGreaterThanOrEqual(s.tBefore);
      expect(r.got.slice(0, 2).map((g) => `${g.method} ${g.url}`)).toEqual([
        "POST /ib_events/_refresh",
        "POST /ib_events/_count",
      ]);
      const l = await v.ledger([25_000, 3], [[[100, 199]], []]);
      expect(l).toEqual({
        sent: 25_003,
        accepted: 24_903,
        rejected: 100,
        // gen 0: 25 000 − 100 rejected + 1 (150) − 10 − 10 = 24 881 distinct, + 3 duplicate rows; gen 1: 2; 4 unexpected
        stored: 24_890,
        distinct: 24_887,
        duplicated: 3,
        lost: 21,
        overwritten: 4,
        unexpected: 4,
        missingRanges: [
          [0, 5000, 5009],
          [0, 24_990, 24_999],
          [1, 1, 1],
        ],
        foreign: 0,
        rejectedStored: 1,
        deduplicated: 0,
      });
      const pages = r.got.filter((g) => g.url.includes("aggregations.seqs"));
      expect(pages.length).toBe(Math.ceil(24_885 / ES_PAGE) + 1); // 24 885 buckets, then an empty page
      expect(r.got.filter((g) => g.url.startsWith("/_search")).length).toBe(Math.ceil(docs.length / ES_PAGE));
      expect(r.got.at(-1)!.method).toBe("DELETE"); // the point in time is closed
    } finally {
      await v.close();
      await r.close();
    }
  });
});

/**
 * OpenSearch 2.19.6's answers to `POST /ib_events/_refresh`, `POST /ib_events/_flush` and `GET /ib_events/_stats/store`
 * over 1000 documents, recorded from the real node here (plugins/sinks/opensearch/component.ts, 2026-12-07).
 * Elasticsearch 8 answers the same Index stats API with the same fields (its reference, "Index stats API":
 * `primaries.store.size_in_bytes`, `total.store.size_in_bytes`, `reserved_in_bytes`); it cannot run here.
 */
const SHARDS_OK = '{"_shards":{"total":1,"successful":1,"failed":0}}';
const STORE_STATS =
  '{"_shards":{"total":1,"successful":1,"failed":0},"_all":{"primaries":{"store":{"size_in_bytes":55644,"reserved_in_bytes":0}},"total":{"store":{"size_in_bytes":55644,"reserved_in_bytes":0}}},' +
  '"indices":{"ib_events":{"uuid":"mTPbn52GS86wSedHUvyvGw","primaries":{"store":{"size_in_bytes":55644,"reserved_in_bytes":0}},"total":{"store":{"size_in_bytes":55644,"reserved_in_bytes":0}}}}}';

describe("elasticsearch verifier's storage (the _stats/store answer recorded from a real OpenSearch 2.19.6, the same Index stats API; no Elasticsearch here)", () => {
  it("refreshes, flushes, then reads indices.<index>.primaries.store.size_in_bytes; no uncompressed figure", async () => {
    const r = await httpReceiver((req) => ({
      status: 200,
      body: req.url === "/ib_events/_stats/store" ? STORE_STATS : SHARDS_OK,
    }));
    const v = elasticsearchVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      const s = await v.storage!();
      expect(r.got.map((g) => `${g.method} ${g.url}`)).toEqual([
        "POST /ib_events/_refresh",
        "POST /ib_events/_flush",
        "GET /ib_events/_stats/store",
      ]);
      expect(s).toEqual({
        bytes: 55644,
        source:
          "Elasticsearch GET /ib_events/_stats/store after _refresh and _flush: indices.ib_events.primaries.store.size_in_bytes (the primary shards' files; total with replicas 55644)",
      });
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("primaries, not total: with a replica the figure is the primaries' (shape of the recorded answer, total doubled)", () => {
    const twice = JSON.parse(STORE_STATS);
    twice.indices.ib_events.total.store.size_in_bytes = 111288;
    expect(storeSizeOf(twice, "ib_events", "Elasticsearch")).toEqual({ primaries: 55644, total: 111288 });
  });

  it("an answer without the index's primaries.store.size_in_bytes is E_ES_ANSWER quoting it", () => {
    expect(() => storeSizeOf(JSON.parse(SHARDS_OK), "ib_events", "Elasticsearch")).toThrow(
      expect.objectContaining({
        code: "E_ES_ANSWER",
        message: expect.stringMatching(
          /without indices\.ib_events\.primaries\.store\.size_in_bytes: \{"_shards"/,
        ),
      }),
    );
  });
});
