import { withEnv } from "../../helpers/env.ts";
import { describe, expect, it } from "vitest";
import { esBulk, esBulkSchema } from "../../../harness/generators/es-bulk.ts";
import { generators } from "../../../harness/generators/index.ts";
import { fields, httpReceiver, seqsOf, startGenerator, type GotRequest } from "./run-generator.ts";

/** The (action, source) pairs of an NDJSON bulk body, parsed line by line. */
function bulkPairs(
  r: GotRequest,
): Array<{ action: Record<string, Record<string, unknown>>; doc: Record<string, unknown> }> {
  const text = r.body.toString("utf8");
  expect(text.endsWith("\n")).toBe(true); // the Bulk API requires the final newline
  const lines = text
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.length % 2).toBe(0);
  const out = [];
  for (let i = 0; i < lines.length; i += 2)
    out.push({ action: lines[i] as Record<string, Record<string, unknown>>, doc: lines[i + 1]! });
  return out;
}

/** An item of a bulk response as Elasticsearch 8.15 writes it ("Bulk API" → response body). */
function item(seqIndex: number, status: number): Record<string, unknown> {
  if (status === 201)
    return {
      index: {
        _index: "ib_events",
        _id: `auto-${seqIndex}`,
        _version: 1,
        result: "created",
        _shards: { total: 1, successful: 1, failed: 0 },
        _seq_no: seqIndex,
        _primary_term: 1,
        status,
      },
    };
  if (status === 429)
    return {
      index: {
        _index: "ib_events",
        _id: null,
        status,
        error: {
          type: "es_rejected_execution_exception",
          reason:
            "rejected execution of coordinating operation [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, coordinating_operation_bytes=1048, max_coordinating_and_primary_bytes=0]",
        },
      },
    };
  return {
    index: {
      _index: "ib_events",
      _id: null,
      status,
      error: {
        type: "document_parsing_exception",
        reason:
          "[1:42] failed to parse field [n] of type [long] in document with id 'null'. Preview of field's value: 'x'",
        caused_by: { type: "illegal_argument_exception", reason: 'For input string: "x"' },
      },
    },
  };
}

