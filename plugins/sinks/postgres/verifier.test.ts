import net from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventField } from "../../../core/events/types.ts";
import { normalizeRanges } from "./verifier.ts";
import { genBaseOf } from "../../../core/ledger.ts";
import { postgresVerifier, type PostgresVerifier } from "./verifier.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { startTestPostgres, type TestPostgres } from "../../../test/helpers/direct-host.ts";

const PORT = 5445;
const TABLE = "ib_events";
const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 20 },
  { name: "level", type: "int" },
  { name: "ratio", type: "float" },
  { name: "ok", type: "bool" },
];

let server: TestPostgres | undefined;
let client: pg.Client | undefined;
let verifier: Verifier | undefined;

beforeAll(async () => {
  server = await startTestPostgres(PORT);
  client = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
  await client.connect();
  verifier = postgresVerifier.create({
    host: "127.0.0.1",
    port: PORT,
    params: { ...server.pg.params, table: TABLE },
    fields,
  });
});

afterAll(async () => {
  await verifier?.close().catch(() => undefined);
  await client?.end().catch(() => undefined);
  await server?.cleanup();
});

const q = (sql: string, params: unknown[] = []) => client!.query(sql, params);
const insertSeqs = (gen: number, from: number, to: number) =>
  q(
    `INSERT INTO ${TABLE} (ts, msg, level, ratio, ok, gen, seq, sent_at)
     SELECT now(), 'x', 1, 0.5, true, $1, s, timestamptz '2024-11-07 00:00:00+00' + s * interval '1 ms' FROM generate_series($2::bigint, $3::bigint) s`,
    [gen, from, to],
  );

