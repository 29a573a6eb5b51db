// The ledger takes the completion check's last pass (./verifier.ts ledger(), keptProof) only when no transaction
// committed at the sink since that pass's snapshot (an ANALYZE included); otherwise it reads the table itself. Against a real PostgreSQL:
// the same figures either way when nothing changed; a row inserted, deleted or updated since, or a transaction open at
// the check that commits after it, sends the ledger to its own pass and is counted; an aborted one does not. The
// content check's sample is located by the completion check's pass and its rows fetched behind it: the ledger hands
// them over (a change made after the ledger is not in them, as it would not be in rows fetched behind its own pass).
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EventField } from "../../../core/events/types.ts";
import type { Ledger, Verifier } from "../../../core/verifier.ts";
import { startTestPostgres, type TestPostgres } from "../../../test/helpers/direct-host.ts";
import { endedSince, MAX_ENDED_CHECKED } from "./verifier.ts";
import { parseSnapshot } from "./settle.ts";
import { postgresVerifier } from "./verifier.ts";

const PORT = 5451;
const TABLE = "ib_events";
const GEN = 700;
const N = 20_000;
const fields: EventField[] = [{ name: "msg", type: "string", size: 20 }];

let server: TestPostgres | undefined;
let client: pg.Client | undefined;
let verifier: Verifier | undefined;
const others: pg.Client[] = [];

beforeAll(async () => {
  // no autovacuum on this test's own server: an ANALYZE commits a transaction, which would (rightly) send a ledger
  // to its own pass in the tests that expect the completion check's pass taken
  server = await startTestPostgres(PORT, { settings: { autovacuum: "off" } });
  client = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
  await client.connect();
});

afterAll(async () => {
  for (const c of others) await c.end().catch(() => undefined);
  await client?.end().catch(() => undefined);
  await verifier?.close().catch(() => undefined);
  await server?.cleanup();
});

// a fresh table each test: gen GEN seqs 0..N-1 (msg "m<seq>"), seq 5 twice, one foreign row
beforeEach(async () => {
  await verifier?.close();
  verifier = postgresVerifier.create({
    host: "127.0.0.1",
    port: PORT,
    params: { ...server!.pg.params, table: TABLE },
    fields,
    genBase: GEN,
  });
  await verifier.prepare();
  await client!.query(
    `INSERT INTO ${TABLE} (msg, gen, seq, sent_at) SELECT 'm' || s, ${GEN}, s, now() FROM generate_series(0, ${N - 1}) s`,
  );
  await client!.query(
    `INSERT INTO ${TABLE} (msg, gen, seq, sent_at) VALUES ('m5', ${GEN}, 5, now()), ('x', 5, 0, now())`,
  );
});

const sent = [N];
const none: Array<Array<[number, number]>> = [[]];

/** The ledger read by its own pass: a second ledger() has no completion pass left to take. */
async function ownPass(): Promise<Ledger> {
  const l = await verifier!.ledger(sent, none);
  expect(verifier!.ledgerPass).toEqual({
    tookCompletionPass: false,
    detail: "its own pass (no completion check's pass to take)",
  });
  return l;
}