describe("es-bulk generator (response shapes from the Elasticsearch 8.15 Bulk API reference; no Elasticsearch here)", () => {
  it("validates its config strictly and is registered", () => {
    expect(esBulkSchema.parse({})).toMatchObject({ batch: 1000, op: "index", ids: false });
    expect(() => esBulkSchema.parse({ index: "a/b" })).toThrow();
    expect(() => esBulkSchema.parse({ refresh: true })).toThrow();
    expect(generators["es-bulk"]).toBe(esBulk);
  });

  it("POSTs NDJSON action/source pairs with Basic auth; `errors: true` with per-item 429 and 400 rejects exactly those seqs; a whole-request 429 rejects the batch (documented shapes; no Elasticsearch here)", async () => {
    const r = await httpReceiver((req) => {
      const n = bulkPairs(req).length;
      if (req.k === 3)
        return {
          status: 429,
          body: JSON.stringify({
            error: {
              root_cause: [
                {
                  type: "es_rejected_execution_exception",
                  reason: "rejected execution of coordinating operation",
                },
              ],
              type: "es_rejected_execution_exception",
              reason: "rejected execution of coordinating operation",
            },
            status: 429,
          }),
        };
      // request 2: items 3 and 17 → 429, item 8 → 400; the rest created
      const statuses = Array.from({ length: n }, (_, i) =>
        req.k === 2 && (i === 3 || i === 17) ? 429 : req.k === 2 && i === 8 ? 400 : 201,
      );
      return {
        status: 200,
        body: JSON.stringify({
          took: 12,
          errors: statuses.some((s) => s !== 201),
          items: statuses.map((s, i) => item(i, s)),
        }),
      };
    });
    try {
      // the password from INGESTBENCH_ELASTICSEARCH_PASSWORD only (params are recorded in run.json and never carry one)
      const final = await withEnv({ INGESTBENCH_ELASTICSEARCH_PASSWORD: "s3cret" }, async () => {
        const run = startGenerator(esBulk, { batch: 20 }, r.port, {
          index: "ib_events",
          user: "elastic",
          password: "not-read",
        });
        r.onRequest((k) => {
          if (k >= 6) run.stop();
        });
        return run.done;
      });
      for (const req of r.got) {
        expect(req.method).toBe("POST");
        expect(req.url).toBe("/ib_events/_bulk?filter_path=errors%2Citems.*.status%2Citems.*.error");
        expect(req.headers["content-type"]).toBe("application/x-ndjson");
        expect(req.headers.authorization).toBe(`Basic ${Buffer.from("elastic:s3cret").toString("base64")}`);
        for (const p of bulkPairs(req)) {
          expect(p.action).toEqual({ index: {} }); // no _id: a repeated batch stays visible as duplicates
          expect(Object.keys(p.doc)).toEqual([...fields.map((f) => f.name), "gen", "seq", "sent_at"]);
        }
      }
      const sentSeqs = r.got.flatMap((req) => bulkPairs(req).map((p) => p.doc.seq as number));
      expect(sentSeqs).toEqual(Array.from({ length: final.sent }, (_, i) => i));
      // request 2 carries seqs 20..39: items 3, 8, 17 → seqs 23, 28, 37; request 3 (seqs 40..59) refused whole
      expect(seqsOf(final.rejectedRanges)).toEqual([
        23,
        28,
        37,
        ...Array.from({ length: 20 }, (_, i) => 40 + i),
      ]);
      expect(final.rejected).toBe(23);
      expect(final.accepted).toBe(final.sent - 23);
      expect(final.errors.join("\n")).toContain("2 × 429 es_rejected_execution_exception");
      expect(final.errors.join("\n")).toContain("1 × 400 document_parsing_exception");
      expect(final.errors.join("\n")).toMatch(
        /_bulk answered 429: es_rejected_execution_exception.*\(retryable, not resent\)/,
      );
    } finally {
      await r.close();
    }
  });

  it("ids: true sets _id = <gen>-<seq> so a re-send overwrites; a 200 whose item count differs rejects the batch (no Elasticsearch here)", async () => {
    const r = await httpReceiver((req) => {
      const n = bulkPairs(req).length;
      const count = req.k === 2 ? n - 1 : n; // request 2 answers one item short
      return {
        status: 200,
        body: JSON.stringify({
          took: 3,
          errors: false,
          items: Array.from({ length: count }, (_, i) => item(i, 201)),
        }),
      };
    });
    try {
      const run = startGenerator(esBulk, { batch: 5, ids: true, op: "create" }, r.port, {}, 5000, 3);
      r.onRequest((k) => {
        if (k >= 3) run.stop();
      });
      const final = await run.done;
      expect(bulkPairs(r.got[0]!).map((p) => p.action)).toEqual(
        [0, 1, 2, 3, 4].map((s) => ({ create: { _id: `3-${s}` } })),
      );
      expect(r.got[0]!.url.startsWith("/ib_events/_bulk?")).toBe(true);
      expect(seqsOf(final.rejectedRanges)).toEqual([5, 6, 7, 8, 9]);
      expect(final.errors[0]).toMatch(/4 items for 5 actions/);
    } finally {
      await r.close();
    }
  });

  it("a sink's params.bulkPath (VictoriaLogs' /insert/elasticsearch/_bulk?…) takes every request, the index then in each action line (no Elasticsearch here)", async () => {
    const r = await httpReceiver((req) => ({
      status: 200,
      body: JSON.stringify({ took: 1, errors: false, items: bulkPairs(req).map((_, i) => item(i, 201)) }),
    }));
    try {
      const run = startGenerator(esBulk, { batch: 4 }, r.port, {
        bulkPath: "/insert/elasticsearch/_bulk?_msg_field=msg&_stream_fields=gen",
      });
      r.onRequest((k) => {
        if (k >= 2) run.stop();
      });
      const final = await run.done;
      expect(final.rejected).toBe(0);
      for (const req of r.got) {
        expect(req.url).toBe(
          "/insert/elasticsearch/_bulk?_msg_field=msg&_stream_fields=gen&filter_path=errors%2Citems.*.status%2Citems.*.error",
        );
        for (const p of bulkPairs(req)) expect(p.action).toEqual({ index: { _index: "ib_events" } });
      }
    } finally {
      await r.close();
    }
  });
});
