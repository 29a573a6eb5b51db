import { describe, expect, it } from "vitest";
import { rowSourceOf } from "../../../core/events/encoding.ts";
import {
  ES_BULK_CONTENT_TYPE,
  EsBulkEncoder,
  EsBulkError,
  parseBulkResponse,
} from "../../../core/events/es-bulk.ts";
import type { EventField } from "../../../core/events/types.ts";

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string" },
];
const TS = new Date(Date.UTC(2024, 10, 7, 0, 0, 1, 234));
const SENT = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));
const source = rowSourceOf(
  fields,
  [
    [TS, "one"],
    [TS, 'tw"o'],
  ],
  2,
  100,
);

describe("es-bulk encoder and response parser (byte-level vectors from the published spec: Elasticsearch Bulk API)", () => {
  it("writes an action line and a source line per event, each ending in a newline", () => {
    const enc = new EsBulkEncoder(source);
    const b = enc.encode(100, 2);
    enc.stamp(b, SENT);
    expect(b.payload.toString()).toBe(
      '{"index":{}}\n{"ts":"2024-11-07T00:00:01.234Z","msg":"one","gen":2,"seq":100,"sent_at":"2025-01-02T03:04:05.678Z"}\n' +
        '{"index":{}}\n' +
        String.raw`{"ts":"2024-11-07T00:00:01.234Z","msg":"tw\"o","gen":2,"seq":101,"sent_at":"2025-01-02T03:04:05.678Z"}` +
        "\n",
    );
    expect(ES_BULK_CONTENT_TYPE).toBe("application/x-ndjson");
  });

  it("names the index, the op and an id on request", () => {
    const enc = new EsBulkEncoder(source, { index: "logs-ib", op: "create", ids: true });
    const b = enc.encode(101, 1);
    enc.stamp(b, SENT);
    const [action, doc, end] = b.payload.toString().split("\n");
    expect(action).toBe('{"create":{"_index":"logs-ib","_id":"2-101"}}');
    expect(JSON.parse(doc!)).toMatchObject({ seq: 101, sent_at: "2025-01-02T03:04:05.678Z" });
    expect(end).toBe("");
    expect(new EsBulkEncoder(source, { index: "x" }).encode(100, 1).payload.toString()).toMatch(
      /^\{"index":\{"_index":"x"\}\}\n/,
    );
  });

  it('maps items of an "errors": true response (201, 429, 400) back to their seqs', () => {
    const body = JSON.stringify({
      took: 30,
      errors: true,
      items: [
        {
          index: {
            _index: "logs",
            _id: "a1",
            _version: 1,
            result: "created",
            status: 201,
            _seq_no: 0,
            _primary_term: 1,
          },
        },
        {
          index: {
            _index: "logs",
            _id: "a2",
            status: 429,
            error: {
              type: "es_rejected_execution_exception",
              reason: "rejected execution of coordinating operation",
            },
          },
        },
        {
          index: {
            _index: "logs",
            _id: "a3",
            status: 400,
            error: { type: "mapper_parsing_exception", reason: "failed to parse field [n] of type [long]" },
          },
        },
        { index: { _index: "logs", _id: "a4", result: "created", status: 201 } },
        {
          index: {
            _index: "logs",
            _id: "a5",
            status: 429,
            error: { type: "es_rejected_execution_exception", reason: "queue full" },
          },
        },
      ],
    });
    const r = parseBulkResponse(200, body, 500, 5);
    expect(r.accepted).toBe(2);
    expect(r.rejectedSeqs).toEqual([501, 502, 504]);
    expect(r.retryableSeqs).toEqual([501, 504]);
    expect(r.failures.map((f) => [f.seq, f.status, f.type])).toEqual([
      [501, 429, "es_rejected_execution_exception"],
      [502, 400, "mapper_parsing_exception"],
      [504, 429, "es_rejected_execution_exception"],
    ]);
    expect(r.summary).toEqual([
      "2 × 429 es_rejected_execution_exception: rejected execution of coordinating operation",
      "1 × 400 mapper_parsing_exception: failed to parse field [n] of type [long]",
    ]);
  });

  it('accepts everything on "errors": false and refuses responses that do not match the batch', () => {
    const ok = JSON.stringify({
      took: 1,
      errors: false,
      items: [{ index: { status: 201 } }, { create: { status: 201 } }],
    });
    expect(parseBulkResponse(200, Buffer.from(ok), 0, 2)).toMatchObject({ accepted: 2, rejectedSeqs: [] });
    expect(() => parseBulkResponse(200, ok, 0, 3)).toThrow(/2 items for 3 actions/);
    expect(() => parseBulkResponse(200, "<html>", 0, 1)).toThrow(EsBulkError);
    try {
      parseBulkResponse(
        429,
        JSON.stringify({ error: { type: "es_rejected_execution_exception", reason: "busy" }, status: 429 }),
        0,
        1,
      );
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(EsBulkError);
      expect(err).toMatchObject({ status: 429, retryable: true, code: "E_ES_BULK" });
    }
    expect(() =>
      parseBulkResponse(
        400,
        JSON.stringify({
          error: {
            type: "illegal_argument_exception",
            reason: "The bulk request must be terminated by a newline [\\n]",
          },
          status: 400,
        }),
        0,
        1,
      ),
    ).toThrow(/illegal_argument_exception/);
  });
});
