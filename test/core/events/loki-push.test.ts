import { describe, expect, it } from "vitest";
import { rowSourceOf } from "../../../core/events/encoding.ts";
import { LokiPushEncoder, LokiPushError, parseLokiPushResponse } from "../../../core/events/loki-push.ts";
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
    [TS, 'say "hi"\n'],
    [TS, "x"],
  ],
  4,
);

describe("loki-push encoder (byte-level vectors from the published spec: Loki HTTP API, POST /loki/api/v1/push)", () => {
  it("writes one stream with nanosecond timestamp strings from the send time and JSON lines", () => {
    const enc = new LokiPushEncoder(source, { labels: { env: "bench" } });
    const b = enc.encode(0, 2);
    enc.stamp(b, SENT);
    const text = b.payload.toString("utf8");
    expect(text).toBe(
      '{"streams":[{"stream":{"job":"ingestbench","env":"bench","gen":"4"},"values":[' +
        '["1735787045678000000","' +
        String.raw`{\"ts\":\"2024-11-07T00:00:01.234Z\",\"msg\":\"say \\\"hi\\\"\\n\",\"gen\":4,\"seq\":0,\"sent_at\":\"2025-01-02T03:04:05.678Z\"}` +
        '"],' +
        '["1735787045678000001","' +
        String.raw`{\"ts\":\"2024-11-07T00:00:01.234Z\",\"msg\":\"x\",\"gen\":4,\"seq\":1,\"sent_at\":\"2025-01-02T03:04:05.678Z\"}` +
        '"]' +
        "]}]}",
    );
    const doc = JSON.parse(text) as {
      streams: Array<{ stream: Record<string, string>; values: Array<[string, string]> }>;
    };
    const [ts, line] = doc.streams[0]!.values[0]!;
    expect(ts).toMatch(/^\d{19}$/);
    expect(BigInt(ts)).toBe(BigInt(SENT.getTime()) * 1_000_000n);
    expect(JSON.parse(line)).toEqual({
      ts: TS.toISOString(),
      msg: 'say "hi"\n',
      gen: 4,
      seq: 0,
      sent_at: SENT.toISOString(),
    });
  });

  it("uses the event time in nanoseconds with timestamp: event", () => {
    const b = new LokiPushEncoder(source, { timestamp: "event" }).encode(1, 1);
    const doc = JSON.parse(b.payload.toString()) as { streams: Array<{ values: Array<[string, string]> }> };
    expect(doc.streams[0]!.values[0]![0]).toBe("1730937601234000000");
  });

  it("refuses bad label names and types Loki's answers", () => {
    expect(() => new LokiPushEncoder(source, { labels: { "bad-name": "x" } })).toThrow(RangeError);
    expect(() => parseLokiPushResponse(204, "")).not.toThrow();
    expect(() =>
      parseLokiPushResponse(
        400,
        "entry for stream '{job=\"ingestbench\"}' has timestamp too old: 2024-11-07T00:00:01Z",
      ),
    ).toThrow(/timestamp too old/);
    try {
      parseLokiPushResponse(429, "Ingestion rate limit exceeded");
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(LokiPushError);
      expect(err).toMatchObject({ status: 429, retryable: true, code: "E_LOKI_PUSH" });
    }
  });
});
