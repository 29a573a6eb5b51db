// Seq completion and run identity on a real PostgreSQL run (local-2-cores: real cgroups, namespaces, tc): a fixed
// workload whose sink drops one row (a BEFORE INSERT trigger at the sink) must wait until the drain timeout, report
// lost 1 with its range, and compute its rate over the time to the last arrival, not the timeout; a row of another
// run inserted at the sink is foreign, never throughput or a duplicate.
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { genBaseOf } from "../../core/ledger.ts";
import type { SeriesPoint } from "../../harness/results/types.ts";
import { describeRun } from "../../ui/run-block.ts";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";

const DROPPED_SEQ = 7777;

/** At the sink `s`: delete this run's row of `seq` once COPY has stored it (see the first test). */
async function dropOneAfterInsert(
  s: { host: string; port: number; params: Record<string, string> },
  seq: number,
): Promise<void> {
  const c = new pg.Client({ host: s.host, port: s.port, user: s.params.user, database: s.params.database });
  await c.connect();
  try {
    const t = s.params.table!;
    await c.query(
      `CREATE FUNCTION ib_drop_one() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM ${t} WHERE gen = NEW.gen AND seq = NEW.seq; RETURN NULL; END $$`,
    );
    await c.query(
      `CREATE TRIGGER ib_drop_one AFTER INSERT ON ${t} FOR EACH ROW WHEN (NEW.seq = ${seq} AND NEW.gen >= 256) EXECUTE FUNCTION ib_drop_one()`,
    );
  } finally {
    await c.end();
  }
}

/** The note a capped sink gets when the completion check, run with its cap lifted, found seqs missing (harness/runner/run.ts). */
const INCOMPLETE_NOTE = /^the completion wait found seqs missing with the CPU cap lifted for its check/;

