import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { finished } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import {
  copyColumns,
  copyFromStatement,
  encodeCopyBatch,
  encodeCopyValue,
  escapeCopyText,
} from "../../../core/events/copy-text.ts";
import {
  BASE_EPOCH_MS,
  MAX_REPLAY_LINE_BYTES,
  createEventSource,
  createRow,
  mulberry32,
  type EventRow,
  type RowSource,
} from "../../../core/events/source.ts";
import type { EventField } from "../../../core/events/types.ts";
import { createTableStatement } from "../../../plugins/sinks/postgres/verifier.ts";
import { startTestPostgres, type TestPostgres } from "../../helpers/direct-host.ts";

const PORT = 5441;
let server: TestPostgres | undefined;
let client: pg.Client | undefined;
let tmp: string | undefined;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "ib-source-"));
  server = await startTestPostgres(PORT);
  client = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
  await client.connect();
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await server?.cleanup();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const allTypes: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 200 },
  { name: "n", type: "int" },
  { name: "x", type: "float" },
  { name: "ok", type: "bool" },
  { name: "tag", type: "string", size: 7 },
];

/** COPY a buffer into a fresh table for `fields`, return the rows in seq order. */
async function roundTrip(
  table: string,
  fields: EventField[],
  payload: Buffer,
): Promise<Array<Record<string, unknown>>> {
  await client!.query(`DROP TABLE IF EXISTS ${table}`);
  await client!.query(createTableStatement(table, fields));
  const stream = client!.query(copyFrom(copyFromStatement(table, fields)));
  const done = finished(stream);
  stream.end(payload);
  await done;
  const r = await client!.query(
    `SELECT *, (extract(epoch FROM sent_at) * 1000)::float8 AS sent_ms FROM ${table} ORDER BY gen, seq`,
  );
  return r.rows as Array<Record<string, unknown>>;
}

