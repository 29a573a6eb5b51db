// The ledger and the content check after the load (harness/runner/fidelity.ts ledgerWithFidelity) on a real
// PostgreSQL with a replayed file: with more rows sent than `fidelity.all`, the sample's reads run beside the ledger on
// the row reader's own connection and give the sample's result; when the ledger then finds at most `all` stored rows
// (rows lost), every stored row is compared instead; a failing ledger fails the call with its own error; given the
// generators' index of the file, the sample's lines are read near their marks (core/events/replay-index.ts).
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ReplayIndex, replayIndexOf } from "../../../core/events/replay-index.ts";
import { createEventSource } from "../../../core/events/source.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { postgresVerifier } from "../../../plugins/sinks/postgres/verifier.ts";
import { ledgerWithFidelity } from "../../../harness/runner/fidelity.ts";
import { startTestPostgres, type TestPostgres } from "../../helpers/direct-host.ts";

const PORT = 5472;
const TABLE = "ib_after_load";
const SENT = 30_000;
const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 200 },
];
const dir = mkdtempSync(path.join(os.tmpdir(), "ib-test-after-load-"));
const replayFile = path.join(dir, "lines.log");
const plan = {
  fields,
  replayFile,
  generator: { name: "pg-copy", config: { seed: 5 } },
  fidelity: { all: 1000, sample: 300 },
  sink: { name: "postgres", config: {} },
};

let server: TestPostgres | undefined;
let client: pg.Client | undefined;
let verifier: Verifier | undefined;

beforeAll(async () => {
  // 12,000 lines, 1.6 MB (more than a small file kept in memory): the 30,000 seqs go through the file 2.5 times
  writeFileSync(
    replayFile,
    Array.from(
      { length: 12_000 },
      (_, i) => `2026-12-03T10:00:00.000 line ${i} ${"abc ".repeat(i % 50)}`,
    ).join("\n") + "\n",
  );
  server = await startTestPostgres(PORT);
  client = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres", database: "postgres" });
  await client.connect();
});

beforeEach(async () => {
  await verifier?.close();
  verifier = postgresVerifier.create({
    host: "127.0.0.1",
    port: PORT,
    params: { ...server!.pg.params, table: TABLE },
    fields,
  });
  await verifier.prepare();
  // what the generator sent for seqs 0..SENT-1 of gen 0
  const src = createEventSource({ fields, seed: 5, genId: 0, replayFile });
  await src.load(0, SENT);
  const ts: string[] = [];
  const msg: string[] = [];
  for (let seq = 0; seq < SENT; seq++) {
    const v = src.values(seq);
    ts.push((v[0] as Date).toISOString());
    msg.push(v[1] as string);
  }
  await src.close();
  await client!.query(
    `INSERT INTO ${TABLE} (ts, msg, gen, seq, sent_at) SELECT t, m, 0, s - 1, now() FROM unnest($1::timestamptz[], $2::text[]) WITH ORDINALITY AS k(t, m, s)`,
    [ts, msg],
  );
});

