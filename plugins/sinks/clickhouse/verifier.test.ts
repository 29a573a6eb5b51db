// The clickhouse verifier against the real ClickHouse 18.16.1 server (started by the component on a direct host):
// schema, timed counts, and an exact ledger after rows are deleted at the sink, batches repeated, and inserts
// refused with code 252 TOO_MANY_PARTS.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClickHouseJsonEachRowEncoder, clickHouseInsertQuery } from "../../../core/events/clickhouse-http.ts";
import { createEventSource } from "../../../core/events/source.ts";
import type { EventField } from "../../../core/events/types.ts";
import { clickhouseHttp } from "../../../harness/generators/clickhouse-http.ts";
import type { GeneratorFinal } from "../../../harness/generators/types.ts";
import { clickhouseVerifier, LEDGER_WINDOW, type ClickHouseLedger } from "./verifier.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { genBaseOf } from "../../../core/ledger.ts";
import { clickhouse, clickhouseSchema } from "./component.ts";
import type { RunningComponent } from "../../../core/component.ts";
import { createDirectHost, type DirectHost } from "../../../test/helpers/direct-host.ts";

const HTTP_PORT = 18251;
const TCP_PORT = 19251;
const TABLE = "ib_events";
const BASE_MS = Date.UTC(2024, 10, 7);
const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 20 },
  { name: "level", type: "int" },
  { name: "ratio", type: "float" },
  { name: "ok", type: "bool" },
];

const hosts: DirectHost[] = [];
const servers: RunningComponent[] = [];
let verifier: Verifier | undefined;

async function startServer(
  httpPort: number,
  tcpPort: number,
  settings?: Record<string, Record<string, number>>,
): Promise<RunningComponent> {
  const host = await createDirectHost("sink", "clickhouse");
  hosts.push(host);
  const s = await clickhouse.startLocal(
    host,
    clickhouseSchema.parse({ version: "18.16.1", httpPort, tcpPort, settings }),
  );
  servers.push(s);
  return s;
}

beforeAll(async () => {
  const s = await startServer(HTTP_PORT, TCP_PORT);
  verifier = clickhouseVerifier.create({
    host: "127.0.0.1",
    port: HTTP_PORT,
    params: { ...s.params, table: TABLE },
    fields,
  });
});

afterAll(async () => {
  await verifier?.close().catch(() => undefined);
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const h of hosts) await h.cleanup();
});

