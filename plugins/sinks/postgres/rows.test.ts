// The content check's reads on a real PostgreSQL (./rows.ts): a sample is read in one pass of the table (a hash semi
// join of the unnest()ed keys over a sequential scan) and leaves the table without an index; every stored copy of a
// wanted key comes back, of the wanted gens only. Reading ranges builds the (gen, seq) index first, as before. A sample
// told before the ledger is fetched by the ctids the ledger's pass noted, in batches while the pass goes on (the order
// of the fetches against the pass is shown with a recording client in place of the server).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventField } from "../../../core/events/types.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { startTestPostgres, type TestPostgres } from "../../../test/helpers/direct-host.ts";
import { pgRowReader, SampleLocator } from "./rows.ts";
import { postgresVerifier } from "./verifier.ts";

const PORT = 5448;
const TABLE = "ib_events";
const fields: EventField[] = [
  { name: "n", type: "int" },
  { name: "msg", type: "string", size: 20 },
];

let server: TestPostgres | undefined;
let client: pg.Client | undefined;
let verifier: Verifier | undefined;

beforeAll(async () => {
  server = await startTestPostgres(PORT);
  verifier = postgresVerifier.create({
    host: "127.0.0.1",
    port: PORT,
    params: { ...server.pg.params, table: TABLE },
    fields,
  });
  await verifier.prepare();
  client = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
  await client.connect();
  // gens 300 and 301: seqs 0..49999 each, n = seq, msg = "g<gen>-<seq>"; seq 7 of gen 300 stored twice
  await client.query(
    `INSERT INTO ${TABLE} (n, msg, gen, seq, sent_at) SELECT s, 'g' || g || '-' || s, g, s, now() FROM generate_series(300, 301) g, generate_series(0, 49999) s`,
  );
  await client.query(`INSERT INTO ${TABLE} (n, msg, gen, seq, sent_at) VALUES (7, 'g300-7', 300, 7, now())`);
  await client.query(`ANALYZE ${TABLE}`);
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await verifier?.close().catch(() => undefined);
  await server?.cleanup();
});

const indexes = async (): Promise<number> =>
  Number(
    (await client!.query("SELECT count(*) AS n FROM pg_indexes WHERE tablename = $1", [TABLE])).rows[0].n,
  );

describe("PostgreSQL stored-row reader (plugins/sinks/postgres/rows.ts)", () => {
  it("reads a sample of two gens in one pass without building an index: every copy of each wanted key, nothing else", async () => {
    const reader = verifier!.rows!;
    expect(reader.readSample).toBeTypeOf("function");
    const wanted = [
      { gen: 300, seqs: [0, 7, 49_999] },
      { gen: 301, seqs: [7, 12_345] },
    ];
    const rows = await reader.readSample!(wanted);
    const keys = rows.map((r) => `${r.gen}:${r.seq}`).sort();
    expect(keys).toEqual(["300:0", "300:49999", "300:7", "300:7", "301:12345", "301:7"]);
    for (const r of rows) expect(r.values).toEqual([r.seq, Buffer.from(`g${r.gen}-${r.seq}`)]);
    expect(await indexes()).toBe(0);
    // the statement's plan: one sequential scan of the table, the keys hashed (no per-key lookups, no index)
    const plan = (
      await client!.query(
        `EXPLAIN SELECT gen, seq FROM ${TABLE} WHERE (gen, seq) IN (SELECT g, s FROM unnest($1::int[], $2::bigint[]) AS k(g, s))`,
        [
          [300, 300, 301],
          [0, 7, 7],
        ],
      )
    ).rows
      .map((r: Record<string, string>) => r["QUERY PLAN"])
      .join("\n");
    expect(plan).toMatch(/Seq Scan on ib_events/);
    expect(plan).toMatch(/Hash/);
    expect(plan).not.toMatch(/Index/);
  });

  it("reading ranges adds the (gen, seq) index first, and a sample then reads the same rows", async () => {
    const reader = verifier!.rows!;
    const range = await reader.readRange(301, 100, 110);
    expect(range.map((r) => r.seq).sort((a, b) => a - b)).toEqual([
      100, 101, 102, 103, 104, 105, 106, 107, 108, 109,
    ]);
    expect(await indexes()).toBe(1);
    const rows = await reader.readSample!([{ gen: 300, seqs: [7] }]);
    expect(rows).toHaveLength(2);
  });

  it("a sample told before the ledger is located by the ledger's pass and fetched by ctid; a ctid that no longer holds its row is read by the pass", async () => {
    const reader = verifier!.rows!;
    const wanted = [
      { gen: 300, seqs: [0, 7, 49_999] },
      { gen: 301, seqs: [12_345] },
    ];
    const keys = (rows: Array<{ gen: number; seq: number }>): string[] =>
      rows.map((r) => `${r.gen}:${r.seq}`).sort();
    reader.expectSample!(wanted);
    await verifier!.ledger([1], [[]]);
    // a copy stored after the ledger's pass: fetching the located ctids does not see it, a pass would
    await client!.query(
      `INSERT INTO ${TABLE} (n, msg, gen, seq, sent_at) VALUES (0, 'g300-0', 300, 0, now())`,
    );
    const byCtid = await reader.readSample!(wanted);
    expect(keys(byCtid)).toEqual(["300:0", "300:49999", "300:7", "300:7", "301:12345"]);
    for (const r of byCtid) expect(r.values).toEqual([r.seq, Buffer.from(`g${r.gen}-${r.seq}`)]);
    // an UPDATE writes a new version of the row elsewhere: its located ctid no longer holds it, so the pass reads all
    await client!.query(`UPDATE ${TABLE} SET n = n WHERE gen = 301 AND seq = 12345`);
    expect(keys(await reader.readSample!(wanted))).toEqual([
      "300:0",
      "300:0",
      "300:49999",
      "300:7",
      "300:7",
      "301:12345",
    ]);
    await client!.query(
      `DELETE FROM ${TABLE} WHERE gen = 300 AND seq = 0 AND ctid <> (SELECT min(ctid) FROM ${TABLE} WHERE gen = 300 AND seq = 0)`,
    );
  });

  it("a sample with a seq past SampleLocator.MAX_SEQ is not located (its bitmap would be too large): it is read by its pass", async () => {
    const reader = verifier!.rows!;
    const wanted = [{ gen: 300, seqs: [7, SampleLocator.MAX_SEQ] }];
    expect(SampleLocator.fits(wanted)).toBe(false);
    expect(() => new SampleLocator(wanted)).toThrow(RangeError);
    reader.expectSample!(wanted);
    await verifier!.ledger([1], [[]]);
    await client!.query(
      `INSERT INTO ${TABLE} (n, msg, gen, seq, sent_at) VALUES (7, 'g300-7', 300, 7, now())`,
    );
    expect(await reader.readSample!(wanted)).toHaveLength(3); // the pass sees the copy stored after the ledger
    await client!.query(
      `DELETE FROM ${TABLE} WHERE gen = 300 AND seq = 7 AND sent_at = (SELECT max(sent_at) FROM ${TABLE} WHERE gen = 300 AND seq = 7)`,
    );
  });
});

