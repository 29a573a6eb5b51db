// The collector's own load on the local platform (`generator: none`): real syslog-ng 3.38's example-msg-generator()
// (collector host) makes the events, sql() writes them into real PostgreSQL (sink host); no generator process runs.
// scenarios/syslog-ng-example-msg-generator.yaml with fewer ticks (1000, 1 ms apart). The ledger must be exact with
// `sent` inferred from syslog-ng's own counter and marked so; the test reads the table itself to check that every
// stored row carries this run's gen, that the seqs are exactly 0 .. made − 1 once each, and that sent_at is set.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { expectCleanRun, readSeries, type SinkInfo } from "../helpers/pipeline-ledger.ts";

const STACK = "local-pipeline";
// scenarios/syslog-ng-example-msg-generator.yaml with fewer ticks (its 1 ms ticks take about 2 ms on a busy 2-core
// machine): a few seconds of load
const NUM = 1000;

/** What the test reads from the sink's table itself: rows, distinct gens and seqs, the seq range, rows without sent_at. */
async function tableAccount(s: SinkInfo): Promise<{
  rows: number;
  gens: number[];
  distinctSeqs: number;
  minSeq: number;
  maxSeq: number;
  noSentAt: number;
}> {
  const c = new pg.Client({ host: s.host, port: s.port, user: s.params.user, database: s.params.database });
  await c.connect();
  try {
    const r = await c.query<{
      rows: string;
      distinct_seqs: string;
      min_seq: string;
      max_seq: string;
      no_sent_at: string;
    }>(
      `SELECT count(*) AS rows, count(DISTINCT seq) AS distinct_seqs, min(seq) AS min_seq, max(seq) AS max_seq, count(*) FILTER (WHERE sent_at IS NULL) AS no_sent_at FROM ${s.params.table}`,
    );
    const g = await c.query<{ gen: number }>(`SELECT DISTINCT gen FROM ${s.params.table} ORDER BY gen`);
    const x = r.rows[0]!;
    return {
      rows: Number(x.rows),
      gens: g.rows.map((y) => y.gen),
      distinctSeqs: Number(x.distinct_seqs),
      minSeq: Number(x.min_seq),
      maxSeq: Number(x.max_seq),
      noSentAt: Number(x.no_sent_at),
    };
  } finally {
    await c.end();
  }
}

describe("generator: none — syslog-ng's example-msg-generator() → PostgreSQL (real syslog-ng 3.38, real PostgreSQL)", () => {
  it("keeps an exact ledger whose sent is inferred from syslog-ng's own counter and the seq range, and says so", async () => {
    let account: Awaited<ReturnType<typeof tableAccount>> | undefined;
    const plan = scenarioPlan("syslog-ng-example-msg-generator.yaml", { warmup: "1s", duration: "2s" });
    plan.collector!.config = {
      ...plan.collector!.config,
      "example-msg-generator": { num: NUM, freq: 0.001 },
    };
    const run = newBenchRun(STACK, plan, undefined, {
      beforeLedger: async (s) => {
        account = await tableAccount(s);
      },
    });
    const record = await run.run();
    const l = expectCleanRun(record);
    // sent is what syslog-ng says its generator made: at most num (a tick with a full source window makes none)
    const made = record.collectorClaims!.counts!.generated!;
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(NUM);
    expect(l.sent).toBe(made);
    expect(l.inferred).toEqual({
      from: "collector",
      by: "syslog-ng example-msg-generator()",
      counter: "syslog-ng-ctl stats: source s_gen processed (the messages example-msg-generator() made)",
      made: [made],
      outsideRange: 0,
    });
    // the generator's final report is the counter too: no receiver acknowledged anything, nothing was rejected
    expect(record.generator).toMatchObject({ sent: made, accepted: made, rejected: 0, errors: [] });
    // the table, read by the test: this run's gen only, seqs exactly 0 .. made − 1 once each, every row stamped
    expect(account).toEqual({
      rows: made,
      gens: [record.genBase],
      distinctSeqs: made,
      minSeq: 0,
      maxSeq: made - 1,
      noSentAt: 0,
    });
    // the syslog() source had no sender; everything made was written, nothing dropped or left queued
    expect(record.collectorClaims!.counts).toMatchObject({
      received: 0,
      written: made,
      dropped: 0,
      queued: 0,
    });
    // the content is not compared, and the result says why and what was checked instead
    expect(l.altered).toBeUndefined();
    expect(l.fidelity).toEqual({
      unavailable: expect.stringMatching(
        /made by syslog-ng's example-msg-generator\(\), not by a seeded generator.*gen and seq/,
      ),
    });
    expect(record.clock).toMatchObject({ measured: false });
    // the series' sent never decreases and ends at the counter
    const series = readSeries(run);
    const sent = series.map((p) => p.sent);
    expect(sent.every((v, i) => i === 0 || v >= sent[i - 1]!)).toBe(true);
    expect(sent.at(-1)).toBe(made);
    // the harness sent no bytes: MiB/s is unknown in every point (settled after the load too) and in the summary
    expect(series.map((p) => p.mibPerSec)).toEqual(series.map(() => null));
    expect(record.summary!.mibPerSecond).toBeNull();
    // the sink's own stored_at against the collector's sent_at, for every row
    expect(record.summary!.deliveryLatency).toMatchObject({ rows: expect.any(Number) });
    console.log(
      `syslog-ng example-msg-generator: made ${made} of ${NUM} ticks, stored ${l.stored}, ${record.summary!.rowsPerSecond.toFixed(0)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, drain ${record.summary!.drainSeconds.toFixed(2)} s; bottleneck ${record.summary!.bottleneck.resource}`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
