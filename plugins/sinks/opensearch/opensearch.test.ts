/**
 * The OpenSearch sink plugin, without an OpenSearch: a node:http server on 127.0.0.1 answers the verifier with
 * the bytes OpenSearch 2.x sends (`GET /` pretty-printed with a trailing LF as RestMainAction always does, every
 * other answer compact JSON; the shapes of the OpenSearch documentation's "Create index", "Refresh index", "Count",
 * "Composite aggregations" and "Scroll" pages), over an in-memory index; the schema and the image entry are
 * checked as data.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { heapMiB } from "../../../core/catalog.ts";
import { parseBulkResponse } from "../../../core/events/es-bulk.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { plugin as opensearch } from "./index.ts";

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
  { name: "n", type: "int" },
];

/** `GET /` of OpenSearch 2.19.6, as RestMainAction writes it (pretty, " : ", LF at the end). */
const ROOT_OPENSEARCH =
  "{\n" +
  '  "name" : "sink",\n' +
  '  "cluster_name" : "docker-cluster",\n' +
  '  "cluster_uuid" : "kZ1mJ0oGQXWm3fqvH3QeXw",\n' +
  '  "version" : {\n' +
  '    "distribution" : "opensearch",\n' +
  '    "number" : "2.19.6",\n' +
  '    "build_type" : "tar",\n' +
  '    "build_hash" : "4b2ebb1b1ac5c5ab4c2c5bd5b6e6d2c7a0a1f3e9",\n' +
  '    "build_date" : "2025-10-01T10:00:00.000000000Z",\n' +
  '    "build_snapshot" : false,\n' +
  '    "lucene_version" : "9.12.2",\n' +
  '    "minimum_wire_compatibility_version" : "7.10.0",\n' +
  '    "minimum_index_compatibility_version" : "7.0.0"\n' +
  "  },\n" +
  '  "tagline" : "The OpenSearch Project: https://opensearch.org/"\n' +
  "}\n";

/** `GET /` of Elasticsearch 8.15.3 at the same address: no `distribution`, a `build_flavor`. */
const ROOT_ELASTICSEARCH =
  "{\n" +
  '  "name" : "sink",\n' +
  '  "cluster_name" : "docker-cluster",\n' +
  '  "cluster_uuid" : "pQ2m1nJ9Tq2yq6d8c3v0xg",\n' +
  '  "version" : {\n' +
  '    "number" : "8.15.3",\n' +
  '    "build_flavor" : "default",\n' +
  '    "build_type" : "docker",\n' +
  '    "build_hash" : "f97532e680b555c3a05e73a74c28afb666923018",\n' +
  '    "build_date" : "2024-10-09T22:08:00.328917561Z",\n' +
  '    "build_snapshot" : false,\n' +
  '    "lucene_version" : "9.11.1",\n' +
  '    "minimum_wire_compatibility_version" : "7.17.0",\n' +
  '    "minimum_index_compatibility_version" : "7.0.0"\n' +
  "  },\n" +
  '  "tagline" : "You Know, for Search"\n' +
  "}\n";

const NO_SUCH_INDEX =
  '{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [ib_events]","index":"ib_events","resource.type":"index_or_alias","resource.id":"ib_events","index_uuid":"_na_"}],' +
  '"type":"index_not_found_exception","reason":"no such index [ib_events]","index":"ib_events","resource.type":"index_or_alias","resource.id":"ib_events","index_uuid":"_na_"},"status":404}';
const CREATED = '{"acknowledged":true,"shards_acknowledged":true,"index":"ib_events"}';
const REFRESHED = '{"_shards":{"total":1,"successful":1,"failed":0}}';
const SCROLL_ID =
  "FGluY2x1ZGVfY29udGV4dF91dWlkDXF1ZXJ5QW5kRmV0Y2gBFmRPdWhRMXlsVHNlbjJjVjZ1d2RCZncAAAAAAAAAAxZ0dWVjWW1pRlNHV1JtbWM5S0g3QVhR";
const SCROLL_CLEARED = '{"succeeded":true,"num_freed":1}';

interface Doc {
  _version: number;
  gen?: number;
  seq?: number;
}
interface Got {
  method: string;
  url: string;
  body: string;
}
type Answer = { status: number; body: string } | undefined;