describe("seq completion on a real PostgreSQL run", () => {
  it("a fixed workload with one row deleted at the sink ends at the drain timeout with lost 1, its rate over the time to the last arrival; a row of another run is foreign", async () => {
    const plan = scenarioPlan("quickstart.yaml", {
      warmup: "0s",
      duration: "60s",
      drainTimeoutMs: 3000,
      generator: { batch: 500, requests: 40 },
    });
    plan.intervalMs = 100;
    const run = newBenchRun("local-2-cores", plan);
    let prepared: Promise<void> | undefined;
    let preparedBeforeLoad: boolean | undefined;
    run.on("sink", (s: { host: string; port: number; params: Record<string, string> }) => {
      prepared = (async () => {
        const c = new pg.Client({
          host: s.host,
          port: s.port,
          user: s.params.user,
          database: s.params.database,
        });
        await c.connect();
        try {
          const t = s.params.table!;
          // the sink deletes this run's seq 7777 once its COPY has stored it (an AFTER trigger fires at the end of the
          // statement, so COPY still reports every row and the generator counts the batch acknowledged)
          await dropOneAfterInsert(s, DROPPED_SEQ);
          // a row of another run (as the previous replicate's collector would flush late)
          await c.query(
            `INSERT INTO ${t} (ts, msg, gen, seq, sent_at) VALUES (now(), 'late', $1, 3, now())`,
            [genBaseOf("20261201T000000Z-000000")],
          );
        } finally {
          await c.end();
        }
      })();
    });
    run.on("tick", () => {
      preparedBeforeLoad ??= prepared !== undefined;
    });
    const record = await run.run();
    await prepared;
    expect(preparedBeforeLoad).toBe(true);
    expect(record.error).toBeNull();
    expect(record.generator!.errors).toEqual([]);
    expect(record.generator).toMatchObject({ sent: 20_000, accepted: 20_000, requests: 40 });
    expect(record.ledger).toMatchObject({
      stored: 19_999,
      distinct: 19_999,
      lost: 1,
      duplicated: 0,
      unexpected: 0,
      foreign: 1,
      missingRanges: [[0, DROPPED_SEQ, DROPPED_SEQ]],
    });
    expect(record.status).toBe("failed"); // the quickstart's ledger.lost: 0 check
    // the wait ended at the timeout with the missing range named
    expect(record.completion).toMatchObject({
      phase: "workload",
      outcome: "timeout",
      missing: 1,
      missingRanges: [[0, DROPPED_SEQ, DROPPED_SEQ]],
    });
    expect(record.completion!.waitedMs).toBeGreaterThanOrEqual(3000);
    // the incomplete check's note only where the sink's 2-core cap is a cap: not on a machine of 2 cores or fewer
    // (docs/decisions/0008), where lifting it changed nothing
    expect((record.limits.sink!.notes ?? []).some((n) => INCOMPLETE_NOTE.test(n))).toBe(
      record.environment.cores > 2,
    );

    const series = readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as SeriesPoint);
    const measure = series.filter((p) => p.phase === "measure");
    const end = measure.at(-1)!;
    const endIdx = series.indexOf(end);
    // the window ends at the last arrival: the first sample that saw the final count, the one before it saw less
    expect(end.stored).toBe(19_999);
    expect(series[endIdx - 1]!.stored).toBeLessThan(19_999);
    expect(record.completion!.windowEndT).toBe(end.t);
    // everything after it waited for a row that never came: drain, not measure, and it lasted the timeout
    const after = series.slice(endIdx + 1);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((p) => p.phase === "drain" && p.stored === 19_999)).toBe(true);
    expect(after.at(-1)!.t - end.t).toBeGreaterThanOrEqual(2900);
    // the rate is over the time to the last arrival
    const opening = series[series.indexOf(measure[0]!) - 1]!;
    const s = record.summary!;
    expect(s.measuredSeconds * 1000).toBeCloseTo(end.t - opening.t, 0);
    expect(s.rowsPerSecond * s.measuredSeconds).toBeCloseTo(19_999 - opening.stored, 0);
    // the window error is the interval that holds the last arrival: from the query start before to the end sample's end
    const prev = series[endIdx - 1]!;
    expect(record.completion!.windowErrorMs!).toBeCloseTo(
      end.t + end.countQueryMs / 2 - (prev.t - prev.countQueryMs / 2),
      0,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("on a capped sink, a completion check that finds seqs missing says that its check ran with the cap lifted (local-quarter-core)", async () => {
    const plan = scenarioPlan("quickstart.yaml", {
      warmup: "0s",
      duration: "60s",
      drainTimeoutMs: 2000,
      generator: { batch: 500, requests: 10 },
    });
    plan.intervalMs = 100;
    const run = newBenchRun("local-quarter-core", plan);
    let prepared: Promise<void> | undefined;
    run.on("sink", (s: { host: string; port: number; params: Record<string, string> }) => {
      prepared = dropOneAfterInsert(s, 777);
    });
    const record = await run.run();
    await prepared;
    expect(record.error).toBeNull();
    expect(record.completion).toMatchObject({
      phase: "workload",
      outcome: "timeout",
      missing: 1,
      missingRanges: [[0, 777, 777]],
    });
    expect(record.ledger).toMatchObject({ stored: 4_999, lost: 1 });
    const notes = record.limits.sink!.notes ?? [];
    expect(notes.filter((n) => INCOMPLETE_NOTE.test(n))).toHaveLength(1);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("a fixed workload all sent inside its warmup, partly stored by the warmup's last sample, says that its window is not the workload's (and one whose window holds it all does not)", async () => {
    const plan = scenarioPlan("quickstart.yaml", {
      warmup: "5s",
      duration: "60s",
      drainTimeoutMs: 3000,
      generator: { batch: 500, requests: 200 },
    });
    plan.intervalMs = 100;
    const run = newBenchRun("local-2-cores", plan);
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.ledger).toMatchObject({ sent: 100_000, stored: 100_000, lost: 0 });
    const series = readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as SeriesPoint);
    const opening = series[series.findIndex((p) => p.phase === "measure") - 1]!;
    expect(opening.phase).toBe("warmup");
    // the warmup's last sample saw part of the workload: the window holds only the rest
    expect(opening.stored).toBeGreaterThan(0);
    expect(record.summary!.shortWindow).toBe(
      `the fixed workload was all sent ${record.summary!.shortWindow!.match(/sent (\d+\.\d) s/)![1]} s after the start, inside the 5.0 s warmup: the window is only from the warmup's last sample (${opening.stored} rows already stored) to the end, not the whole workload (set warmup: 0s, or raise requests)`,
    );
    expect(describeRun(record)).toContain(`\n  !! ${record.summary!.shortWindow}\n`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);

    // sampled once a second, the warmup's only sample (at the start) saw none of it: the window holds it all
    const small = scenarioPlan("quickstart.yaml", {
      warmup: "5s",
      duration: "60s",
      drainTimeoutMs: 3000,
      generator: { batch: 500, requests: 10 },
    });
    small.intervalMs = 1000;
    const whole = await newBenchRun("local-2-cores", small).run();
    expect(whole.ledger).toMatchObject({ sent: 5_000, stored: 5_000, lost: 0 });
    expect(whole.summary!.shortWindow).toBeUndefined();
  });

  it("rows stored though their batch was rejected are reported as rejectedStored, not lost, and do not end the wait early", async () => {
    const plan = scenarioPlan("quickstart.yaml", {
      warmup: "0s",
      duration: "60s",
      drainTimeoutMs: 3000,
      generator: { batch: 500, requests: 40 },
    });
    plan.intervalMs = 100;
    const run = newBenchRun("local-2-cores", plan);
    let prepared: Promise<void> | undefined;
    run.on("sink", (s: { host: string; port: number; params: Record<string, string> }) => {
      prepared = (async () => {
        const c = new pg.Client({
          host: s.host,
          port: s.port,
          user: s.params.user,
          database: s.params.database,
        });
        await c.connect();
        try {
          // the sink skips seq 7777 on arrival: COPY then stores 499 rows of its 500 and pg-copy rejects the batch
          await c.query(
            `CREATE FUNCTION ib_skip_one() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
          );
          await c.query(
            `CREATE TRIGGER ib_skip_one BEFORE INSERT ON ${s.params.table!} FOR EACH ROW WHEN (NEW.seq = ${DROPPED_SEQ}) EXECUTE FUNCTION ib_skip_one()`,
          );
        } finally {
          await c.end();
        }
      })();
    });
    const record = await run.run();
    await prepared;
    expect(record.error).toBeNull();
    expect(record.generator).toMatchObject({
      sent: 20_000,
      accepted: 19_500,
      rejected: 500,
      rejectedRanges: [[7500, 7999]],
    });
    expect(record.ledger).toMatchObject({
      stored: 19_999,
      lost: 0,
      rejected: 500,
      rejectedStored: 499,
      duplicated: 0,
      foreign: 0,
      missingRanges: [],
    });
    expect(record.completion).toMatchObject({ phase: "workload", outcome: "complete", missing: 0 });
    // complete with every acknowledged seq stored: the wait ended well before the timeout
    expect(record.completion!.waitedMs).toBeLessThan(3000);
    expect(record.summary!.shortWindow).toBeUndefined(); // no warmup: the window is the workload's
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("ClickHouse: a fixed workload ends at the sample that saw it complete; a row of another run is foreign 1 (real ClickHouse 18.16)", async () => {
    const plan = scenarioPlan("clickhouse-direct.yaml", {
      warmup: "0s",
      duration: "60s",
      drainTimeoutMs: 5000,
      generator: { batch: 500, requests: 40 },
    });
    plan.intervalMs = 100;
    const run = newBenchRun("local-2-cores", plan);
    let inserted: Promise<void> | undefined;
    run.on("sink", (s: { host: string; port: number; params: Record<string, string> }) => {
      inserted = (async () => {
        // one row of another run (the scenario's fields take their defaults)
        const r = await fetch(`http://${s.host}:${s.port}/`, {
          method: "POST",
          body: `INSERT INTO ${s.params.table} (gen, seq, sent_at) VALUES (${genBaseOf("20261201T000000Z-000000")}, 3, ${Date.now()})`,
        });
        if (r.status !== 200) throw new Error(await r.text());
      })();
    });
    const record = await run.run();
    await inserted;
    expect(record.error).toBeNull();
    expect(
      record.status,
      JSON.stringify({ checks: record.checks, ledger: record.ledger, completion: record.completion }),
    ).toBe("ok");
    expect(record.generator).toMatchObject({ sent: 20_000, accepted: 20_000, requests: 40 });
    expect(record.ledger).toMatchObject({
      stored: 20_000,
      distinct: 20_000,
      lost: 0,
      duplicated: 0,
      unexpected: 0,
      foreign: 1,
    });
    expect(record.completion).toMatchObject({ phase: "workload", outcome: "complete", missing: 0 });
    const series = readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as SeriesPoint);
    const measure = series.filter((p) => p.phase === "measure");
    const end = measure.at(-1)!;
    // the foreign row is in no sample: the window ends at the first sample with exactly the workload
    expect(end.stored).toBe(20_000);
    expect(measure.slice(0, -1).every((p) => p.stored < 20_000)).toBe(true);
    expect(record.completion!.windowEndT).toBe(end.t);
    expect(record.completion!.windowErrorMs!).toBeGreaterThan(0);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