describe("postgres ledger from the completion check's pass (real server)", () => {
  it("takes the pass when nothing committed since, with the figures its own pass gives", async () => {
    const c = await verifier!.missing!(sent, none);
    expect(c.missing).toBe(0);
    const taken = await verifier!.ledger(sent, none);
    expect(verifier!.ledgerPass?.tookCompletionPass).toBe(true);
    expect(taken).toMatchObject({ sent: N, stored: N + 1, distinct: N, duplicated: 1, lost: 0, foreign: 1 });
    expect(taken).toEqual(await ownPass());
  });

  it("an aborted transaction since leaves the pass standing", async () => {
    await verifier!.missing!(sent, none);
    await client!.query("BEGIN");
    await client!.query(`INSERT INTO ${TABLE} (msg, gen, seq, sent_at) VALUES ('m1', ${GEN}, 1, now())`);
    await client!.query("ROLLBACK");
    const taken = await verifier!.ledger(sent, none);
    expect(verifier!.ledgerPass?.tookCompletionPass).toBe(true);
    expect(taken.duplicated).toBe(1);
  });

  for (const [what, sql, expected] of [
    [
      "a row inserted",
      `INSERT INTO ${TABLE} (msg, gen, seq, sent_at) VALUES ('m1', ${GEN}, 1, now())`,
      { stored: N + 2, duplicated: 2, lost: 0 },
    ],
    [
      "a row deleted",
      `DELETE FROM ${TABLE} WHERE gen = ${GEN} AND seq = 9`,
      { stored: N, duplicated: 1, lost: 1, missingRanges: [[0, 9, 9]] },
    ],
    [
      "a row updated",
      `UPDATE ${TABLE} SET seq = 5 WHERE gen = ${GEN} AND seq = 10`,
      { stored: N + 1, duplicated: 2, lost: 1 },
    ],
  ] as const) {
    it(`${what} since sends the ledger to its own pass, which counts it`, async () => {
      await verifier!.missing!(sent, none);
      await client!.query(sql);
      const l = await verifier!.ledger(sent, none);
      expect(verifier!.ledgerPass).toEqual({
        tookCompletionPass: false,
        detail: "its own pass (1 transaction committed at the sink since the completion check's snapshot)",
      });
      expect(l).toMatchObject(expected);
    });
  }

  it("a transaction open at the completion check that commits after it sends the ledger to its own pass", async () => {
    const slow = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
    await slow.connect();
    others.push(slow);
    await slow.query("BEGIN");
    await slow.query(`INSERT INTO ${TABLE} (msg, gen, seq, sent_at) VALUES ('m2', ${GEN}, 2, now())`);
    await client!.query("SELECT pg_current_xact_id()"); // a later xid ends first: the open one is in the snapshot's xip
    await verifier!.missing!(sent, none);
    await slow.query("COMMIT");
    const l = await verifier!.ledger(sent, none);
    expect(verifier!.ledgerPass?.tookCompletionPass).toBe(false);
    expect(l.duplicated).toBe(2);
  });

  it("an ANALYZE since (an autovacuum's would be the same) sends the ledger to its own pass", async () => {
    await verifier!.missing!(sent, none);
    await client!.query(`ANALYZE ${TABLE}`);
    const l = await verifier!.ledger(sent, none);
    expect(verifier!.ledgerPass).toEqual({
      tookCompletionPass: false,
      detail: "its own pass (1 transaction committed at the sink since the completion check's snapshot)",
    });
    expect(l.duplicated).toBe(1);
  });

  // a newcomer's case: a write beside an ANALYZE, its backend then idle in a transaction (its statistics counters
  // not flushed): only the commit itself can tell
  it("a row deleted beside an ANALYZE by a writer left idle in a transaction: its own pass, which counts it lost", async () => {
    const writer = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
    await writer.connect();
    others.push(writer);
    await verifier!.missing!(sent, none);
    await writer.query("BEGIN");
    await writer.query(`DELETE FROM ${TABLE} WHERE gen = ${GEN} AND seq = 9`);
    await writer.query(`ANALYZE ${TABLE}`);
    await writer.query("COMMIT");
    await writer.query("BEGIN");
    const l = await verifier!.ledger(sent, none);
    expect(verifier!.ledgerPass?.tookCompletionPass).toBe(false);
    expect(l).toMatchObject({ stored: N, lost: 1, missingRanges: [[0, 9, 9]] });
    await writer.query("ROLLBACK");
  });

  it("other sent seqs than the check's: its own pass", async () => {
    await verifier!.missing!(sent, none);
    const l = await verifier!.ledger([N + 5], none);
    expect(verifier!.ledgerPass?.detail).toBe("its own pass (the completion check counted other sent seqs)");
    expect(l.lost).toBe(5);
  });

  it("the content check's sample, located by the completion check's pass, comes with it: the rows fetched behind that pass", async () => {
    const wanted = [{ gen: GEN, seqs: [0, 5, 19_999] }];
    const reader = verifier!.rows!;
    reader.expectSample!(wanted);
    await verifier!.missing!(sent, none);
    reader.expectSample!(wanted.map((w) => ({ ...w, seqs: [...w.seqs] }))); // told again before the ledger, as harness/runner/fidelity.ts does
    const read = reader.readSample!(wanted);
    await verifier!.ledger(sent, none);
    expect(verifier!.ledgerPass?.tookCompletionPass).toBe(true);
    // changed after the ledger: not in the rows fetched behind the completion check's pass
    await client!.query(`UPDATE ${TABLE} SET msg = 'changed' WHERE gen = ${GEN} AND seq = 0`);
    const rows = await read;
    expect(rows.map((r) => `${r.gen}:${r.seq}:${String(r.values[0])}`).sort()).toEqual([
      `${GEN}:0:m0`,
      `${GEN}:19999:m19999`,
      `${GEN}:5:m5`,
      `${GEN}:5:m5`,
    ]);
  });

  it("a sample told only before the ledger (not to the completion check) sends the ledger to its own pass, which locates it", async () => {
    const wanted = [{ gen: GEN, seqs: [3] }];
    await verifier!.missing!(sent, none);
    verifier!.rows!.expectSample!(wanted);
    const read = verifier!.rows!.readSample!(wanted);
    await verifier!.ledger(sent, none);
    expect(verifier!.ledgerPass?.detail).toBe(
      "its own pass (the completion check did not locate the content check's sample)",
    );
    expect((await read).map((r) => String(r.values[0]))).toEqual(["m3"]);
  });
});