/** What the stand-in does with one request; `undefined` falls through to OpenSearch's index answers below. */
type Override = (req: Got) => Answer;

/**
 * An OpenSearch 2.x REST stand-in over `docs` on 127.0.0.1. Requests it does not know (an Elasticsearch-only
 * `_pit`, a `_shard_doc` sort, which OpenSearch 2.x cannot sort on) are answered 400, so a verifier that sends them
 * fails.
 */
async function standIn(
  docs: Doc[],
  opts: { root?: string; newest?: string; override?: Override } = {},
): Promise<{ port: number; got: Got[]; close(): Promise<void> }> {
  const got: Got[] = [];
  let exists = false;
  let scrollFrom = -1;
  const answer = (req: Got): Answer => {
    const path = req.url.split("?")[0];
    const body = req.body.length > 0 ? (JSON.parse(req.body) as Record<string, any>) : {};
    if (req.method === "GET" && path === "/") return { status: 200, body: opts.root ?? ROOT_OPENSEARCH };
    if (req.method === "DELETE" && path === "/ib_events") {
      if (!exists) return { status: 404, body: NO_SUCH_INDEX };
      exists = false;
      return { status: 200, body: '{"acknowledged":true}' };
    }
    if (req.method === "PUT" && path === "/ib_events") {
      exists = true;
      return { status: 200, body: CREATED };
    }
    if (req.method === "POST" && path === "/ib_events/_refresh") return { status: 200, body: REFRESHED };
    if (req.method === "GET" && path === "/ib_events/_count")
      return {
        status: 200,
        body: `{"count":${docs.length},"_shards":{"total":1,"successful":1,"skipped":0,"failed":0}}`,
      };
    if (req.method === "POST" && path === "/ib_events/_count" && body.query?.range?.gen) {
      const { gte, lt } = body.query.range.gen as { gte: number; lt: number };
      const count = docs.filter((d) => typeof d.gen === "number" && d.gen >= gte && d.gen < lt).length;
      return {
        status: 200,
        body: `{"count":${count},"_shards":{"total":1,"successful":1,"skipped":0,"failed":0}}`,
      };
    }
    if (req.method === "POST" && path === "/ib_events/_search" && body.aggs?.newest) {
      return {
        status: 200,
        body:
          opts.newest ??
          '{"aggregations":{"newest":{"value":1.764453600123E12,"value_as_string":"2025-11-29T22:00:00.123Z"}}}',
      };
    }
    if (req.method === "POST" && path === "/ib_events/_search" && body.aggs?.seqs?.composite) {
      const c = body.aggs.seqs.composite;
      const counts = new Map<string, { gen: number; seq: number; n: number }>();
      for (const d of docs) {
        if (d.gen === undefined || d.seq === undefined) continue; // a composite source skips documents without the field
        const k = `${d.gen}:${d.seq}`;
        const e = counts.get(k);
        if (e) e.n++;
        else counts.set(k, { gen: d.gen, seq: d.seq, n: 1 });
      }
      let keys = [...counts.values()].sort((a, b) => a.gen - b.gen || a.seq - b.seq);
      if (c.after)
        keys = keys.filter((k) => k.gen > c.after.gen || (k.gen === c.after.gen && k.seq > c.after.seq));
      const page = keys.slice(0, c.size);
      const buckets = page.map((k) => `{"key":{"gen":${k.gen},"seq":${k.seq}},"doc_count":${k.n}}`).join(",");
      const after =
        page.length > 0 ? `"after_key":{"gen":${page.at(-1)!.gen},"seq":${page.at(-1)!.seq}},` : "";
      return { status: 200, body: `{"aggregations":{"seqs":{${after}"buckets":[${buckets}]}}}` };
    }
    const hitsFrom = (from: number, size: number): string => {
      const hits = docs.slice(from, from + size);
      scrollFrom = from + hits.length;
      return `{"_scroll_id":"${SCROLL_ID}","hits":{"hits":[${hits.map((d) => `{"_version":${d._version}}`).join(",")}]}}`;
    };
    if (req.method === "POST" && path === "/ib_events/_search" && req.url.includes("scroll=2m")) {
      if (JSON.stringify(body.sort) !== '["_doc"]' || body.version !== true || body._source !== false)
        return undefined;
      return { status: 200, body: hitsFrom(0, body.size) };
    }
    if (
      req.method === "POST" &&
      path === "/_search/scroll" &&
      body.scroll_id === SCROLL_ID &&
      scrollFrom >= 0
    )
      return { status: 200, body: hitsFrom(scrollFrom, 10_000) };
    if (
      req.method === "DELETE" &&
      path === "/_search/scroll" &&
      JSON.stringify(body.scroll_id) === `["${SCROLL_ID}"]`
    ) {
      scrollFrom = -1;
      return { status: 200, body: SCROLL_CLEARED };
    }
    return undefined;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const g: Got = {
        method: req.method ?? "",
        url: req.url ?? "",
        body: Buffer.concat(chunks).toString("utf8"),
      };
      got.push(g);
      const a = opts.override?.(g) ??
        answer(g) ?? {
          status: 400,
          body: `{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"request [${g.url}] not handled by this stand-in"}],"type":"illegal_argument_exception","reason":"request [${g.url}] not handled by this stand-in"},"status":400}`,
        };
      const bytes = Buffer.from(a.body, "utf8");
      res.writeHead(a.status, {
        "content-type": "application/json; charset=UTF-8",
        "content-length": bytes.length,
      });
      res.end(bytes);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    got,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A stand-in and a verifier on it, both closed after the test. */
async function verifierOn(
  docs: Doc[],
  params: Record<string, string> = {},
  opts: Parameters<typeof standIn>[1] = {},
): Promise<{ v: Verifier; got: Got[] }> {
  const s = await standIn(docs, opts);
  const v = opensearch.verifier.create({ host: "127.0.0.1", port: s.port, params, fields });
  cleanups.push(s.close, () => v.close());
  return { v, got: s.got };
}

const line = (g: Got): string => `${g.method} ${g.url}`;

describe("opensearch verifier against OpenSearch 2.x REST responses (byte-level vectors; no server here)", () => {
  it("prepare checks GET / first, drops the index (404 tolerated) and creates it with the explicit mapping and OpenSearch's index settings", async () => {
    const { v, got } = await verifierOn([], { number_of_shards: "3", refresh_interval: "30s" });
    await v.prepare();
    expect(got.map(line)).toEqual(["GET /", "DELETE /ib_events", "PUT /ib_events"]);
    expect(JSON.parse(got[2]!.body)).toEqual({
      settings: { number_of_shards: 3, number_of_replicas: 0, refresh_interval: "30s" },
      mappings: {
        dynamic: false,
        properties: {
          ts: { type: "date" },
          msg: { type: "text" },
          n: { type: "long" },
          gen: { type: "integer" },
          seq: { type: "long" },
          sent_at: { type: "date" },
        },
      },
    });
  });

  it("without params the index has one shard, no replica and OpenSearch's own refresh_interval (none sent)", async () => {
    const { v, got } = await verifierOn([]);
    await v.prepare();
    expect(JSON.parse(got.at(-1)!.body).settings).toEqual({ number_of_shards: 1, number_of_replicas: 0 });
  });

  it("the version check refuses Elasticsearch's GET / answer before anything is dropped", async () => {
    const { v, got } = await verifierOn([], {}, { root: ROOT_ELASTICSEARCH });
    const err = await v.prepare().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "VerificationError", code: "E_VERSION" });
    expect((err as Error).message).toMatch(
      /is not OpenSearch: GET \/ answered version\.distribution undefined \(number "8\.15\.3"\)/,
    );
    expect(got.map(line)).toEqual(["GET /"]);
  });

  it("the version check refuses an OpenSearch that is not 2.x, and one other than params.version", async () => {
    const three = await verifierOn(
      [],
      {},
      { root: ROOT_OPENSEARCH.replace('"number" : "2.19.6"', '"number" : "3.3.0"') },
    );
    await expect(three.v.prepare()).rejects.toThrow(
      /runs OpenSearch "3\.3\.0"; this verifier speaks OpenSearch 2\.x/,
    );
    const pinned = await verifierOn([], { version: "2.19.4" });
    await expect(pinned.v.prepare()).rejects.toThrow(/runs OpenSearch 2\.19\.6, the scenario pins 2\.19\.4/);
    expect(pinned.got.map(line)).toEqual(["GET /"]);
    const same = await verifierOn([], { version: "2.19.6" });
    await expect(same.v.prepare()).resolves.toBeUndefined();
  });

  it("bad index params are refused naming the param, before the index is dropped", async () => {
    const shards = await verifierOn([], { number_of_shards: "0" });
    await expect(shards.v.prepare()).rejects.toMatchObject({
      code: "E_SINK_CONFIG",
      field: "sink.opensearch.number_of_shards",
    });
    const refresh = await verifierOn([], { refresh_interval: "fast" });
    await expect(refresh.v.prepare()).rejects.toMatchObject({
      code: "E_SINK_CONFIG",
      field: "sink.opensearch.refresh_interval",
    });
    expect(refresh.got.map(line)).toEqual(["GET /"]);
  });

  it("sample refreshes, then counts, then reads the newest sent_at from the max aggregation's double", async () => {
    const docs: Doc[] = Array.from({ length: 17 }, (_, i) => ({ _version: 1, gen: 0, seq: i }));
    const { v, got } = await verifierOn(docs);
    const s = await v.sample();
    expect(s.stored).toBe(17);
    expect(s.newestSentAtMs).toBe(Date.UTC(2025, 10, 29, 22, 0, 0, 123));
    expect(s.tAfter).toBeGreaterThanOrEqual(s.tBefore);
    expect(got.map(line)).toEqual([
      "POST /ib_events/_refresh",
      "POST /ib_events/_count",
      "POST /ib_events/_search?filter_path=aggregations",
    ]);
  });

  it("the ledger tells lost, duplicated, overwritten, rejected and unexpected apart from composite pages and a scroll over _version (no point in time, no _shard_doc)", async () => {
    const docs: Doc[] = [];
    const put = (gen: number | undefined, seq: number | undefined, version = 1): void => {
      docs.push({ _version: version, gen, seq });
    };
    // generator 0 sent 12 000 seqs: 100..199 rejected (150 stored anyway), 5000..5004 and 11 995..11 999 lost
    for (let s = 0; s < 12_000; s++) {
      if ((s >= 100 && s < 200 && s !== 150) || (s >= 5000 && s < 5005) || s >= 11_995) continue;
      put(0, s);
    }
    put(0, 7);
    put(0, 9000); // the same events again under generated _ids: 2 duplicates
    docs[42]!._version = 3; // an `_id` = "0-42" document written three times: overwritten twice
    put(1, 0);
    put(1, 2); // generator 1 sent 3: seq 1 lost
    put(0, 12_000);
    put(4, 0);
    put(undefined, undefined); // beyond sent, unknown generator, no gen/seq: unexpected
    const { v, got } = await verifierOn(docs);
    const l = await v.ledger([12_000, 3], [[[100, 199]], []]);
    expect(l).toEqual({
      sent: 12_003,
      accepted: 11_903,
      rejected: 100,
      // gen 0: 12 000 − 100 + 1 (150) − 5 − 5 = 11 891 distinct, + 2 duplicate rows; gen 1: 2; 3 unexpected
      stored: 11_898,
      distinct: 11_896,
      duplicated: 2,
      lost: 11,
      overwritten: 2,
      unexpected: 3,
      missingRanges: [
        [0, 5000, 5004],
        [0, 11_995, 11_999],
        [1, 1, 1],
      ],
      foreign: 0,
      rejectedStored: 1,
      deduplicated: 0,
    });
    const composite = got.filter((g) => g.url.includes("aggregations.seqs"));
    expect(composite).toHaveLength(3); // 11 895 keyed buckets: 10 000, 1 895, then an empty page
    expect(got.filter((g) => g.url.startsWith("/ib_events/_search?scroll=2m"))).toHaveLength(1);
    expect(got.filter((g) => g.url.startsWith("/_search/scroll?")).map((g) => JSON.parse(g.body))).toEqual([
      { scroll: "2m", scroll_id: SCROLL_ID },
      { scroll: "2m", scroll_id: SCROLL_ID },
    ]);
    expect(line(got.at(-1)!)).toBe("DELETE /_search/scroll");
    expect(got.some((g) => g.url.includes("_pit") || g.body.includes("_shard_doc"))).toBe(false);
  });

  it("an empty index needs no scroll: the ledger is all lost", async () => {
    const { v, got } = await verifierOn([]);
    const l = await v.ledger([5], [[]]);
    expect(l).toMatchObject({ sent: 5, stored: 0, lost: 5, overwritten: 0, missingRanges: [[0, 0, 4]] });
    expect(got.some((g) => g.url.includes("scroll"))).toBe(false);
  });

  it("errors: a _count without a count, a refused refresh, a scroll that fails mid-way (cleared anyway), no scroll opened, and no server", async () => {
    const noCount = await verifierOn(
      [],
      {},
      {
        override: (g) =>
          g.url === "/ib_events/_count" && g.method === "POST"
            ? { status: 200, body: '{"_shards":{"total":1,"successful":0,"skipped":0,"failed":1}}' }
            : undefined,
      },
    );
    await expect(noCount.v.sample()).rejects.toMatchObject({
      code: "E_ES_ANSWER",
      message: expect.stringMatching(/^OpenSearch _count answered without a count/),
    });

    const closed =
      '{"error":{"root_cause":[{"type":"index_closed_exception","reason":"closed","index":"ib_events"}],"type":"index_closed_exception","reason":"closed","index":"ib_events"},"status":400}';
    const refused = await verifierOn(
      [],
      {},
      { override: (g) => (g.url === "/ib_events/_refresh" ? { status: 400, body: closed } : undefined) },
    );
    await expect(refused.v.sample()).rejects.toMatchObject({
      code: "E_SINK_HTTP",
      status: 400,
      message: expect.stringMatching(
        /^OpenSearch answered POST \/ib_events\/_refresh with 400: .*index_closed_exception/,
      ),
    });

    const docs: Doc[] = Array.from({ length: 10_001 }, (_, i) => ({ _version: 1, gen: 0, seq: i }));
    const unavailable =
      '{"error":{"root_cause":[],"type":"search_phase_execution_exception","reason":"all shards failed","phase":"query","grouped":true,"failed_shards":[]},"status":503}';
    const midway = await verifierOn(
      docs,
      {},
      {
        override: (g) =>
          g.url.startsWith("/_search/scroll?") ? { status: 503, body: unavailable } : undefined,
      },
    );
    await expect(midway.v.ledger([10_001], [[]])).rejects.toMatchObject({ code: "E_SINK_HTTP", status: 503 });
    expect(line(midway.got.at(-1)!)).toBe("DELETE /_search/scroll");

    const noScroll = await verifierOn(
      docs,
      {},
      {
        override: (g) =>
          g.url.includes("scroll=2m") ? { status: 200, body: '{"hits":{"hits":[]}}' } : undefined,
      },
    );
    await expect(noScroll.v.ledger([10_001], [[]])).rejects.toThrow(/^OpenSearch opened no scroll/);

    const s = await standIn([]);
    const port = s.port;
    await s.close();
    const gone = opensearch.verifier.create({ host: "127.0.0.1", port, params: {}, fields });
    cleanups.push(() => gone.close());
    await expect(gone.prepare()).rejects.toMatchObject({
      code: "E_VERIFIER_CONNECT",
      message: expect.stringContaining(`verifier cannot reach OpenSearch at 127.0.0.1:${port}`),
    });
  });

  it("OpenSearch's _bulk answer with a full write queue: the 429 item (rejected_execution_exception) is a rejected, retryable seq, the rest accepted", () => {
    // filter_path=errors,items.*.status,items.*.error (the es-bulk generator's), items in request order
    const body =
      '{"errors":true,"items":[{"index":{"status":201}},{"index":{"status":429,"error":{"type":"rejected_execution_exception",' +
      '"reason":"rejected execution of coordinating operation [coordinating_and_primary_bytes=104857600, replica_bytes=0, all_bytes=104857600, coordinating_operation_bytes=2048, max_coordinating_and_primary_bytes=104857600]"}}},' +
      '{"index":{"status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse field [n] of type [long] in document with id \'x\'"}}}]}';
    const o = parseBulkResponse(200, body, 8000, 3);
    expect(o.accepted).toBe(1);
    expect(o.rejectedSeqs).toEqual([8001, 8002]);
    expect(o.retryableSeqs).toEqual([8001]);
    expect(o.summary[0]).toMatch(
      /^1 × 429 rejected_execution_exception: rejected execution of coordinating operation/,
    );
  });
});

