// The sample application's exporter framing (examples/sample-app/framing.ts): byte-level vectors from the published
// protocols (Forward Protocol v1 PackedForward with EventTime ext type 0, fluent/fluentd wiki "Forward Protocol
// Specification v1"; MessagePack spec formats; RFC 5424 / RFC 6587 octet counting), decoded by an independent msgpack
// implementation (@msgpack/msgpack), and its recordBytes against the harness's per-record encodings
// (harness/runner/app-bytes.ts), which is what the app bytes check compares at the sink. No Fluentd here.
import { decode, decodeMulti, ExtData } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { framer } from "../../examples/sample-app/framing.ts";
import { generatorBlock, recordBytesOf } from "../../harness/runner/app-bytes.ts";
import type { EventField } from "../../core/events/types.ts";

const SENT = Date.UTC(2025, 0, 2, 3, 4, 5, 678); // 1735787045 s + 678000000 ns
const ISO = "2025-01-02T03:04:05.678Z";
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");
const fixstr = (s: string): Buffer =>
  Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s, "latin1")]);
const EVENT: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "span", type: "string", size: 120 },
  { name: "n", type: "int" },
];

describe("sample app exporter framing (byte-level vectors from the Forward protocol v1 spec and RFC 5424/6587; no Fluentd here)", () => {
  it("fluent-forward: one PackedForward message [tag, entries as bin, {size}] per drain, EventTime d7 00 <sec> <nsec>, seqs with holes (spec vectors)", () => {
    const frame = framer({
      protocol: "fluent-forward",
      generator: generatorBlock("fluent-forward", { seed: 1 }),
      gen: 3,
      seed: 1,
      fields: [],
    });
    const out = frame([0, 2], SENT);
    // an event without a timestamp field: EventTime is the send time (spec "EventTime Ext Format": fixext 8, type 0)
    const entry = (seq: number): Buffer =>
      Buffer.concat([
        hex("92 d7 00 67760225 28697580"), // [EventTime(1735787045 s, 678000000 ns),
        hex("83"),
        fixstr("gen"),
        hex("03"),
        fixstr("seq"),
        Buffer.from([seq]),
        fixstr("sent_at"),
        hex("b8"),
        Buffer.from(ISO), // {gen, seq, sent_at}]
      ]);
    const entries = Buffer.concat([entry(0), entry(2)]);
    expect(entries.length).toBe(110);
    const expected = Buffer.concat([
      hex("93"),
      fixstr("ingestbench"),
      hex("c4 6e"),
      entries,
      hex("81"),
      fixstr("size"),
      hex("02"),
    ]);
    expect(out.payload.toString("hex")).toBe(expected.toString("hex"));
    // the records' own encodings are the entries; the array header, tag, bin header and option map belong to none
    expect(out.recordBytes).toBe(110);
  });

  it("fluent-forward: an independent msgpack decoder reads every entry with its seq, gen and seeded fields; tag from the block; ack and str entries refused", () => {
    const generator = generatorBlock("fluent-forward", { seed: 7, tag: "app.trace" });
    const frame = framer({ protocol: "fluent-forward", generator, gen: 123_456, seed: 7, fields: EVENT });
    const seqs = [5, 1, 9, 300];
    const out = frame(seqs, SENT);
    const [tag, stream, option] = decode(out.payload) as [string, Uint8Array, Record<string, unknown>];
    expect([tag, option]).toEqual(["app.trace", { size: 4 }]);
    const entries = [...decodeMulti(stream)] as Array<[ExtData, Record<string, unknown>]>;
    expect(entries.map(([, r]) => [r.gen, r.seq, r.sent_at])).toEqual(seqs.map((s) => [123_456, s, ISO]));
    for (const [time, r] of entries) {
      expect(time).toBeInstanceOf(ExtData);
      expect(time.type).toBe(0);
      // EventTime carries the record's ts field (seconds, nanoseconds big-endian)
      const d = Buffer.from(time.data as Uint8Array);
      expect(new Date(d.readUInt32BE(0) * 1000 + d.readUInt32BE(4) / 1e6).toISOString()).toBe(r.ts);
      expect(Buffer.byteLength(r.span as string)).toBe(120);
      expect(typeof r.n).toBe("number");
    }
    expect(() =>
      framer({
        protocol: "fluent-forward",
        generator: { ...generator, ack: true },
        gen: 0,
        seed: 7,
        fields: EVENT,
      }),
    ).toThrow(/does not wait for Forward acks/);
    expect(() =>
      framer({
        protocol: "fluent-forward",
        generator: { ...generator, entries: "str" },
        gen: 0,
        seed: 7,
        fields: EVENT,
      }),
    ).toThrow(/not str/);
    expect(() => framer({ protocol: "otlp", generator: {}, gen: 0, seed: 7, fields: EVENT })).toThrow(
      /speaks syslog, fluent-forward, not otlp/,
    );
  });

  it("syslog: each record one RFC 5424 message in an RFC 6587 octet-counting frame, APP-NAME from the block, PROCID 0 (RFC vectors)", () => {
    const frame = framer({
      protocol: "syslog",
      generator: generatorBlock("syslog", { seed: 1, appName: "sample-app" }),
      gen: 3,
      seed: 1,
      fields: [],
    });
    const out = frame([4], SENT);
    const msg = `<134>1 ${ISO} ingestbench sample-app 0 - [ib@32473 gen="3" seq="4" sent_at="${ISO}"]`;
    expect(out.payload.toString("latin1")).toBe(`${Buffer.byteLength(msg)} ${msg}`);
    expect(out.recordBytes).toBe(out.payload.length);
  });

  it("recordBytes equals the harness's per-record encodings of the same seqs (the app bytes check at the sink), for both protocols", () => {
    for (const protocol of ["syslog", "fluent-forward"]) {
      const generator = generatorBlock(protocol, { seed: 42 });
      const frame = framer({ protocol, generator, gen: 99_000, seed: 42, fields: EVENT });
      const seqs = [0, 1, 2, 7, 8, 1000, 123_456];
      const length = recordBytesOf({ protocol, config: generator, fields: EVENT, seed: 42, gen: 99_000 })!;
      expect(frame(seqs, SENT).recordBytes).toBe(seqs.reduce((n, s) => n + length(s), 0));
    }
  });
});