describe("event source", () => {
  it("is deterministic per (seed, genId, seq), in any access order", () => {
    const a = createEventSource({ fields: allTypes, seed: 42, genId: 0 });
    const b = createEventSource({ fields: allTypes, seed: 42, genId: 0 });
    const forward = [0, 1, 2, 3, 1000, 2 ** 33 + 5].map((s) => a.values(s));
    const backward = [2 ** 33 + 5, 1000, 3, 2, 1, 0].map((s) => b.values(s)).reverse();
    expect(backward).toEqual(forward);
    expect(a.values(7)).toEqual(a.values(7));
    const otherSeed = createEventSource({ fields: allTypes, seed: 43, genId: 0 });
    const otherGen = createEventSource({ fields: allTypes, seed: 42, genId: 1 });
    expect(otherSeed.values(0)[1]).not.toEqual(forward[0]![1]);
    expect(otherGen.values(0)[1]).not.toEqual(forward[0]![1]);
    // neighbouring rows differ
    expect(a.values(0)[1]).not.toEqual(a.values(1)[1]);
  });

  it("gives timestamps base + seq ms and typed values", () => {
    const s = createEventSource({ fields: allTypes, seed: 1, genId: 0 });
    expect(BASE_EPOCH_MS).toBe(Date.parse("2024-11-07T00:00:00Z"));
    for (const seq of [0, 1, 999, 86_400_000]) {
      const [ts, , n, x, ok] = s.values(seq);
      expect((ts as Date).getTime()).toBe(BASE_EPOCH_MS + seq);
      expect(Number.isInteger(n)).toBe(true);
      expect(n as number).toBeGreaterThanOrEqual(0);
      expect(n as number).toBeLessThan(2 ** 31);
      expect(x as number).toBeGreaterThanOrEqual(0);
      expect(x as number).toBeLessThan(1000);
      expect(Math.round((x as number) * 1000) / 1000).toBe(x);
      expect(typeof ok).toBe("boolean");
    }
    const bools = Array.from({ length: 1000 }, (_, i) => s.values(i)[4]);
    expect(bools.filter(Boolean).length).toBeGreaterThan(400);
    expect(bools.filter(Boolean).length).toBeLessThan(600);
  });

  it("generates log-like ASCII strings of exactly `size` bytes", () => {
    for (const size of [0, 1, 4, 5, 6, 17, 64, 200, 1000, 4096]) {
      const s = createEventSource({ fields: [{ name: "msg", type: "string", size }], seed: 9, genId: 3 });
      for (let seq = 0; seq < 200; seq++) {
        const v = s.values(seq)[0] as string;
        expect(Buffer.byteLength(v)).toBe(size);
        expect(v).toMatch(/^[\x20-\x7e]*$/);
        expect(v).not.toMatch(/[\\\t\n\r]/);
      }
    }
    const line = createEventSource({
      fields: [{ name: "msg", type: "string", size: 120 }],
      seed: 42,
      genId: 0,
    }).values(0)[0] as string;
    expect(line).toMatch(/^(INFO |DEBUG|WARN |ERROR|TRACE) [a-z.0-9]+: [A-Z]+ \/\S* \d{3} \d+ /);
    // default size
    expect(
      (
        createEventSource({ fields: [{ name: "m", type: "string" }], seed: 1, genId: 0 }).values(
          0,
        )[0] as string
      ).length,
    ).toBe(64);
  });

  it("exposes Mulberry32 matching the canonical implementation", () => {
    // canonical JS (bryc, "PRNGs for JavaScript"): t = a += 0x6D2B79F5; t = imul(t ^ t >>> 15, t | 1);
    // t ^= t + imul(t ^ t >>> 7, t | 61); return (t ^ t >>> 14) >>> 0
    const r = mulberry32(1);
    expect([r(), r(), r()]).toEqual([2693262067, 11749833, 2265367787]);
  });

  it("rejects bad fields", () => {
    expect(() => createEventSource({ fields: [{ name: "seq", type: "int" }], seed: 1, genId: 0 })).toThrow(
      ConfigurationError,
    );
    expect(() =>
      createEventSource({
        fields: [
          { name: "a", type: "int" },
          { name: "a", type: "int" },
        ],
        seed: 1,
        genId: 0,
      }),
    ).toThrow(/twice/);
    expect(() =>
      createEventSource({ fields: [{ name: "a", type: "int" }], seed: 1, genId: 0, replayFile: "/dev/null" }),
    ).toThrow(/string field/);
  });

  it("replays a file's lines into the last string field, looping at EOF", async () => {
    const file = join(tmp!, "app.log");
    const lines = ["first line", "tab\there", "back\\slash \\N \\.", "", "ünïcødé ✓", "crlf line"];
    await writeFile(file, lines.slice(0, 5).join("\n") + "\n" + lines[5] + "\r\n");
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "host", type: "string", size: 8 },
      { name: "msg", type: "string" },
    ];
    const s = createEventSource({ fields, seed: 42, genId: 0, replayFile: file });
    await s.load(0, 14);
    for (let seq = 0; seq < 14; seq++) {
      const v = s.values(seq);
      expect(v[2]).toBe(lines[seq % 6]);
      expect((v[1] as string).length).toBe(8); // other strings still generated
    }
    // forward in windows, dropping what is behind
    await s.load(14, 3);
    expect(s.values(16)[2]).toBe(lines[16 % 6]);
    expect(() => s.fill(3)).toThrow(RangeError);
    // going back reopens the file
    await s.load(2, 2);
    expect(s.values(3)[2]).toBe(lines[3]);
    // the async iterator form
    const seen: unknown[] = [];
    for await (const row of s.rows(5)) {
      seen.push(row.values[2]);
      if (seen.length === 8) break;
    }
    expect(seen).toEqual(Array.from({ length: 8 }, (_, i) => lines[(5 + i) % 6]));
    await s.close();
  });

  it("keeps a small replay file after its first pass (the file is not read again), and wraps a large one once per skip", async () => {
    const small = join(tmp!, "small.log");
    await writeFile(small, "a\nb\r\nc\n");
    const fields: EventField[] = [{ name: "msg", type: "string" }];
    const s = createEventSource({ fields, seed: 1, genId: 0, replayFile: small });
    await s.load(0, 2);
    expect(s.values(1)[0]).toBe("b");
    await s.load(5, 1); // past the end: the first pass is complete
    expect(s.values(5)[0]).toBe("c");
    // a generator's first window crosses the end of the file several times: the lines are kept all the same
    const w = createEventSource({ fields, seed: 1, genId: 0, replayFile: small });
    await w.load(0, 10);
    expect(w.values(9)[0]).toBe("a");
    // and a skip that ends the first pass and goes on round the file
    const k = createEventSource({ fields, seed: 1, genId: 0, replayFile: small });
    await k.load(0, 2);
    await k.load(10, 1);
    expect(k.values(10)[0]).toBe("b");
    await rm(small);
    await w.load(100, 1);
    expect(w.values(100)[0]).toBe("b");
    await k.load(101, 1);
    expect(k.values(101)[0]).toBe("c");
    await w.close();
    await k.close();
    await s.load(3_000_000_001, 3);
    expect([0, 1, 2].map((k) => s.values(3_000_000_001 + k)[0])).toEqual(["b", "c", "a"]); // 3,000,000,001 mod 3 = 1
    await s.load(1, 1); // going back
    expect(s.values(1)[0]).toBe("b");
    await s.close();
    // 2 MiB of lines: not kept; a skip far past the end goes round once, to the right line
    const large = join(tmp!, "large.log");
    const n = 20_000;
    await writeFile(
      large,
      Array.from({ length: n }, (_, i) => `${String(i).padStart(8, "0")} ${"x".repeat(96)}`).join("\n") +
        "\n",
    );
    const l = createEventSource({ fields, seed: 1, genId: 0, replayFile: large });
    for (const seq of [5, 19_999, 20_000, 123_456_789, 7_000_000_003]) {
      await l.load(seq, 1);
      expect(l.values(seq)[0]).toBe(`${String(seq % n).padStart(8, "0")} ${"x".repeat(96)}`);
    }
    await l.close();
  });

  it("cuts replayed lines at 64 KiB on a character boundary, and refuses an empty file", async () => {
    const file = join(tmp!, "long.log");
    await writeFile(file, "é".repeat(40000) + "\nshort\n"); // 80000 bytes
    const s = createEventSource({
      fields: [{ name: "msg", type: "string" }],
      seed: 1,
      genId: 0,
      replayFile: file,
    });
    await s.load(0, 2);
    const v = s.values(0)[0] as string;
    expect(Buffer.byteLength(v)).toBe(MAX_REPLAY_LINE_BYTES);
    expect(v).toBe("é".repeat(MAX_REPLAY_LINE_BYTES / 2));
    expect(s.values(1)[0]).toBe("short");
    await s.close();
    const empty = join(tmp!, "empty.log");
    await writeFile(empty, "");
    const e = createEventSource({
      fields: [{ name: "msg", type: "string" }],
      seed: 1,
      genId: 0,
      replayFile: empty,
    });
    await expect(e.load(0, 1)).rejects.toThrow(/no lines/);
  });
});