describe("sink.opensearch schema and image entry", () => {
  const schema = opensearch.schema;

  it("fills the defaults and keeps OpenSearch's setting names", () => {
    expect(schema.parse({})).toEqual({ version: "2.19.6", index: "ib_events", number_of_shards: 1 });
    expect(schema.parse({ index: "logs-13", number_of_shards: 2, refresh_interval: "-1" })).toEqual({
      version: "2.19.6",
      index: "logs-13",
      number_of_shards: 2,
      refresh_interval: "-1",
    });
  });

  it("is strict: Elasticsearch's `shards` and unknown keys are refused, naming the key", () => {
    const r = schema.safeParse({ shards: 1 });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]).toMatchObject({ code: "unrecognized_keys", keys: ["shards"] });
  });

  it("a bad index name, version, shard count or refresh interval names its field", () => {
    const issue = (v: unknown) => {
      const r = schema.safeParse(v);
      expect(r.success).toBe(false);
      return r.error!.issues[0]!;
    };
    expect(issue({ index: "Logs" })).toMatchObject({
      path: ["index"],
      message: "a lowercase OpenSearch index name",
    });
    expect(issue({ index: "_internal" }).path).toEqual(["index"]);
    expect(issue({ index: "a".repeat(256) }).path).toEqual(["index"]);
    expect(issue({ version: "2.19.4" }).path).toEqual(["version"]);
    expect(issue({ number_of_shards: 0 }).path).toEqual(["number_of_shards"]);
    expect(issue({ number_of_shards: 1.5 }).path).toEqual(["number_of_shards"]);
    expect(issue({ refresh_interval: "fast" }).path).toEqual(["refresh_interval"]);
    expect(issue({ refresh_interval: "1" }).path).toEqual(["refresh_interval"]);
  });

  it("the descriptor: a sink with a local component (./component.ts) and an image, all carrying its name", () => {
    expect(opensearch).toMatchObject({ kind: "sink", name: "opensearch" });
    expect(opensearch.local!.name).toBe("opensearch");
    expect(opensearch.image!.name).toBe("opensearch");
    expect(opensearch.verifier.name).toBe("opensearch");
    expect(opensearch.about).toContain("2.19.6");
  });

  it("the image: opensearchproject/opensearch at the pinned tag, REST on 9200, one node, security and its demo install off, the heap from the memory cap", () => {
    const img = opensearch.image!;
    expect(img).toMatchObject({
      kind: "sink",
      repository: "opensearchproject/opensearch",
      tag: "2.19.6",
      version: "2.19.6",
      digest: null,
      dataDir: "/usr/share/opensearch/data",
      heapFromMemory: true,
    });
    expect(img.ports).toEqual([{ port: 9200, role: "data", protocol: "tcp", scheme: "http" }]);
    expect(img.env).toEqual({
      "discovery.type": "single-node",
      DISABLE_INSTALL_DEMO_CONFIG: "true",
      DISABLE_SECURITY_PLUGIN: "true",
      DISABLE_PERFORMANCE_ANALYZER_AGENT_CLI: "true",
      OPENSEARCH_JAVA_OPTS: "-Xms{heapMiB}m -Xmx{heapMiB}m",
    });
    // the demo install is off, so 2.12+'s initial admin password is not needed (image.ts)
    expect(Object.keys(img.env)).not.toContain("OPENSEARCH_INITIAL_ADMIN_PASSWORD");
    // as the docker and azure hosts substitute it: half of 004's 2 GiB cap
    const heap = String(heapMiB(2 * 1024 ** 3));
    expect(img.env.OPENSEARCH_JAVA_OPTS!.replaceAll("{heapMiB}", heap)).toBe("-Xms1024m -Xmx1024m");
    expect(img.versionCommand).toEqual(["opensearch", "--version"]);
    // the first x.y.z of `opensearch --version`'s line (OpenSearch.java's format) is the pinned release
    expect(
      /\d+\.\d+(?:\.\d+)?/.exec(
        "Version: 2.19.6, Build: tar/4b2ebb1/2025-10-01T10:00:00.000000000Z, JVM: 21.0.8",
      )?.[0],
    ).toBe(img.version);
  });
});