async function q(sql: string, port = HTTP_PORT): Promise<string> {
  const r = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: sql });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${sql}: ${text}`);
  return text;
}

/** rows for seqs from..to of generator `gen`, sent_at = BASE_MS + seq */
const insertSeqs = (gen: number, from: number, to: number): Promise<string> =>
  q(
    `INSERT INTO ${TABLE} (ts, msg, level, ratio, ok, gen, seq, sent_at) SELECT ${BASE_MS}, 'x', 1, 0.5, 1, ${gen}, number, ${BASE_MS} + number FROM numbers(${from}, ${to - from + 1})`,
  );

/** ALTER TABLE ... DELETE (an asynchronous mutation in 18.16), then wait until it is done. */
async function deleteWhere(cond: string): Promise<void> {
  await q(`ALTER TABLE ${TABLE} DELETE WHERE ${cond}`);
  for (let i = 0; i < 100; i++) {
    if (
      (await q(`SELECT count() FROM system.mutations WHERE table = '${TABLE}' AND NOT is_done`)).trim() ===
      "0"
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("mutation not done after 10 s");
}

describe("clickhouse verifier (real ClickHouse 18.16.1)", () => {
  it("creates a MergeTree table with the fields in order, then gen, seq, sent_at and the server's stored_at, ordered by (gen, seq)", async () => {
    await verifier!.prepare();
    const cols = await q(
      `SELECT name, type FROM system.columns WHERE database = 'default' AND table = '${TABLE}' FORMAT TabSeparated`,
    );
    expect(
      cols
        .trim()
        .split("\n")
        .map((l) => l.split("\t")),
    ).toEqual([
      ["ts", "UInt64"],
      ["msg", "String"],
      ["level", "Int64"],
      ["ratio", "Float64"],
      ["ok", "UInt8"],
      ["gen", "UInt32"],
      ["seq", "UInt64"],
      ["sent_at", "UInt64"],
      ["stored_at", "DateTime"],
    ]);
    const t = await q(
      `SELECT engine, sorting_key FROM system.tables WHERE database = 'default' AND name = '${TABLE}' FORMAT TabSeparated`,
    );
    expect(t.trim().split("\t")).toEqual(["MergeTree", "gen, seq"]);
  });

  it("samples count and newest sent_at (epoch ms), timed around the query", async () => {
    const empty = await verifier!.sample();
    expect(empty.stored).toBe(0);
    expect(empty.newestSentAtMs).toBeNull();
    expect(empty.tAfter).toBeGreaterThanOrEqual(empty.tBefore);
    expect(Math.abs(empty.tBefore - Date.now())).toBeLessThan(1000);
    await insertSeqs(0, 0, 199_999);
    await new Promise((r) => setTimeout(r, 1100)); // stored_at's whole second passes (see afterLoad)
    const s = await verifier!.sample();
    expect(s.stored).toBe(200_000);
    // newest sent_at is settled after the load (a live sample reads no row)
    expect(s.newestSentAtMs).toBeNull();
    const settled = await verifier!.afterLoad!([empty.mark!, s.mark!]);
    expect(settled.samples.map((x) => [x.stored, x.newestSentAtMs])).toEqual([
      [0, null],
      [200_000, BASE_MS + 199_999],
    ]);
  });

  it("counts from system.parts metadata and reads no row of the table; system.query_log accounts for every sample query under its tag (real ClickHouse 18.16)", async () => {
    // a live sample reads only system.parts and the server's clock, never the table's 200000 rows
    for (let i = 0; i < 3; i++) expect((await verifier!.sample({ tag: "idle" })).stored).toBe(200_000);
    const idle = await verifier!.sample({ tag: "idle" });
    expect(idle.newestSentAtMs).toBe(BASE_MS + 199_999); // the last settled (above)
    const cost = await verifier!.sinkCost!("idle");
    expect(cost.queries).toBe(4); // count, parts and clock in one query per sample
    expect(cost.readRows).toBeLessThan(1000); // system tables' rows only
    expect(cost.cpuMs).toBeGreaterThanOrEqual(0);
    expect(cost.threadWallMs).toBeGreaterThanOrEqual(0);
    expect((await verifier!.sinkCost!("other")).queries).toBe(0);
  });

  it("finds exactly the seqs deleted at the sink (across ledger windows) and counts a repeated batch as duplicated", async () => {
    // deleted: 100..149, 5000, the window boundary LEDGER_WINDOW-5 .. LEDGER_WINDOW+4, and the whole second window
    const w = LEDGER_WINDOW;
    await deleteWhere(
      `(seq BETWEEN 100 AND 149) OR seq = 5000 OR (seq BETWEEN ${w - 5} AND ${w + 4}) OR (seq BETWEEN ${2 * w} AND ${3 * w - 1})`,
    );
    const lostCount = 50 + 1 + 10 + w;
    expect(Number(await q(`SELECT count() FROM ${TABLE}`))).toBe(200_000 - lostCount);

    // one batch of seqs 10..19 encoded as the generator encodes it, POSTed twice: 20 duplicates, no new seq
    const source = createEventSource({ fields, seed: 1, genId: 0 });
    const batch = new ClickHouseJsonEachRowEncoder(source).encode(10, 10);
    const path = `/?query=${encodeURIComponent(clickHouseInsertQuery(TABLE, fields))}`;
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`http://127.0.0.1:${HTTP_PORT}${path}`, {
        method: "POST",
        body: new Uint8Array(batch.payload),
      });
      expect(r.status, await r.text()).toBe(200);
    }
    const before = await verifier!.sample();
    expect(before.stored).toBe(200_000 - lostCount + 20);

    const l = (await verifier!.ledger([200_000], [[]])) as ClickHouseLedger;
    const { server, ...ledger } = l;
    expect(ledger).toEqual({
      sent: 200_000,
      accepted: 200_000,
      stored: 200_000 - lostCount + 20,
      distinct: 200_000 - lostCount,
      lost: lostCount,
      duplicated: 20,
      overwritten: 0,
      rejected: 0,
      unexpected: 0,
      missingRanges: [
        [0, 100, 149],
        [0, 5000, 5000],
        [0, w - 5, w + 4],
        [0, 2 * w, 3 * w - 1],
      ],
      foreign: 0,
      rejectedStored: 0,
      deduplicated: 0,
    });
    // the server's own account: 1 INSERT SELECT + 2 POSTs, all rows it inserted
    expect(server).toMatchObject({ insertQueries: 3, insertedRows: 200_020, rejectedInserts: 0 });
    expect(server.activeParts).toBeGreaterThanOrEqual(1);
    expect(server.maxActiveParts).toBeGreaterThanOrEqual(server.activeParts);
  });

  it("keeps rejected seqs out of lost, and counts rows never sent as unexpected", async () => {
    // the generator claims 150000 sent and 100..149 and 70000..70009 rejected; 5000, the boundary and the deleted
    // seqs below 150000 of the third window stay lost
    const w = LEDGER_WINDOW;
    const l = await verifier!.ledger(
      [150_000],
      [
        [
          [100, 149],
          [70_000, 70_009],
        ],
      ],
    );
    const stored = 200_000 - (50 + 1 + 10 + w) + 20;
    const unexpected = 200_000 - 3 * w; // stored seqs 150000..199999: those above the deleted third window
    expect(l).toMatchObject({
      sent: 150_000,
      accepted: 150_000 - 60,
      stored,
      rejected: 60,
      unexpected,
      rejectedStored: 10,
      lost: 1 + 10 + (150_000 - 2 * w), // 70000..70009 are stored (rejected whether stored or not), 100..149 are rejected
      missingRanges: [
        [0, 5000, 5000],
        [0, w - 5, w + 4],
        [0, 2 * w, 149_999],
      ],
    });
    // a second generator that sent 10 seqs and stored none, and a gen the run never had
    await insertSeqs(7, 0, 4);
    const l2 = await verifier!.ledger([150_000, 10], [[], []]);
    expect(l2.unexpected).toBe(unexpected + 5);
    expect(l2.lost).toBe(50 + 1 + 10 + (150_000 - 2 * w) + 10);
    expect(l2.missingRanges.at(-1)).toEqual([1, 0, 9]);
  });

  it("counts rows of another run as foreign, in no sample and no other figure; the completion query names what is missing (real ClickHouse)", async () => {
    const base = genBaseOf("20261201T094000Z-abcdef");
    const mine = clickhouseVerifier.create({
      host: "127.0.0.1",
      port: HTTP_PORT,
      params: { ...servers[0]!.params, table: TABLE },
      fields,
      genBase: base,
    });
    await mine.prepare();
    await insertSeqs(base, 0, 999);
    await insertSeqs(base + 1, 0, 499);
    const sent = [1000, 500];
    expect(await mine.missing!(sent, [[], []])).toMatchObject({ missing: 0, missingRanges: [] });
    await deleteWhere(`gen = ${base + 1} AND seq = 7`);
    const c = await mine.missing!(sent, [[], []]);
    expect(c).toMatchObject({ missing: 1, missingRanges: [[1, 7, 7]] });
    expect(c.tAfter).toBeGreaterThanOrEqual(c.tBefore);
    // one row of another run (the previous replicate's late flush) and one of gen 0 (no run's)
    await insertSeqs(genBaseOf("20261201T093000Z-123456"), 7, 7);
    await insertSeqs(0, 3, 3);
    const first = await mine.sample();
    expect(first.stored).toBe(1499);
    // a later foreign row (stamped a second later): a live sample holds the last recount, a full one recounts, and
    // the samples settled after the load take it off where it was stamped
    await new Promise((r) => setTimeout(r, 1100));
    await insertSeqs(genBaseOf("20261201T093000Z-123456"), 8, 8);
    const live = await mine.sample();
    expect(live.stored).toBe(1500);
    expect((await mine.sample({ full: true })).stored).toBe(1499);
    expect((await mine.afterLoad!([first.mark!, live.mark!])).samples.map((x) => x.stored)).toEqual([
      1499, 1499,
    ]);
    await deleteWhere(`gen = ${genBaseOf("20261201T093000Z-123456")} AND seq = 8`);
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
    const r = await mine.ledger(sent, [[[10, 19]], [[5, 9]]]);
    expect(r).toMatchObject({ rejected: 15, rejectedStored: 14, lost: 0, missingRanges: [] });
    await mine.close();
  });

  it("lists only the first 20 missing ranges, with the total lost exact", async () => {
    await verifier!.prepare();
    await insertSeqs(0, 0, 99_999);
    await deleteWhere("seq % 1000 = 7");
    const l = await verifier!.ledger([100_000], [[]]);
    expect(l.lost).toBe(100);
    expect(l.missingRanges).toHaveLength(20);
    expect(l.missingRanges[0]).toEqual([0, 7, 7]);
    expect(l.missingRanges[19]).toEqual([0, 19_007, 19_007]);
  });

  it("settles each row's delivery latency (stored_at − sent_at) into exactly one sample window after the load, an INSERT still running included (real ClickHouse 18.16: whole seconds)", async () => {
    await verifier!.prepare();
    const cols = "(ts, msg, level, ratio, ok, gen, seq, sent_at)";
    const marks: string[] = [];
    const take = async (): Promise<void> => {
      const s = await verifier!.sample();
      expect(s.delivery).toBeUndefined(); // read after the load, not per sample
      marks.push(s.mark!);
    };
    const batch = (from: number, sleep = 0): Promise<string> =>
      q(
        `INSERT INTO ${TABLE} ${cols} SELECT 0, 'x', 1, 0.5, 1, 0, number, toUInt64(${Date.now()})${sleep ? ` + sleep(${sleep}) * 0` : ""} FROM numbers(${from}, 1000)`,
      );
    await batch(0);
    await take();
    // an INSERT that runs ~2 s (stamped when its block is written): samples while it runs, and after
    const slow = batch(1000, 2);
    await new Promise((r) => setTimeout(r, 1200));
    await batch(2000);
    await take();
    await slow;
    await batch(3000);
    await take();
    const settled = await verifier!.afterLoad!(marks);
    let delivered = 0;
    for (const d of [...settled.samples.map((x) => x.delivery), settled.later]) {
      if (!d) throw new Error("no delivery window");
      expect(d.resolutionMs).toBe(1000);
      expect(d.unstamped).toBe(0);
      for (const [ms, n] of d.buckets) {
        // sent now, stamped within the same second or the next: the estimate is within ±500 ms of 0..1 s
        expect(ms).toBeGreaterThanOrEqual(-600);
        expect(ms).toBeLessThan(4000);
        delivered += n;
      }
    }
    expect(delivered).toBe(4000);
    expect(settled.samples.map((x) => x.stored)).toEqual([1000, 2000, 4000]);
    const [stored] = (await q(`SELECT count() FROM ${TABLE}`)).trim().split("\t");
    expect(Number(stored)).toBe(4000);
  });

  it("records inserts refused with code 252 TOO_MANY_PARTS as rejected, not lost, on both sides", async () => {
    // a server whose MergeTree refuses an insert once the table has 3 active parts, with merges stopped (18.16 checks
    // parts_to_delay_insert first: with it at 3 as well, the 4th insert is refused at once, not delayed)
    const port = HTTP_PORT + 1;
    const s = await startServer(port, TCP_PORT + 1, {
      merge_tree: { parts_to_delay_insert: 3, parts_to_throw_insert: 3 },
    });
    const v = clickhouseVerifier.create({
      host: "127.0.0.1",
      port,
      params: { ...s.params, table: TABLE },
      fields,
    });
    await v.prepare();
    await q("SYSTEM STOP MERGES", port);
    const gen = clickhouseHttp.create(clickhouseHttp.schema.parse({ batch: 100, seed: 3 }), {
      target: { host: "127.0.0.1", port, params: { ...s.params, table: TABLE } },
      fields,
      genId: 0,
    });
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 20_000);
    const final: GeneratorFinal = await gen.run(ac.signal, () => undefined); // stops itself after 10 refused batches
    clearTimeout(timer);
    expect(final.accepted).toBe(300);
    expect(final.rejected).toBe(1000);
    expect(final.rejectedRanges).toEqual([[300, 1299]]);
    expect(final.errors[0]).toMatch(/code 252 \(retryable, not resent\).*Too many parts/);
    const l = (await v.ledger([final.sent], [final.rejectedRanges])) as ClickHouseLedger;
    expect(l).toMatchObject({
      sent: 1300,
      accepted: 300,
      stored: 300,
      distinct: 300,
      lost: 0,
      rejected: 1000,
      unexpected: 0,
      missingRanges: [],
    });
    // 18.16 counts the rows of a refused insert in InsertedRows too: rows received, not rows stored
    expect(l.server).toMatchObject({
      activeParts: 3,
      insertQueries: 13,
      insertedRows: 1300,
      rejectedInserts: 10,
      rowsPerInsert: 100,
    });
    await v.close();
  });
});
