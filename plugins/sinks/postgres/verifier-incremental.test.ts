// The verifier counts only recent pages between samples (TID range scans, settled pages carried over). Against a real
// PostgreSQL with several writers committing concurrently and one long-open transaction, every incremental sample
// must equal a full count(*) taken right after it, and the recent-pages query must plan as a TID range scan.
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
  verifier = postgresVerifier.create({ host: "127.0.0.1", port: PORT, params: { ...server.pg.params, table: TABLE }, fields });
  await verifier.prepare();
});

afterAll(async () => {
  await verifier?.close().catch(() => undefined);
  for (const c of clients) await c.end().catch(() => undefined);
  await server?.cleanup();
});

const insert = (c: pg.Client, gen: number, from: number, n: number) =>
  c.query(`INSERT INTO ${TABLE} (msg, gen, seq, sent_at) SELECT repeat('x', 200), $1, s, now() FROM generate_series($2::bigint, $3::bigint) s`, [gen, from, from + n - 1]);

describe("postgres verifier, incremental count on a real server", () => {
  it("equals a full count after every round of concurrent writers, including a transaction that commits late", async () => {
    const writers = [await connect(), await connect(), await connect()];
    const checker = await connect();
    const slow = await connect();
    // a transaction that writes early and commits only at the end: its rows sit in early pages
    await slow.query("BEGIN");
    await insert(slow, 9, 0, 3000);
    const next = [0, 0, 0];
    let samples = 0;
    // delivery latency: every row is read by exactly one sample, the late-committing transaction's too
    let delivered = 0;
    const add = (d: { buckets: Array<[number, number]>; unstamped: number } | undefined): void => {
      if (!d) throw new Error("no delivery window");
      for (const [ms, n] of d.buckets) {
        expect(ms).toBeGreaterThanOrEqual(0);
        delivered += n;
      }
      expect(d.unstamped).toBe(0);
    };
    for (let round = 0; round < 12; round++) {
      await Promise.all(writers.map((w, g) => insert(w, g, next[g]!, 4000).then(() => { next[g]! += 4000; })));
      if (round === 8) await slow.query("COMMIT");
      const s = await verifier!.sample();
      const full = Number((await checker.query(`SELECT count(*) AS n FROM ${TABLE}`)).rows[0].n);
      expect(s.stored).toBe(full);
      add(s.delivery);
      expect(delivered).toBe(full);
      samples++;
    }
    expect(samples).toBe(12);
    const total = Number((await checker.query(`SELECT count(*) AS n FROM ${TABLE}`)).rows[0].n);
    expect(total).toBe(12 * 3 * 4000 + 3000);
    // with the verifier's session settings, the recent-pages query plans as a TID range scan, not a full scan
    for (const setting of SAMPLE_SESSION_SETTINGS) await checker.query(setting);
    const plan = await checker.query(`EXPLAIN SELECT count(*) FROM ${TABLE} WHERE ctid >= '(100,0)'::tid`);
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/Tid Range Scan/);
    const last = await verifier!.sample({ full: true });
    expect(last.stored).toBe(total);
    // a full recount reads no row a second time
    add(last.delivery);
    expect(delivered).toBe(total);
    expect(last.delivery!.resolutionMs).toBe(1);
  });
});
