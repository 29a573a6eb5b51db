import { describe, expect, it } from "vitest";
import { rowSourceOf } from "../../../core/events/encoding.ts";
import { MAX_REPLAY_LINE_BYTES } from "../../../core/events/replay-lines.ts";
import { maxSyslogMessageBytes, SyslogEncoder } from "../../../core/events/syslog.ts";
import type { EventField } from "../../../core/events/types.ts";

const TS = new Date(Date.UTC(2024, 10, 7, 0, 0, 1, 234));
const SENT = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));

/** Split octet-counted frames (RFC 6587 §3.4.1): MSG-LEN SP SYSLOG-MSG, repeated. */
function frames(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 0; p < buf.length;) {
    const sp = buf.indexOf(0x20, p);
    const len = Number(buf.subarray(p, sp).toString("latin1"));
    expect(buf.subarray(p, sp).toString("latin1")).toMatch(/^[1-9]\d*$/);
    out.push(buf.subarray(sp + 1, sp + 1 + len));
    p = sp + 1 + len;
  }
  return out;
}

describe("syslog encoder (byte-level vectors from the published spec: RFC 5424 messages, RFC 6587 octet counting)", () => {
  it("frames a message without fields: <len> <PRI>1 TIMESTAMP HOST APP PROCID MSGID SD", () => {
    const enc = new SyslogEncoder(rowSourceOf([], [[]], 0, 7));
    const b = enc.encode(7, 1);
    enc.stamp(b, SENT);
    // 121 octets: no timestamp field, so TIMESTAMP is the send time
    expect(b.payload.toString("latin1")).toBe(
      '121 <134>1 2025-01-02T03:04:05.678Z ingestbench ingestbench - - [ib@32473 gen="0" seq="7" sent_at="2025-01-02T03:04:05.678Z"]',
    );
  });

  it('puts the last string field in MSG, the others in SD-PARAMs with ", \\ and ] escaped, and counts octets (not characters)', () => {
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "level", type: "string" },
      { name: "n", type: "int" },
      { name: "msg", type: "string" },
    ];
    const source = rowSourceOf(
      fields,
      [
        [TS, 'a"b]c\\d', 42, "héllo\nworld"],
        [TS, "INFO", -1, "x"],
      ],
      3,
    );
    const enc = new SyslogEncoder(source, {
      facility: 1,
      severity: 3,
      hostname: "lg1",
      appName: "app",
      procId: "99",
      msgId: "ID7",
    });
    const b = enc.encode(0, 2);
    enc.stamp(b, SENT);
    const m0 =
      '<11>1 2024-11-07T00:00:01.234Z lg1 app 99 ID7 [ib@32473 ts="2024-11-07T00:00:01.234Z" level="a\\"b\\]c\\\\d" n="42" gen="3" seq="0" sent_at="2025-01-02T03:04:05.678Z"] héllo\nworld';
    const m1 =
      '<11>1 2024-11-07T00:00:01.234Z lg1 app 99 ID7 [ib@32473 ts="2024-11-07T00:00:01.234Z" level="INFO" n="-1" gen="3" seq="1" sent_at="2025-01-02T03:04:05.678Z"] x';
    expect(Buffer.byteLength(m0)).toBe(m0.length + 1); // é is two octets
    expect(b.payload.toString("utf8")).toBe(`${Buffer.byteLength(m0)} ${m0}${Buffer.byteLength(m1)} ${m1}`);
    expect(frames(b.payload).map((f) => f.toString("utf8"))).toEqual([m0, m1]);
  });

  it("keeps frames intact across many rows and re-stamps every sent_at", () => {
    const fields: EventField[] = [{ name: "msg", type: "string" }];
    const rows = Array.from({ length: 500 }, (_, i) => ["m".repeat(i % 120)]);
    const enc = new SyslogEncoder(rowSourceOf(fields, rows, 2));
    const b = enc.encode(0, 500);
    enc.stamp(b, SENT);
    const fs = frames(b.payload);
    expect(fs).toHaveLength(500);
    fs.forEach((f, i) => {
      const s = f.toString("latin1");
      expect(
        s.startsWith(
          `<134>1 2025-01-02T03:04:05.678Z ingestbench ingestbench - - [ib@32473 gen="2" seq="${i}" sent_at="2025-01-02T03:04:05.678Z"]`,
        ),
      ).toBe(true);
      expect(s.endsWith(`] ${"m".repeat(i % 120)}`)).toBe(true);
    });
  });

  it("refuses header values and names outside RFC 5424", () => {
    const src = rowSourceOf([{ name: "msg", type: "string" }], [["x"]]);
    expect(() => new SyslogEncoder(src, { hostname: "two words" })).toThrow(/HOSTNAME/);
    expect(() => new SyslogEncoder(src, { msgId: "x".repeat(33) })).toThrow(/MSGID/);
    expect(() => new SyslogEncoder(src, { facility: 24 })).toThrow(/facility/);
    expect(() => new SyslogEncoder(rowSourceOf([{ name: "a=b", type: "int" }], [[1]]))).toThrow(/PARAM-NAME/);
  });
});

describe("maxSyslogMessageBytes: the collectors' message size limit (core/events/syslog.ts)", () => {
  it("bounds the largest message the encoder makes: header fields at RFC 5424's maxima, every SD value escaped, MSG at the replay cut with a BOM", () => {
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "a_field_name_of_thirty_two_bytes", type: "string", size: 300 },
      { name: "n", type: "int" },
      { name: "x", type: "float" },
      { name: "ok", type: "bool" },
      { name: "msg", type: "string", size: 10 },
    ];
    const worst = [
      new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
      '"]\\'.repeat(100),
      Number.MIN_SAFE_INTEGER,
      -1.2345678901234567e-300,
      false,
      "é".repeat(MAX_REPLAY_LINE_BYTES / 2),
    ];
    const enc = new SyslogEncoder(rowSourceOf(fields, [worst], 2 ** 31, Number.MAX_SAFE_INTEGER), {
      facility: 23,
      severity: 7,
      hostname: "h".repeat(255),
      appName: "a".repeat(48),
      procId: "p".repeat(128),
      msgId: "m".repeat(32),
      bom: true,
    });
    const b = enc.encode(Number.MAX_SAFE_INTEGER, 1);
    enc.stamp(b, new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)));
    const [message] = frames(b.payload);
    const bound = maxSyslogMessageBytes(fields);
    expect(message!.length).toBeGreaterThan(MAX_REPLAY_LINE_BYTES + 600 + 255);
    expect(message!.length).toBeLessThanOrEqual(bound);
    expect(bound - message!.length).toBeLessThan(1000); // a bound, not a guess: within a few names' and numbers' slack
    // the syslog-ng and rsyslog limits follow it: a 64 KiB string field in SD as well as a replayed MSG
    expect(
      maxSyslogMessageBytes([
        ...fields.slice(0, 5),
        { name: "big", type: "string", size: 65_536 },
        fields[5]!,
      ]),
    ).toBeGreaterThanOrEqual(bound + 2 * 65_536);
  });
});