afterAll(async () => {
  await verifier?.close().catch(() => undefined);
  await client?.end().catch(() => undefined);
  await server?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const readerSessions = async (): Promise<number> =>
  Number(
    (
      await client!.query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'ingestbench-rows'",
      )
    ).rows[0].n,
  );

describe("the ledger and the content check after the load (harness/runner/fidelity.ts)", () => {
  it("a sample's reads run beside the ledger on their own connection: the ledger exact, the sample compared, an altered line found", async () => {
    const { ledger, times } = await ledgerWithFidelity(verifier!, plan, [SENT], [[]]);
    expect(ledger).toMatchObject({ stored: SENT, lost: 0, duplicated: 0, altered: 0 });
    expect(ledger.fidelity).toMatchObject({
      mode: "sample",
      sampleSize: 300,
      seqsCompared: 300,
      rowsCompared: 300,
    });
    expect(await readerSessions()).toBe(1);
    expect(times.fidelityMs).not.toBeNull();
    expect(times.afterLoadMs).toBeGreaterThanOrEqual(Math.max(times.ledgerMs, times.fidelityMs!));

    await client!.query(`UPDATE ${TABLE} SET msg = msg || '!'`);
    const again = await ledgerWithFidelity(verifier!, plan, [SENT], [[]]);
    expect(again.ledger).toMatchObject({ stored: SENT, lost: 0, altered: 300 });
    expect(again.ledger.fidelity).toMatchObject({ alteredByField: { msg: 300 } });
  });

  it("with the generators' index of the replay file, the sample's lines are read near their marks, and an altered line is still found", async () => {
    // the index the rows' source above noted as it read the file (a generator's child reports the same)
    const replayIndex = replayIndexOf(replayFile);
    expect(replayIndex).toMatchObject({ lines: 12_000, lineCount: 12_000 });
    const size = statSync(replayFile).size;
    // 10 seqs of 30,000: about 400 KB of the file apart, so each is reached by a seek rather than by reading on
    const sparse = { ...plan, fidelity: { all: 1000, sample: 10 } };
    const plain = await ledgerWithFidelity(verifier!, sparse, [SENT], [[]]);
    const { ledger } = await ledgerWithFidelity(verifier!, sparse, [SENT], [[]], { replayIndex });
    expect(ledger).toMatchObject({ stored: SENT, lost: 0, altered: 0 });
    const reads = ledger.fidelity && "replay" in ledger.fidelity ? ledger.fidelity.replay! : null;
    expect(reads).toMatchObject({ indexDropped: null, indexMarks: new ReplayIndex(replayIndex!).marks });
    expect(reads!.indexMarks).toBeGreaterThan(10);
    expect(reads!.seeks).toBeGreaterThan(0);
    // the generators' own count of the lines they changed before sending rides in their index: none here
    expect(ledger.fidelity && "replayLines" in ledger.fidelity ? ledger.fidelity.replayLines : null).toEqual({
      lines: 12_000,
      cut: 0,
      repaired: 0,
    });
    // without the index the sample's pass reads up to its last line, near the end of the file
    const plainReads =
      plain.ledger.fidelity && "replay" in plain.ledger.fidelity ? plain.ledger.fidelity.replay! : null;
    expect(plainReads!.bytes).toBeGreaterThan(size * 0.9);
    expect(reads!.bytes).toBeLessThan(plainReads!.bytes / 2);

    // a file modified after the generators started is said to be: its lines now may not be the ones sent
    const mtime = statSync(replayFile).mtimeMs;
    const unchanged = await ledgerWithFidelity(verifier!, sparse, [SENT], [[]], {
      replayIndex,
      generatorsStartedMs: mtime + 1,
    });
    expect(unchanged.ledger.fidelity).not.toHaveProperty("replayModified");
    const modified = await ledgerWithFidelity(verifier!, sparse, [SENT], [[]], {
      replayIndex,
      generatorsStartedMs: mtime - 1000,
    });
    expect(modified.ledger.fidelity).toMatchObject({
      replayModified: {
        at: new Date(mtime).toISOString(),
        generatorsStarted: new Date(mtime - 1000).toISOString(),
      },
    });

    await client!.query(`UPDATE ${TABLE} SET msg = left(msg, -1) WHERE seq % 2 = 0`);
    const altered = await ledgerWithFidelity(verifier!, sparse, [SENT], [[]], { replayIndex });
    expect(altered.ledger.altered).toBeGreaterThan(0);
    expect(altered.ledger.fidelity).toMatchObject({ alteredByField: { msg: altered.ledger.altered } });
  });

  it("when the ledger finds at most `all` rows stored, every stored row is compared instead of the early sample", async () => {
    await client!.query(`DELETE FROM ${TABLE} WHERE seq >= 800`);
    const { ledger } = await ledgerWithFidelity(verifier!, plan, [SENT], [[]]);
    expect(ledger).toMatchObject({ stored: 800, lost: SENT - 800, altered: 0 });
    expect(ledger.fidelity).toMatchObject({ mode: "all", seqsCompared: 800, rowsCompared: 800 });
  });

  it("a failing ledger fails the call with the ledger's error", async () => {
    await client!.query(`DROP TABLE ${TABLE}`);
    await expect(ledgerWithFidelity(verifier!, plan, [SENT], [[]])).rejects.toThrow(/ib_after_load/);
  });
});