describe("COPY text encoding", () => {
  it("escapes per the PostgreSQL docs", () => {
    expect(escapeCopyText("a\\b\tc\nd\re")).toBe("a\\\\b\\tc\\nd\\re");
    expect(escapeCopyText("plain")).toBe("plain");
    expect(encodeCopyValue(null)).toBe("\\N");
    expect(encodeCopyValue(true)).toBe("t");
    expect(encodeCopyValue(new Date(0))).toBe("1970-01-01T00:00:00.000Z");
    expect(copyColumns([{ name: "msg", type: "string" }])).toEqual(["msg", "gen", "seq", "sent_at"]);
    expect(copyFromStatement("ib_events", [{ name: "m", type: "string" }])).toBe(
      'COPY "ib_events" ("m", "gen", "seq", "sent_at") FROM STDIN',
    );
  });

  it("encodes rows with the tracking columns appended", () => {
    const s = createEventSource({ fields: allTypes, seed: 42, genId: 3 });
    const sentAt = new Date("2026-01-02T03:04:05.678Z");
    const lines = encodeCopyBatch(s, 10, 3, sentAt).toString("utf8").split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe("");
    lines.slice(0, 3).forEach((line, i) => {
      const cols = line.split("\t");
      expect(cols).toHaveLength(allTypes.length + 3);
      const v = s.values(10 + i);
      expect(cols[0]).toBe(new Date(BASE_EPOCH_MS + 10 + i).toISOString());
      expect(cols[1]).toBe(v[1]);
      expect(cols[2]).toBe(String(v[2]));
      expect(Number(cols[3])).toBe(v[3]);
      expect(cols[4]).toBe(v[4] ? "t" : "f");
      expect(cols.slice(-3)).toEqual(["3", String(10 + i), "2026-01-02T03:04:05.678Z"]);
    });
  });

  it("formats any timestamp exactly like Date#toISOString", () => {
    const fields: EventField[] = [{ name: "t", type: "timestamp" }];
    const row = createRow(fields);
    const values = [
      0,
      1,
      -1,
      951782400000,
      951868799999,
      4107542400000,
      253402300799999,
      -62167219200000,
      1730937600000 + 86_399_999,
    ];
    const r = mulberry32(5);
    for (let i = 0; i < 2000; i++) values.push(Math.floor((r() / 2 ** 32) * 4e12) - 1e12);
    const source: RowSource = {
      fields,
      genId: 0,
      fill: (seq) => {
        row.num[0] = values[seq]!;
        return row;
      },
    };
    const out = encodeCopyBatch(source, 0, values.length, new Date(0)).toString("latin1").split("\n");
    values.forEach((ms, i) => expect(out[i]!.split("\t")[0]).toBe(new Date(ms).toISOString()));
  });

  it("formats floats like String(v) and ints of any sign", () => {
    const fields: EventField[] = [
      { name: "x", type: "float" },
      { name: "n", type: "int" },
    ];
    const row = createRow(fields);
    const xs = [
      0,
      -0,
      0.001,
      0.01,
      0.1,
      0.5,
      1,
      1.005,
      999.999,
      -12.34,
      1e-4,
      1 / 3,
      123456789012.345,
      1e21,
      -1e300,
      NaN,
      Infinity,
      -Infinity,
    ];
    const ns = [0, 1, 9, 10, -1, -10, 2 ** 53 - 1, -(2 ** 53 - 1), 1e21];
    const r = mulberry32(11);
    for (let i = 0; i < 3000; i++) {
      xs.push(Math.round((r() / 2 ** 32) * 1e9) / 1000 - 5e5);
      ns.push(Math.floor((r() / 2 ** 32 - 0.5) * 2 ** 53));
    }
    const source: RowSource = {
      fields,
      genId: 0,
      fill: (seq) => {
        row.num[0] = xs[seq % xs.length]!;
        row.num[1] = ns[seq % ns.length]!;
        return row;
      },
    };
    const n = Math.max(xs.length, ns.length);
    const out = encodeCopyBatch(source, 0, n, new Date(0)).toString("latin1").split("\n");
    for (let i = 0; i < n; i++) {
      const [x, k] = out[i]!.split("\t");
      expect(x).toBe(String(xs[i % xs.length]));
      expect(k).toBe(String(ns[i % ns.length]));
    }
  });

  it("round-trips tab, newline, CR, backslash, NULL and unicode through a real COPY", async () => {
    const fields: EventField[] = [
      { name: "a", type: "string" },
      { name: "b", type: "string" },
      { name: "n", type: "int" },
    ];
    const texts = [
      "tab\there",
      "new\nline",
      "cr\rlf\r\n",
      "back\\slash",
      "\\N",
      "\\.",
      "\\",
      "ünïcødé ✓ 日本",
      "",
      "end\t",
    ];
    const row: EventRow = createRow(fields);
    const source: RowSource = {
      fields,
      genId: 1,
      fill(seq) {
        const t = Buffer.from(texts[seq]!, "utf8");
        row.bytes[0] = t;
        row.len[0] = t.length;
        row.escape[0] = 1;
        row.isNull[1] = seq % 2; // b: NULL on odd seqs
        row.bytes[1] = Buffer.from("x");
        row.len[1] = 1;
        row.num[2] = -seq * 1_000_000_007;
        return row;
      },
    };
    const sentAt = new Date("2026-05-06T07:08:09.123Z");
    const rows = await roundTrip("ib_escape", fields, encodeCopyBatch(source, 0, texts.length, sentAt));
    expect(rows.map((r) => r.a)).toEqual(texts);
    expect(rows.map((r) => r.b)).toEqual(texts.map((_, i) => (i % 2 ? null : "x")));
    expect(rows.map((r) => Number(r.n))).toEqual(texts.map((_, i) => (0 - i) * 1_000_000_007));
    expect(rows.map((r) => Number(r.seq))).toEqual(texts.map((_, i) => i));
    expect(rows.every((r) => r.gen === 1 && r.sent_ms === sentAt.getTime())).toBe(true);
  });

  it("round-trips generated and replayed rows of every type through a real COPY", async () => {
    const file = join(tmp!, "dpkg-like.log");
    await writeFile(file, "2024-11-07 10:00:00 status installed\tlibc6:amd64 2.36\nC:\\path\\to\\file\n");
    for (const replayFile of [undefined, file]) {
      const s = createEventSource({ fields: allTypes, seed: 7, genId: 2, replayFile });
      await s.load(0, 500);
      const rows = await roundTrip("ib_types", allTypes, encodeCopyBatch(s, 0, 500, new Date()));
      expect(rows).toHaveLength(500);
      rows.forEach((r, seq) => {
        const v = s.values(seq);
        expect((r.ts as Date).getTime()).toBe((v[0] as Date).getTime());
        expect(r.msg).toBe(v[1]);
        expect(Number(r.n)).toBe(v[2]);
        expect(r.x).toBe(v[3]);
        expect(r.ok).toBe(v[4]);
        expect(r.tag).toBe(v[5]);
      });
      await s.close();
    }
  });
});