describe("postgres verifier", () => {
  it("creates the table with typed columns in order, then the server's own stored_at, no index", async () => {
    await verifier!.prepare();
    const cols = await q(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
      [TABLE],
    );
    const def = await q(
      `SELECT column_default FROM information_schema.columns WHERE table_name = $1 AND column_name = 'stored_at'`,
      [TABLE],
    );
    expect(def.rows[0].column_default).toBe("clock_timestamp()");
    expect(cols.rows.map((r) => [r.column_name, r.data_type])).toEqual([
      ["ts", "timestamp with time zone"],
      ["msg", "text"],
      ["level", "bigint"],
      ["ratio", "double precision"],
      ["ok", "boolean"],
      ["gen", "integer"],
      ["seq", "bigint"],
      ["sent_at", "timestamp with time zone"],
      ["stored_at", "timestamp with time zone"],
    ]);
    const idx = await q(`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = $1`, [TABLE]);
    expect(idx.rows[0].n).toBe(0);
  });

  it("samples count and newest sent_at with timestamps around the query", async () => {
    const empty = await verifier!.sample();
    expect(empty.stored).toBe(0);
    expect(empty.newestSentAtMs).toBeNull();
    expect(empty.tAfter).toBeGreaterThanOrEqual(empty.tBefore);
    expect(Math.abs(empty.tBefore - Date.now())).toBeLessThan(1000);
    await insertSeqs(0, 0, 9999);
    // a live sample is an estimate settled after the load (afterLoad); a full one counts every row, exactly
    const live = await verifier!.sample();
    const s = await verifier!.sample({ full: true });
    expect(s.stored).toBe(10000);
    expect(s.newestSentAtMs).toBe(Date.UTC(2024, 10, 7) + 9999);
    const settled = await verifier!.afterLoad!([empty.mark!, live.mark!, s.mark!]);
    expect(settled.samples.map((x) => [x.stored, x.newestSentAtMs])).toEqual([
      [0, null],
      [10000, Date.UTC(2024, 10, 7) + 9999],
      [10000, Date.UTC(2024, 10, 7) + 9999],
    ]);
    // rows stamped now() with sent_at in 2024: every latency positive, all 10000 rows in the window of the live sample
    const rows = (w?: { buckets: Array<[number, number]> }): number =>
      (w?.buckets ?? []).reduce((n, [, k]) => n + k, 0);
    expect(settled.samples.map((x) => rows(x.delivery))).toEqual([0, 10000, 0]);
    expect(rows(settled.later)).toBe(0);
    expect(settled.samples[1]!.delivery!.buckets.every(([ms]) => ms > 0)).toBe(true);
  });

  it("accounts the CPU its tagged samples cost the sink from its own backend's schedstat (real PostgreSQL, same machine)", async () => {
    for (let i = 0; i < 3; i++) await verifier!.sample({ tag: "measure" });
    const cost = await verifier!.sinkCost!("measure");
    expect(cost).toMatchObject({ queries: 3, readRows: null }); // one query per sample
    expect(cost.cpuMs).toBeGreaterThan(0); // a backend that ran three queries spent time on a CPU
    expect(cost.source).toMatch(/schedstat/);
    expect((await verifier!.sinkCost!("other")).queries).toBe(0);
  });

  it("accounts lost, duplicated and missing ranges exactly", async () => {
    await q(`DELETE FROM ${TABLE} WHERE gen = 0 AND (seq BETWEEN 100 AND 149 OR seq = 5000)`);
    await insertSeqs(0, 10, 19); // 10 duplicates
    for (let i = 0; i < 3; i++) await insertSeqs(0, 7000, 7000); // seq 7000 stored 4 times: 3 duplicates
    const l = await verifier!.ledger([10000], [[]]);
    expect(l).toEqual({
      sent: 10000,
      accepted: 10000,
      stored: 10000 - 51 + 13,
      distinct: 9949,
      lost: 51,
      duplicated: 13,
      overwritten: 0,
      rejected: 0,
      unexpected: 0,
      missingRanges: [
        [0, 100, 149],
        [0, 5000, 5000],
      ],
      foreign: 0,
      rejectedStored: 0,
      deduplicated: 0,
    });
  });

  it("does not count rejected seqs as lost, stored or not", async () => {
    const a = await verifier!.ledger([10000], [[[100, 149]]]);
    expect(a).toMatchObject({ accepted: 9950, rejected: 50, lost: 1, missingRanges: [[0, 5000, 5000]] });
    // rejected ranges that were stored anyway (and overlapping ones) are merged and still not lost
    const b = await verifier!.ledger(
      [10000],
      [
        [
          [200, 209],
          [205, 214],
          [120, 130],
        ],
      ],
    );
    expect(b).toMatchObject({
      rejected: 26,
      accepted: 9974,
      lost: 40,
      missingRanges: [
        [0, 100, 119],
        [0, 131, 149],
        [0, 5000, 5000],
      ],
    });
  });

  it("includes a leading gap from 0 and a trailing gap up to sent-1", async () => {
    await q(`DELETE FROM ${TABLE} WHERE gen = 0 AND seq BETWEEN 0 AND 4`);
    const l = await verifier!.ledger([10003], [[]]);
    expect(l.lost).toBe(5 + 51 + 3);
    expect(l.missingRanges).toEqual([
      [0, 0, 4],
      [0, 100, 149],
      [0, 5000, 5000],
      [0, 10000, 10002],
    ]);
    await insertSeqs(0, 0, 4);
  });

  it("lists at most 20 ranges but counts every lost seq, per generator", async () => {
    await insertSeqs(1, 0, 49);
    await q(`DELETE FROM ${TABLE} WHERE gen = 1 AND seq % 2 = 1`); // 25 single-seq gaps in gen 1
    const l = await verifier!.ledger([10000, 50], [[], []]);
    expect(l.lost).toBe(51 + 25);
    expect(l.missingRanges).toHaveLength(20);
    expect(l.missingRanges.slice(0, 3)).toEqual([
      [0, 100, 149],
      [0, 5000, 5000],
      [1, 1, 1],
    ]);
    expect(l.missingRanges[19]).toEqual([1, 35, 35]);
    expect(l.unexpected).toBe(0);
  });

  it("reports stored rows beyond what was sent as unexpected", async () => {
    // gen 0 claims 9000 sent: seqs 9000..9999 (1000 rows) are unexpected; gen 1 unknown: its 25 rows too
    const l = await verifier!.ledger([9000], [[]]);
    expect(l.unexpected).toBe(1000 + 25);
    expect(l.stored).toBeGreaterThan(l.sent);
    expect(l.lost).toBe(51);
  });

  it("merges and clamps rejected ranges", () => {
    expect(
      normalizeRanges(
        [
          [5, 9],
          [0, 2],
          [3, 4],
          [20, 30],
          [-5, -1],
        ],
        25,
      ),
    ).toEqual([
      [0, 9],
      [20, 24],
    ]);
  });

  it("counts rows of another run as foreign, in no sample and no other figure; the completion query names what is missing (real PostgreSQL)", async () => {
    const base = genBaseOf("20261201T094000Z-abcdef");
    const mine = postgresVerifier.create({
      host: "127.0.0.1",
      port: PORT,
      params: { ...server!.pg.params, table: TABLE },
      fields,
      genBase: base,
    });
    try {
      await mine.prepare();
      await insertSeqs(base, 0, 999);
      await insertSeqs(base + 1, 0, 499);
      const sent = [1000, 500];
      expect(await mine.missing!(sent, [[], []])).toMatchObject({ missing: 0, missingRanges: [] });
      await q(`DELETE FROM ${TABLE} WHERE gen = $1 AND seq = 7`, [base + 1]);
      const c = await mine.missing!(sent, [[], []]);
      expect(c).toMatchObject({ missing: 1, missingRanges: [[1, 7, 7]] });
      expect(c.tAfter).toBeGreaterThanOrEqual(c.tBefore);
      // one row of another run (the previous replicate's late flush) and one of gen 0 (no run's)
      await insertSeqs(genBaseOf("20261201T093000Z-123456"), 7, 7);
      await insertSeqs(0, 3, 3);
      expect((await mine.sample({ full: true })).stored).toBe(1499);
      const l = await mine.ledger(sent, [[], []]);
      expect(l).toMatchObject({
        stored: 1499,
        distinct: 1499,
        duplicated: 0,
        unexpected: 0,
        lost: 1,
        foreign: 2,
        missingRanges: [[1, 7, 7]],
      });
      // rejected seqs stored all the same are reported as such, never as lost
      const r = await mine.ledger(sent, [[[10, 19]], [[5, 9]]]);
      expect(r).toMatchObject({ rejected: 15, rejectedStored: 14, lost: 0, missingRanges: [] });
      expect(await mine.missing!(sent, [[[10, 19]], [[5, 9]]])).toMatchObject({ missing: 0 });
    } finally {
      await mine.close();
    }
  });

  it("the completion check reports the WAL its first pass after a checkpoint made the sink write (hint bits, data checksums on: real PostgreSQL 18), and little on the next", async () => {
    const base = genBaseOf("20261204T201500Z-a1b2c3");
    const mine = postgresVerifier.create({
      host: "127.0.0.1",
      port: PORT,
      params: { ...server!.pg.params, table: TABLE },
      fields,
      genBase: base,
    });
    try {
      await mine.prepare();
      expect((await q("SHOW data_checksums")).rows[0].data_checksums).toBe("on"); // initdb's default since PostgreSQL 18
      // autovacuum would write WAL of its own beside the checks (100,000 inserted rows pass its insert threshold)
      await q(`ALTER TABLE ${TABLE} SET (autovacuum_enabled = false)`);
      await insertSeqs(base, 0, 99_999);
      // the rows' pages last logged before this checkpoint: the first hint-bit change of each then logs a page image
      await q("CHECKPOINT");
      const pageBytes = Number((await q(`SELECT pg_relation_size('${TABLE}') AS b`)).rows[0].b);
      const first = await mine.missing!([100_000], [[]]);
      expect(first.missing).toBe(0);
      // a page image of every page the pass changed (each without its free hole): a good part of the table's size
      expect(first.walBytes, `table ${pageBytes} B`).toBeGreaterThan(pageBytes / 3);
      const second = await mine.missing!([100_000], [[]]);
      expect(second.walBytes).toBeGreaterThanOrEqual(0);
      expect(second.walBytes, `first ${first.walBytes} B`).toBeLessThan(first.walBytes! / 10);
    } finally {
      await mine.close();
    }
  });

  it("the ledger and the completion check from one binary COPY scan equal the reference SQL's, with duplicates, gaps, NULLs, foreign and unexpected rows (real PostgreSQL)", async () => {
    const base = genBaseOf("20261202T010000Z-5ca11e");
    const v = postgresVerifier.create({
      host: "127.0.0.1",
      port: PORT,
      params: { ...server!.pg.params, table: "ib_scan" },
      fields,
      genBase: base,
    }) as PostgresVerifier;
    const rows = (gen: number | null, seqs: string) =>
      q(
        `INSERT INTO ib_scan (ts, msg, level, ratio, ok, gen, seq, sent_at) SELECT now(), 'x', 1, 0.5, true, $1::int, s, now() FROM ${seqs} AS s(s)`,
        [gen],
      );
    try {
      await v.prepare();
      await rows(base, "generate_series(0, 1999)");
      await q(`DELETE FROM ib_scan WHERE seq BETWEEN 300 AND 339 OR seq IN (0, 1999, 777)`); // gaps at both ends and inside
      await rows(base, "generate_series(10, 19)"); // duplicates
      await rows(base, "generate_series(10, 12)");
      await rows(base + 1, "generate_series(0, 109)"); // 100..109 beyond sent: unexpected
      await rows(base + 1, "(VALUES (NULL::bigint), (NULL), (-4), (1152921504606846976))"); // NULL seqs (one distinct pair), negative, 2^60
      await rows(base + 2, "(VALUES (0::bigint), (0))"); // a generator that sent nothing
      await rows(base + 9, "generate_series(0, 4)"); // unknown generator of this run
      await rows(null, "(VALUES (5::bigint), (5), (NULL))"); // NULL gen
      await rows(0, "generate_series(0, 9)"); // foreign: no run's
      await rows(base + 256, "generate_series(0, 2)"); // foreign: the next run's space
      const sent = [2000, 100, 0];
      const rejected: Array<Array<[number, number]>> = [
        [
          [100, 120],
          [110, 130],
          [335, 350],
        ],
        [[50, 200]],
        [[0, 3]],
      ];
      const sql = await v.sqlLedger(sent, rejected);
      expect(sql).toMatchObject({
        foreign: 13,
        unexpected: 10 + 4 + 2 + 5 + 3,
        lost: 1 + 1 + 1 + 35,
        rejectedStored: 31 + 11 + 50,
        duplicated: 13 + 1 + 1 + 1,
      });
      expect(await v.ledger(sent, rejected)).toEqual(sql);
      const strip = ({ missing, missingRanges }: { missing: number; missingRanges: unknown }) => ({
        missing,
        missingRanges,
      });
      expect(strip(await v.missing!(sent, rejected))).toEqual(strip(await v.sqlMissing(sent, rejected)));
      expect(strip(await v.missing!(sent, [[], [], []]))).toEqual(
        strip(await v.sqlMissing(sent, [[], [], []])),
      );
      // past the scan's limit of distinct unexpected pairs, distinct is the SQL DISTINCT count, in the same snapshot
      v.unexpectedLimit = 2;
      expect(await v.ledger(sent, rejected)).toEqual(sql);
    } finally {
      await v.close();
    }
  });

  it("prepare() starts from an empty table", async () => {
    await verifier!.prepare();
    expect((await verifier!.sample()).stored).toBe(0);
  });

  it("follows the sink to a new port (retarget) once the old one is gone, as after a container restart that published it anew: counts go on from the same state (real PostgreSQL behind a TCP forwarder)", async () => {
    // the "old published port": a forwarder to the real server, closed (with its connections) as a restart would
    const sockets = new Set<net.Socket>();
    const forwarder = net.createServer((c) => {
      const up = net.connect(PORT, "127.0.0.1");
      for (const s of [c, up]) {
        sockets.add(s);
        s.on("error", () => undefined);
        s.on("close", () => sockets.delete(s));
      }
      c.pipe(up).pipe(c);
    });
    await new Promise<void>((r) => forwarder.listen(0, "127.0.0.1", () => r()));
    const oldPort = (forwarder.address() as net.AddressInfo).port;
    const v = postgresVerifier.create({
      host: "127.0.0.1",
      port: oldPort,
      params: { ...server!.pg.params, table: "ib_retarget" },
      fields,
    });
    try {
      await v.prepare();
      await q(
        `INSERT INTO ib_retarget (ts, msg, level, ratio, ok, gen, seq, sent_at) SELECT now(), 'x', 1, 0.5, true, 0, s, now() FROM generate_series(0, 99) s`,
      );
      expect((await v.sample({ full: true })).stored).toBe(100);
      await new Promise<void>((r) => {
        forwarder.close(() => r());
        for (const s of sockets) s.destroy();
      });
      await expect(v.sample({ full: true })).rejects.toThrow(
        /cannot connect to PostgreSQL at 127\.0\.0\.1:\d+|Connection terminated|ECONNREFUSED|ECONNRESET/,
      );
      v.retarget!({ host: "127.0.0.1", port: PORT });
      await q(
        `INSERT INTO ib_retarget (ts, msg, level, ratio, ok, gen, seq, sent_at) SELECT now(), 'x', 1, 0.5, true, 0, s, now() FROM generate_series(100, 149) s`,
      );
      expect((await v.sample({ full: true })).stored).toBe(150);
      expect(await v.ledger([150], [[]])).toMatchObject({ sent: 150, stored: 150, lost: 0, duplicated: 0 });
    } finally {
      await v.close();
      forwarder.close();
    }
  });
});
