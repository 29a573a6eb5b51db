import { decode, decodeMulti, encode, ExtData } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { rowSourceOf } from "../../../core/events/encoding.ts";
import {
  FluentForwardEncoder,
  ForwardResponseReader,
  forwardChunkId,
  isForwardAck,
  msgpackObjectEnd,
} from "../../../core/events/fluent-forward.ts";
import type { EventField } from "../../../core/events/types.ts";

const TS = new Date(Date.UTC(2024, 10, 7, 0, 0, 1, 234)); // 1730937601 s + 234000000 ns
const SENT = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");
const str = (s: string): Buffer => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s, "latin1")]); // fixstr < 32

describe("fluent-forward encoder (byte-level vectors from the published spec: Forward Protocol v1 PackedForward, MessagePack)", () => {
  it("writes EventTime as ext type 0: d7 00 <sec BE> <nsec BE>", () => {
    const enc = new FluentForwardEncoder(rowSourceOf([{ name: "ts", type: "timestamp" }], [[TS]]));
    const b = enc.encode(0, 1);
    expect(b.payload.indexOf(hex("d7 00 672c0301 0df28e80"))).toBeGreaterThan(0);
  });

  it("writes [tag, entries as bin, {size, chunk}] byte for byte", () => {
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "msg", type: "string" },
      { name: "n", type: "int" },
    ];
    const enc = new FluentForwardEncoder(rowSourceOf(fields, [[TS, "hi", 300]], 3), {
      tag: "ib.test",
      ack: true,
    });
    const b = enc.encode(0, 1);
    enc.stamp(b, SENT);
    const entry = Buffer.concat([
      hex("92 d7 00 672c0301 0df28e80"), // [EventTime,
      hex("86"), // fixmap of 6 pairs
      str("ts"),
      hex("b8"),
      Buffer.from("2024-11-07T00:00:01.234Z"),
      str("msg"),
      str("hi"),
      str("n"),
      hex("cd 012c"), // uint 16
      str("gen"),
      hex("03"), // positive fixint
      str("seq"),
      hex("00"),
      str("sent_at"),
      hex("b8"),
      Buffer.from("2025-01-02T03:04:05.678Z"),
    ]);
    const chunk = hex("00000003 0000000000000000 00000001").toString("base64");
    expect(chunk).toBe("AAAAAwAAAAAAAAAAAAAAAQ==");
    expect(b.chunk).toBe(chunk);
    const expected = Buffer.concat([
      hex("93"),
      str("ib.test"),
      hex("c4"),
      Buffer.from([entry.length]),
      entry, // bin 8
      hex("82"),
      str("size"),
      hex("01"),
      str("chunk"),
      hex("b8"),
      Buffer.from(chunk), // option map
    ]);
    expect(b.payload.toString("hex")).toBe(expected.toString("hex"));
  });

  it("decodes with an independent msgpack implementation, str entries and no chunk on request", () => {
    const fields: EventField[] = [
      { name: "msg", type: "string" },
      { name: "x", type: "float" },
      { name: "ok", type: "bool" },
      { name: "big", type: "int" },
    ];
    const rows = Array.from({ length: 300 }, (_, i) => [
      `m${i}`.padEnd(40, "."),
      i / 4,
      i % 2 === 0,
      2 ** 40 + i,
    ]);
    const enc = new FluentForwardEncoder(rowSourceOf(fields, rows, 1), { entries: "str" });
    const b = enc.encode(0, 300);
    enc.stamp(b, SENT);
    expect(b.chunk).toBeNull();
    expect(b.payload[0]).toBe(0x93);
    const msg = decode(b.payload, { useBigInt64: true }) as [string, string, Record<string, unknown>];
    expect(msg[0]).toBe("ingestbench");
    expect(typeof msg[1]).toBe("string"); // entries carried as str
    expect(msg[2]).toEqual({ size: 300 });
    // the entries stream: a str 16 header (da) before 300 back-to-back [EventTime, record] arrays
    const entriesAt = 1 + 12;
    expect(b.payload[entriesAt]).toBe(0xda);
    const len = b.payload.readUInt16BE(entriesAt + 1);
    const stream = b.payload.subarray(entriesAt + 3, entriesAt + 3 + len);
    const entries = [...decodeMulti(stream, { useBigInt64: true })] as Array<
      [ExtData, Record<string, unknown>]
    >;
    expect(entries).toHaveLength(300);
    entries.forEach(([t, rec], i) => {
      expect(t).toBeInstanceOf(ExtData);
      expect(t.type).toBe(0);
      // no timestamp field: the EventTime is the send time
      expect(Buffer.from(t.data as Uint8Array).toString("hex")).toBe(
        hex("67760225 28697580").toString("hex"),
      );
      expect(rec).toEqual({
        msg: rows[i]![0],
        x: i / 4,
        ok: i % 2 === 0,
        big: BigInt(2 ** 40 + i),
        gen: 1,
        seq: i,
        sent_at: SENT.toISOString(),
      });
    });
  });

  it("recognises the {ack: chunk} response, also when it arrives in pieces", () => {
    const chunk = forwardChunkId(3, 8000, 1000);
    expect(Buffer.from(chunk, "base64").toString("hex")).toBe("00000003" + "0000000000001f40" + "000003e8");
    const answer = Buffer.from(encode({ ack: chunk }));
    const reader = new ForwardResponseReader();
    expect(reader.push(answer.subarray(0, 5))).toEqual([]);
    const got = reader.push(answer.subarray(5));
    expect(got).toHaveLength(1);
    expect(isForwardAck(got[0], chunk)).toBe(true);
    expect(isForwardAck(got[0], forwardChunkId(3, 0, 1000))).toBe(false);
    expect(isForwardAck(null, chunk)).toBe(false);
    const two = Buffer.concat([answer, Buffer.from(encode({ ack: "other" })), answer.subarray(0, 3)]);
    const r2 = new ForwardResponseReader();
    expect(r2.push(two)).toEqual([{ ack: chunk }, { ack: "other" }]);
    expect(r2.push(answer.subarray(3))).toEqual([{ ack: chunk }]);
    // msgpackObjectEnd walks every format: the whole encoded message is one object
    const whole = new FluentForwardEncoder(rowSourceOf([{ name: "n", type: "int" }], [[1], [2]]), {
      ack: true,
    }).encode(0, 2).payload;
    expect(msgpackObjectEnd(whole, 0)).toBe(whole.length);
    expect(msgpackObjectEnd(whole, 0, whole.length - 1)).toBe(-1);
  });
});
