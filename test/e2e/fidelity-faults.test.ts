// The content check against real runs into real PostgreSQL and real ClickHouse 18.16: after the drain and before the
// ledger (the runner's test-only `beforeLedger` hook), the test injects seeded faults at the sink — one row deleted,
// one row's text altered, one row's timestamp moved by one hour, one row of another run inserted (gen 7: outside
// every run's generator-id space, core/ledger.ts "Run identity"), one row duplicated — and the run must report
// exactly lost 1, altered 2 (both alterations among its examples), foreign 1, duplicated 1, and fail its checks. A
// clean run reports altered 0 having compared every row (PostgreSQL) or a seeded sample (ClickHouse, `fidelity.all: 0`).
// The run has one generator: every row of this run has the same gen (genBase + 0), so the faults select by seq.
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { FidelityResult } from "../../core/fidelity.ts";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import type { CellPlan } from "../../harness/runner/cell-plan.ts";
import type { RunRecord } from "../../harness/results/types.ts";
import { newBenchRun, projectRoot, quickstartPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";

type Sink = { host: string; port: number; params: Record<string, string> };

/** The seqs (generator 0) the faults hit. */
const DELETED = 101;
const TEXT_ALTERED = 202;
const TIME_MOVED = 303;
const DUPLICATED = 404;
const FOREIGN_COPY = 505;
/** The gen of the inserted row of "another run" (gens 0..255 are nobody's run, core/ledger.ts genBaseOf). */
const FOREIGN_GEN = 7;

function clickhousePlan(): CellPlan {
  const file = path.join(projectRoot, "scenarios/clickhouse-direct.yaml");
  const plan = planCells(loadScenarioFile(file), file, { warmup: "0s", duration: "3s", replicates: 1 })[0]!;
  plan.drainTimeoutMs = 10_000;
  return paced(plan);
}

function shortQuickstart(): CellPlan {
  return paced(quickstartPlan({ warmup: "0s", duration: "3s", drainTimeoutMs: 10_000 }));
}

/** At 10000 rows/s (about 30000 rows): what is checked is every row's content, not how many a closed loop made. */
function paced(plan: CellPlan): CellPlan {
  plan.generator = { ...plan.generator, config: { ...plan.generator.config, batch: 1000, rate: 10_000 } };
  return plan;
}

async function pgFaults(s: Sink): Promise<void> {
  const c = new pg.Client({ host: s.host, port: s.port, user: s.params.user, database: s.params.database });
  await c.connect();
  try {
    const t = s.params.table;
    const one = async (sql: string): Promise<void> => {
      const r = await c.query(sql);
      expect(r.rowCount, sql).toBe(1);
    };
    await one(`DELETE FROM ${t} WHERE seq = ${DELETED}`);
    await one(`UPDATE ${t} SET msg = msg || 'x' WHERE seq = ${TEXT_ALTERED}`);
    await one(`UPDATE ${t} SET ts = ts + interval '1 hour' WHERE seq = ${TIME_MOVED}`);
    await one(
      `INSERT INTO ${t} SELECT ts, msg, ${FOREIGN_GEN}, seq, sent_at FROM ${t} WHERE seq = ${FOREIGN_COPY}`,
    );
    await one(`INSERT INTO ${t} SELECT * FROM ${t} WHERE seq = ${DUPLICATED} AND gen <> ${FOREIGN_GEN}`);
  } finally {
    await c.end();
  }
}

async function clickhouseFaults(s: Sink): Promise<void> {
  const q = async (sql: string): Promise<string> => {
    const r = await fetch(`http://${s.host}:${s.port}/`, { method: "POST", body: sql });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${sql}: ${text}`);
    return text;
  };
  const t = s.params.table;
  await q(`INSERT INTO ${t} SELECT * FROM ${t} WHERE seq = ${DUPLICATED}`);
  await q(
    `INSERT INTO ${t} (ts, msg, gen, seq, sent_at) SELECT ts, msg, toUInt32(${FOREIGN_GEN}), seq, sent_at FROM ${t} WHERE seq = ${FOREIGN_COPY}`,
  );
  // mutations (ClickHouse ≥ 18.12) rewrite parts asynchronously: wait until none is pending
  await q(`ALTER TABLE ${t} DELETE WHERE seq = ${DELETED}`);
  await q(
    `ALTER TABLE ${t} UPDATE msg = concat(msg, 'x') WHERE seq = ${TEXT_ALTERED} AND gen <> ${FOREIGN_GEN}`,
  );
  await q(`ALTER TABLE ${t} UPDATE ts = ts + 3600000 WHERE seq = ${TIME_MOVED} AND gen <> ${FOREIGN_GEN}`);
  for (
    let i = 0;
    i < 200 && (await q("SELECT count() FROM system.mutations WHERE NOT is_done")).trim() !== "0";
    i++
  ) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect((await q("SELECT count() FROM system.mutations WHERE NOT is_done")).trim()).toBe("0");
  expect(
    (
      await q(
        `SELECT count() FROM ${t} WHERE seq IN (${DELETED}, ${TEXT_ALTERED}, ${TIME_MOVED}, ${DUPLICATED}, ${FOREIGN_COPY})`,
      )
    ).trim(),
  ).toBe("6");
}

function fidelityOf(record: RunRecord): FidelityResult {
  const f = record.ledger!.fidelity!;
  if ("unavailable" in f) throw new Error(f.unavailable);
  return f;
}

/** The faults' verdict: exactly lost 1, altered 2 with both examples, foreign 1, duplicated 1; the run fails. */
function expectFaultsFound(record: RunRecord, precision: { moved: [string, string] }): void {
  expect(record.error).toBeNull();
  expect(record.ledger).toMatchObject({
    lost: 1,
    altered: 2,
    foreign: 1,
    duplicated: 1,
    unexpected: 0,
    missingRanges: [[0, DELETED, DELETED]],
  });
  const f = fidelityOf(record);
  expect(f.mode).toBe("all");
  expect(f.rowsCompared).toBe(record.ledger!.stored);
  expect(f.seqsCompared).toBe(record.ledger!.distinct);
  expect(f.alteredByField).toEqual({ msg: 1, ts: 1 });
  expect(f.examples).toHaveLength(2);
  const [text, moved] = f.examples;
  expect(text).toMatchObject({ gen: 0, seq: TEXT_ALTERED, field: "msg" });
  // the 180 sent bytes, and the stored 181 with an x appended: shown around the first difference, byte 180
  expect(text!.expected).toMatch(/^…".{24}" \(180 bytes, first difference at byte 180\)$/);
  expect(text!.stored).toBe(`${text!.expected.replace(/" \(180 bytes/, 'x" (181 bytes')}`);
  expect(moved).toMatchObject({
    gen: 0,
    seq: TIME_MOVED,
    field: "ts",
    expected: precision.moved[0],
    stored: precision.moved[1],
  });
  expect(f.notCompared.map((n) => n.field)).toEqual(["gen, seq", "sent_at"]);
  expect(record.status).toBe("failed");
  expect(record.checks.find((c) => c.check === "ledger.altered")).toMatchObject({ ok: false, actual: 2 });
  expect(record.checks.find((c) => c.check === "ledger.lost")).toMatchObject({ ok: false, actual: 1 });
  expect(leftovers(record.runId.slice(-6))).toEqual([]);
}

/** ts of seq k is 2024-11-07T00:00:00Z + k ms (core/events/source.ts BASE_EPOCH_MS). */
const tsOf = (seq: number, hours = 0): Date => new Date(Date.UTC(2024, 10, 7) + seq + hours * 3_600_000);

describe("content fidelity on real sinks (seeded faults injected after the drain, before the ledger)", () => {
  it("PostgreSQL: one deleted, one text altered, one timestamp moved 1 h, one of another run, one duplicated → lost 1, altered 2, foreign 1, duplicated 1", async () => {
    const record = await newBenchRun("local-2-cores", shortQuickstart(), undefined, {
      beforeLedger: pgFaults,
    }).run();
    // timestamptz keeps microseconds
    const us = (d: Date): string => `${d.toISOString().slice(0, 23)}000Z`;
    expectFaultsFound(record, { moved: [us(tsOf(TIME_MOVED)), us(tsOf(TIME_MOVED, 1))] });
  });

  it("ClickHouse 18.16: the same faults → lost 1, altered 2, foreign 1, duplicated 1", async () => {
    const record = await newBenchRun("local-2-cores", clickhousePlan(), undefined, {
      beforeLedger: clickhouseFaults,
    }).run();
    // UInt64 epoch milliseconds
    expectFaultsFound(record, { moved: [tsOf(TIME_MOVED).toISOString(), tsOf(TIME_MOVED, 1).toISOString()] });
  });

  it("a clean PostgreSQL run compares every stored row and reports altered 0", async () => {
    const record = await newBenchRun("local-2-cores", shortQuickstart()).run();
    expect(record.status).toBe("ok");
    expect(record.ledger).toMatchObject({ lost: 0, duplicated: 0, altered: 0 });
    const f = fidelityOf(record);
    expect(f).toMatchObject({ mode: "all", altered: 0, examples: [], rowsCompared: record.ledger!.stored });
    expect(f.compared.map((c) => c.field)).toEqual(["ts", "msg"]);
    console.log(`content check on PostgreSQL: ${f.rowsCompared} rows compared in ${f.seconds} s`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("a clean ClickHouse run beyond `fidelity.all` compares a seeded sample and reports altered 0 with the sample's size", async () => {
    const plan = clickhousePlan();
    plan.fidelity = { all: 0, sample: 2000 };
    const record = await newBenchRun("local-2-cores", plan).run();
    expect(record.status).toBe("ok");
    expect(record.ledger).toMatchObject({ lost: 0, altered: 0 });
    const f = fidelityOf(record);
    expect(f).toMatchObject({
      mode: "sample",
      sampleSize: 2000,
      seqsCompared: 2000,
      rowsCompared: 2000,
      altered: 0,
    });
    console.log(
      `content check on ClickHouse: a sample of ${f.sampleSize} seqs of ${record.ledger!.stored} rows in ${f.seconds} s`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
