// The verifier's live samples read no row; after the load it settles them from their snapshots (afterLoad). Against a
// real PostgreSQL with several writers committing concurrently and one long-open transaction, every settled sample
// must equal a full count(*) taken right after it, every row must be in exactly one delivery window (the late
// transaction's in the window of its commit), and the live tail query must plan as a TID range scan.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventField } from "../../../core/events/types.ts";
import { postgresVerifier } from "./verifier.ts";
import { SAMPLE_SESSION_SETTINGS } from "./verifier.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { startTestPostgres, type TestPostgres } from "../../../test/helpers/direct-host.ts";

const PORT = 5446;
const TABLE = "ib_events";
const fields: EventField[] = [{ name: "msg", type: "string", size: 200 }];

let server: TestPostgres | undefined;
const clients: pg.Client[] = [];
let verifier: Verifier | undefined;

async function connect(): Promise<pg.Client> {
  const c = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
  await c.connect();
  clients.push(c);
  return c;
}

beforeAll(async () => {
  server = await startTestPostgres(PORT);
  verifier = postgresVerifier.create({
    host: "127.0.0.1",
    port: PORT,
    params: { ...server.pg.params, table: TABLE },
    fields,
  });
  await verifier.prepare();
});

afterAll(async () => {
  await verifier?.close().catch(() => undefined);
  for (const c of clients) await c.end().catch(() => undefined);
  await server?.cleanup();
});

const insert = (c: pg.Client, gen: number, from: number, n: number) =>
  c.query(
    `INSERT INTO ${TABLE} (msg, gen, seq, sent_at) SELECT repeat('x', 200), $1, s, now() FROM generate_series($2::bigint, $3::bigint) s`,
    [gen, from, from + n - 1],
  );

describe("postgres verifier, samples settled after the load on a real server", () => {
  it("settles every sample to the full count taken right after it, through concurrent writers and a transaction that commits late", async () => {
    const writers = [await connect(), await connect(), await connect()];
    const checker = await connect();
    const slow = await connect();
    // a transaction that writes early and commits only at the end: its rows sit in early pages
    await slow.query("BEGIN");
    await insert(slow, 9, 0, 3000);
    const next = [0, 0, 0];
    const marks: string[] = [];
    const full: number[] = [];
    for (let round = 0; round < 12; round++) {
      await Promise.all(
        writers.map((w, g) =>
          insert(w, g, next[g]!, 4000).then(() => {
            next[g]! += 4000;
          }),
        ),
      );
      if (round === 8) await slow.query("COMMIT");
      const s = await verifier!.sample({ tag: "measure" });
      marks.push(s.mark!);
      full.push(Number((await checker.query(`SELECT count(*) AS n FROM ${TABLE}`)).rows[0].n));
    }
    const total = Number((await checker.query(`SELECT count(*) AS n FROM ${TABLE}`)).rows[0].n);
    expect(total).toBe(12 * 3 * 4000 + 3000);
    const settled = await verifier!.afterLoad!(marks);
    expect(settled.samples.map((s) => s.stored)).toEqual(full);
    // delivery latency: every row in exactly one window, the late-committing transaction's in the window of its commit
    const rows = (
      d: { buckets: Array<[number, number]>; unstamped: number; resolutionMs: number } | undefined,
    ): number => {
      if (!d) throw new Error("no delivery window");
      expect(d.unstamped).toBe(0);
      expect(d.resolutionMs).toBe(1);
      return d.buckets.reduce((n, [ms, k]) => {
        expect(ms).toBeGreaterThanOrEqual(0);
        return n + k;
      }, 0);
    };
    const perWindow = settled.samples.map((s) => rows(s.delivery));
    expect(perWindow).toEqual(full.map((n, i) => n - (full[i - 1] ?? 0)));
    expect(perWindow[8]).toBe(3 * 4000 + 3000);
    expect(rows(settled.later)).toBe(0);
    // the latency histogram over all windows equals PostgreSQL's own numeric rounding of stored_at − sent_at
    const reference = (
      await checker.query(
        `SELECT round(extract(epoch FROM stored_at - sent_at) * 1000)::bigint::text AS ms, count(*)::int AS n FROM ${TABLE} GROUP BY 1`,
      )
    ).rows
      .map((r) => [Number(r.ms), r.n])
      .sort((a, b) => a[0] - b[0]);
    const histogram = new Map<number, number>();
    for (const d of [...settled.samples.map((s) => s.delivery!), settled.later!])
      for (const [ms, k] of d.buckets) histogram.set(ms, (histogram.get(ms) ?? 0) + k);
    expect([...histogram].sort((a, b) => a[0] - b[0])).toEqual(reference);
    // one query per live sample
    expect((await verifier!.sinkCost!("measure")).queries).toBe(12);
    // with the verifier's session settings, the tail query plans as a TID range scan, not a full scan
    for (const setting of SAMPLE_SESSION_SETTINGS) await checker.query(setting);
    const plan = await checker.query(
      `EXPLAIN SELECT max(sent_at) FROM ${TABLE} WHERE ctid >= '(100,0)'::tid AND ctid < '(104,0)'::tid`,
    );
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/Tid Range Scan/);
    const last = await verifier!.sample({ full: true });
    expect(last.stored).toBe(total);
    // the settling's own count of every row it saw (SettledSamples.final), the rows after the last mark included, as
    // the full count has it; another run's rows (gen outside this run's id space) left out of both
    expect(settled.final).toMatchObject({ stored: total, newestSentAtMs: last.newestSentAtMs });
    await insert(writers[0]!, 0, next[0]!, 500);
    await insert(writers[1]!, 1_000_000, 0, 7);
    const again = await verifier!.afterLoad!(marks);
    expect(rows(again.later)).toBe(500);
    const counted = await verifier!.sample({ full: true });
    expect(counted.stored).toBe(total + 500);
    expect(again.final).toMatchObject({ stored: total + 500, newestSentAtMs: counted.newestSentAtMs });
    expect(again.final!.tBefore).toBeLessThanOrEqual(again.final!.tAfter);
  });
});