describe("the sample's locator (./rows.ts SampleLocator)", () => {
  it("reports exactly the wanted seqs' copies, not their neighbours in the same block, other gens or seqs past the last, up to MAX_SEQ", async () => {
    const B = SampleLocator.BLOCK_SEQS;
    const wanted = [
      { gen: 4, seqs: [0, B - 1, 5 * B + 7, 300_000_000, SampleLocator.MAX_SEQ - 1] },
      { gen: 5, seqs: [] },
    ];
    const locator = new SampleLocator(wanted);
    let tid = 0;
    const pass = [
      0,
      1,
      B - 2,
      B - 1,
      B,
      5 * B + 6,
      5 * B + 7,
      5 * B + 7,
      299_999_999,
      300_000_000,
      SampleLocator.MAX_SEQ - 1,
      SampleLocator.MAX_SEQ,
      2 ** 40,
    ];
    for (const seq of pass) locator.see(4, seq, tid++);
    for (const seq of [0, B - 1]) locator.see(5, seq, tid++);
    locator.see(6, 0, tid++);
    locator.finish(true);
    const keys = new Set(wanted[0]!.seqs.map((q) => `4:${q}`));
    const { ctids, ended, next } = await locator.copies(0, 0, keys);
    expect(ended).toBe(true);
    expect(next).toBe(6); // only wanted copies were kept
    // tids 0, 3, 6, 7 (a second copy), 9, 10: (block 0, offset tid)
    expect(ctids).toEqual([0, 3, 6, 7, 9, 10].map((t) => `(0,${t})`));
  });
});

describe("a located sample is fetched close behind the ledger's pass (./rows.ts fetchLocated)", () => {
  it("in batches of at least 256 copies as the pass finds them, the rest once it ends, every row once", async () => {
    const wanted = [{ gen: 1, seqs: Array.from({ length: 1000 }, (_, i) => i * 2) }];
    const locator = new SampleLocator(wanted);
    let seen = 0;
    const calls: Array<{ seenAt: number; ctids: number }> = [];
    // a recording client: each ctid (block, offset) gives back the row the pass saw there (tid = seq)
    const client = {
      query: async (sql: string, params?: unknown[]) => {
        if (sql.startsWith("SET")) return { rows: [] };
        const ctids = params![0] as string[];
        calls.push({ seenAt: seen, ctids: ctids.length });
        return {
          rows: ctids.map((t) => {
            const [block, offset] = t.slice(1, -1).split(",").map(Number);
            const seq = block! * 0x10000 + offset!;
            return { gen: 1, seq: String(seq), f0: String(seq) };
          }),
        };
      },
    } as unknown as pg.Client;
    const reader = pgRowReader(
      async () => client,
      "t",
      [{ name: "n", type: "int" }],
      () => locator,
    );
    const read = reader.readSample!(wanted);
    // the pass: 2,000 rows, a yield every 50 (a COPY stream's chunks)
    for (let seq = 0; seq < 2000; seq++) {
      locator.see(1, seq, seq);
      seen++;
      if (seq % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    locator.finish(true);
    const rows = await read;
    expect(rows.map((r) => r.seq)).toEqual(wanted[0]!.seqs);
    expect(calls.reduce((a, c) => a + c.ctids, 0)).toBe(1000);
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls[0]!.seenAt).toBeLessThan(2000); // the first batch before the pass ended
    for (const c of calls.slice(0, -1)) expect(c.ctids).toBeGreaterThanOrEqual(256);
  });
});
