import { describe, expect, it } from "vitest";
import { rowSourceOf, stampBatch } from "../../../core/events/encoding.ts";
import { HttpJsonEncoder, httpJsonContentType } from "../../../core/events/http-json.ts";
import { createEventSource } from "../../../core/events/source.ts";
import type { EventField } from "../../../core/events/types.ts";

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string" },
  { name: "n", type: "int" },
  { name: "x", type: "float" },
  { name: "ok", type: "bool" },
];
const TS = new Date(Date.UTC(2024, 10, 7, 0, 0, 1, 234));
const SENT = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));
const source = rowSourceOf(
  fields,
  [
    [TS, 'hello "w"\n\\\u0001é', 42, 0.5, true],
    [TS, "", -7, 1000, false],
  ],
  3,
);

describe("http-json encoder (byte-level vectors from the published spec: RFC 8259 JSON, NDJSON)", () => {
  it("writes NDJSON lines with RFC 8259 escapes, tracking fields last, sent_at stamped in place", () => {
    const enc = new HttpJsonEncoder(source, { framing: "ndjson" });
    const b = enc.encode(0, 2);
    enc.stamp(b, SENT);
    expect(b.payload.toString("utf8")).toBe(
      String.raw`{"ts":"2024-11-07T00:00:01.234Z","msg":"hello \"w\"\n\\\u0001é","n":42,"x":0.5,"ok":true,"gen":3,"seq":0,"sent_at":"2025-01-02T03:04:05.678Z"}` +
        "\n" +
        String.raw`{"ts":"2024-11-07T00:00:01.234Z","msg":"","n":-7,"x":1000,"ok":false,"gen":3,"seq":1,"sent_at":"2025-01-02T03:04:05.678Z"}` +
        "\n",
    );
    expect(JSON.parse(b.payload.toString("utf8").split("\n")[0]!).msg).toBe('hello "w"\n\\\u0001é');
    // re-stamping overwrites the same bytes
    stampBatch(b, Date.UTC(2030, 5, 6, 7, 8, 9, 10));
    expect(b.payload.toString("utf8")).toContain('"sent_at":"2030-06-06T07:08:09.010Z"}\n');
    expect(b.payload.toString("utf8")).not.toContain("2025-01-02");
    expect(httpJsonContentType("ndjson")).toBe("application/x-ndjson");
  });

  it("writes a JSON array body and epoch-ms times on request", () => {
    const enc = new HttpJsonEncoder(source, { framing: "array", timeFormat: "epoch-ms" });
    const b = enc.encode(1, 1);
    enc.stamp(b, SENT);
    expect(b.payload.toString()).toBe(
      '[{"ts":1730937601234,"msg":"","n":-7,"x":1000,"ok":false,"gen":3,"seq":1,"sent_at":1735787045678}]',
    );
    expect(b).toMatchObject({ from: 1, count: 1 });
    expect(httpJsonContentType("array")).toBe("application/json");
    expect(() => enc.encode(-1, 2)).toThrow(RangeError);
  });

  it("encodes seeded events (and replay-like text) as valid JSON that round-trips", () => {
    const src = createEventSource({
      fields: [...fields, { name: "tail", type: "string", size: 200 }],
      seed: 7,
      genId: 1,
    });
    const enc = new HttpJsonEncoder(src, { framing: "array" });
    const b = enc.encode(1000, 50);
    enc.stamp(b, SENT);
    const docs = JSON.parse(b.payload.toString("utf8")) as Array<Record<string, unknown>>;
    expect(docs).toHaveLength(50);
    docs.forEach((d, k) => {
      const v = src.values(1000 + k);
      expect(d).toEqual({
        ts: (v[0] as Date).toISOString(),
        msg: v[1],
        n: v[2],
        x: v[3],
        ok: v[4],
        tail: v[5],
        gen: 1,
        seq: 1000 + k,
        sent_at: SENT.toISOString(),
      });
    });
  });
});