describe("postgres samples settled from the completion check's pass (./settle.ts PassSettler, real server)", () => {
  it("gives the figures of the settle query: frozen rows, a transaction open across marks, unstamped rows, latencies either side of zero with half-ms ties, a sent_at in 2300, foreign rows", async () => {
    // rows frozen before the marks (the xmin column still shows a frozen row's raw xid, PostgreSQL ≥ 9.4), then three
    // marks with rows of spread latency between
    await client!.query(`VACUUM (FREEZE) ${TABLE}`);
    const open = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
    others.push(open);
    await open.connect();
    await open.query("BEGIN");
    await open.query(
      `INSERT INTO ${TABLE} (msg, gen, seq, sent_at) VALUES ('late', ${GEN}, ${N + 400}, now())`,
    ); // in the marks' xip
    const marks: string[] = [];
    for (let k = 0; k < 3; k++) {
      // stored_at from 1.2 s before to 2.5 s after sent_at (a skewed clock), on whole ms and on ties (+500 µs, half
      // away from zero either side of zero), some rows unstamped (NULL sent_at or stored_at), one sent_at in 2300
      // (beyond 2^53 µs from 2000: a bigint at the harness)
      await client!
        .query(`INSERT INTO ${TABLE} (msg, gen, seq, sent_at, stored_at) SELECT 'm' || s, ${GEN}, s,
          CASE WHEN s % 97 = 0 THEN NULL WHEN s = ${N + 150} THEN '2300-01-01 00:00:00+00'::timestamptz ELSE sent END,
          CASE WHEN s % 89 = 0 THEN NULL ELSE sent + (((s * 7919) % 3700) - 1200) * interval '1 ms' + (s % 3) * interval '500 us' END
        FROM (SELECT s, '2026-12-05 08:00:00+00'::timestamptz + s * interval '1 ms' AS sent FROM generate_series(${N + k * 100}, ${N + k * 100 + 99}) s) x`);
      await client!.query(
        `INSERT INTO ${TABLE} (msg, gen, seq, sent_at) VALUES ('x', ${GEN + 1_000_000}, ${k}, now())`,
      ); // another run's
      marks.push((await verifier!.sample({ tag: "measure" })).mark!);
      if (k === 1) await open.query("COMMIT"); // committed between the second and third mark
    }
    await verifier!.missing!([N + 401], none, marks);
    const pass = await verifier!.afterLoad!(marks);
    expect(pass.fromCompletionPass).toBe(true);
    const own = await verifier!.afterLoad!(marks); // the kept answer is used once: this is the settle query
    expect(own.fromCompletionPass).toBeUndefined();
    const strip = (x: typeof own) => ({
      samples: x.samples,
      later: x.later,
      stored: x.final?.stored,
      newest: x.final?.newestSentAtMs,
    });
    expect(strip(pass)).toEqual(strip(own));
    // what the comparison covers: every window has rows, several latency buckets either side of zero, unstamped rows
    expect(pass.samples.map((p) => p.stored)).toEqual([N + 1 + 100, N + 1 + 200, N + 1 + 300 + 1]);
    const buckets = pass.samples.flatMap((p) => p.delivery!.buckets);
    expect(buckets.some(([ms]) => ms < 0) && buckets.some(([ms]) => ms > 2000)).toBe(true);
    expect(buckets.some(([ms]) => ms < -1e12)).toBe(true); // stored 274 years before its 2300 sent_at
    expect(pass.samples[1]!.newestSentAtMs).toBe(Date.UTC(2300, 0, 1));
    expect(pass.samples.reduce((a, p) => a + p.delivery!.unstamped, 0)).toBeGreaterThan(2);
    expect(pass.samples[2]!.newestSentAtMs).toBe(own.samples[2]!.newestSentAtMs);
    await verifier!.missing!([N + 401], none, marks);
    expect((await verifier!.afterLoad!(marks.slice(0, 2))).fromCompletionPass).toBeUndefined();
  });
});

describe("a stamp the settle query cannot take (real server)", () => {
  it("an infinite sent_at: the completion check's pass settles, the row unstamped; the settle query itself fails", async () => {
    await client!.query(`UPDATE ${TABLE} SET sent_at = 'infinity' WHERE seq = 7`);
    const marks = [(await verifier!.sample({ tag: "measure" })).mark!];
    expect((await verifier!.missing!(sent, none, marks)).missing).toBe(0);
    const pass = await verifier!.afterLoad!(marks);
    expect(pass.fromCompletionPass).toBe(true);
    expect(pass.samples[0]!.stored).toBe(N + 1);
    expect(pass.samples[0]!.delivery!.unstamped).toBe(1);
    await expect(verifier!.afterLoad!(marks)).rejects.toThrow(/out of range/);
  });
});

describe("the transactions that ended between two snapshots (./verifier.ts endedSince)", () => {
  it("those in the old xip no longer running, and those from the old xmax below the new one not in its xip", () => {
    const then = parseSnapshot("100:105:100,103");
    expect(endedSince(then, parseSnapshot("100:105:100,103"))).toEqual([]);
    expect(endedSince(then, parseSnapshot("100:105:100"))).toEqual([103n]);
    expect(endedSince(then, parseSnapshot("103:109:103,106"))).toEqual([100n, 105n, 107n, 108n]);
    expect(endedSince(then, parseSnapshot("90:104:"))).toBeNull(); // xmax went back: another server
    expect(endedSince(then, parseSnapshot(`100:${105 + MAX_ENDED_CHECKED + 10}:`))!.length).toBeGreaterThan(
      MAX_ENDED_CHECKED,
    );
  });
});
