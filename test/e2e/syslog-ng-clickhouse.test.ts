// A real collector pipeline into a real columnar database on the local platform: the syslog generator (loadgen host)
// → syslog-ng 3.38's http() destination (collector host) → ClickHouse 18.16.1 (sink host), one JSONEachRow INSERT
// per batch, three network namespaces joined by a bridge, each host in its own cgroup. One cell of
// scenarios/syslog-ng-clickhouse-batch-sweep.yaml, shortened. The ledger must be exact on a clean run, name exactly
// the missing seqs when the test kills the collector mid-run, and exactly the seqs the test deletes at the sink; the
// test reads the table over ClickHouse's HTTP interface itself to check the verifier's account.
import { describe, expect, it } from "vitest";
import type { CellPlan } from "../../harness/runner/cell-plan.ts";
import { probeSyslogNgVersion } from "../../plugins/collectors/syslog-ng/component.ts";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import {
  expectCleanRun,
  expectDuplicatesCounted,
  expectLedgerNamesExactlyTheAbsentSeqs,
  expectWithinOffer,
  runKillingCollector,
  type SinkInfo,
} from "../helpers/pipeline-ledger.ts";

const STACK = "local-pipeline";
const CELL = "batch-lines=1000,workers=2";

/** The sweep's cell CELL, with a short warmup and measurement (and, with `rate`, a fixed generator rate instead of max). */
function sweepPlan(o: { drainTimeoutMs?: number; rate?: number; duplicateEvery?: number } = {}): CellPlan {
  const generator = {
    ...(o.rate !== undefined ? { rate: o.rate } : {}),
    ...(o.duplicateEvery !== undefined ? { duplicateEvery: o.duplicateEvery } : {}),
  };
  return scenarioPlan("syslog-ng-clickhouse-batch-sweep.yaml", {
    warmup: "1s",
    duration: "5s",
    cell: CELL,
    drainTimeoutMs: o.drainTimeoutMs,
    ...(Object.keys(generator).length ? { generator } : {}),
  });
}

/** One statement over ClickHouse's HTTP interface (the control link); the answer text. Throws on a non-200. */
async function chQuery(s: SinkInfo, sql: string): Promise<string> {
  const host = s.host.includes(":") ? `[${s.host}]` : s.host;
  const r = await fetch(
    `http://${host}:${s.port}/?database=${encodeURIComponent(s.params.database ?? "default")}`,
    { method: "POST", body: sql },
  );
  const text = await r.text();
  if (r.status !== 200) throw new Error(`ClickHouse refused ${sql}: HTTP ${r.status} ${text}`);
  return text;
}

/** Every seq stored in the sink's table, read by the test itself. */
async function storedSeqs(s: SinkInfo): Promise<Set<number>> {
  const text = await chQuery(s, `SELECT seq FROM ${s.params.table} FORMAT TabSeparated`);
  return new Set(text.split("\n").filter(Boolean).map(Number));
}

describe("syslog-ng http() → ClickHouse pipeline (real syslog-ng 3.38, real ClickHouse 18.16.1)", () => {
  it("stores every event exactly once: lost 0, duplicated 0, the collector's claims beside the ledger", async () => {
    // a fixed rate below the pipeline's capacity keeps the drain short (at max, syslog-ng's queue and the socket
    // buffers hold many seconds of events when the generator stops)
    const run = newBenchRun(STACK, sweepPlan({ rate: 8000 }));
    const record = await run.run();
    const l = expectCleanRun(record);
    // at most 8000 events/s over the time it ran: fewer when TCP pushes back or the machine is busy (not asserted)
    expectWithinOffer(run, record, { rate: 8000, batch: 500, connections: 4 }); // scenarios/syslog-ng-clickhouse-batch-sweep.yaml
    expect(record.versions["syslog-ng"]).toEqual({ pinned: "3.38", running: await probeSyslogNgVersion() });
    expect(record.versions.clickhouse).toEqual({ pinned: "18.16.1", running: "18.16.1" });
    expect(record.collectorClaims).toEqual({
      name: "syslog-ng",
      counts: { received: l.sent, written: l.stored, dropped: 0, queued: 0 },
    });
    // ClickHouse's own account: one INSERT per batch of at most batch-lines (1000) rows
    const server = (l as unknown as { server: { insertQueries: number; insertedRows: number } }).server;
    expect(server.insertedRows).toBe(l.stored);
    expect(server.insertQueries).toBeGreaterThanOrEqual(Math.ceil(l.stored / 1000));
    console.log(
      `syslog-ng-clickhouse ${CELL}: ${record.summary!.rowsPerSecond.toFixed(0)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, ` +
        `${server.insertQueries} inserts (${(server.insertedRows / server.insertQueries).toFixed(0)} rows each), lag p99 ${record.summary!.lagP99Ms?.toFixed(0)} ms, ` +
        `drain ${record.summary!.drainSeconds.toFixed(2)} s; bottleneck ${record.summary!.bottleneck.resource} (${record.summary!.bottleneck.evidence})`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the missing seqs when the collector is killed (SIGKILL) mid-run", async () => {
    // what syslog-ng held (its queue, its batches in the making, its socket buffers) is gone: lost, and named
    const { record } = await runKillingCollector(newBenchRun(STACK, sweepPlan({ drainTimeoutMs: 3000 })), {
      killAtStored: 10_000,
      readSeqs: storedSeqs,
      label: "syslog-ng",
    });
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the seqs deleted at the sink mid-run (ALTER TABLE … DELETE, mutation awaited)", async () => {
    // a fixed rate well below the pipeline's capacity: the collector has flushed everything within the short drain
    // (which cannot end early: stored never reaches accepted again)
    const run = newBenchRun(STACK, sweepPlan({ rate: 8000, drainTimeoutMs: 4000 }));
    let sink: SinkInfo | undefined;
    let deleting: Promise<boolean> | undefined;
    let deleted = false;
    let snapshot: Promise<Set<number>> | undefined;
    run.on("sink", (s: SinkInfo) => {
      sink = s;
    });
    run.on("tick", (p: { stored: number; phase: string }) => {
      // every drain sample reads the table; the last one is the final table (checked against the ledger below)
      if (p.phase === "drain" && deleted && sink) snapshot = storedSeqs(sink);
      if (deleted || deleting || p.phase !== "measure" || p.stored < 12_000 || !sink) return;
      const s = sink;
      deleting = (async () => {
        // the 4 connections and 2 workers interleave seqs: delete only once every seq up to 10000 is stored
        if ((await chQuery(s, `SELECT count() FROM ${s.params.table} WHERE seq <= 10000`)).trim() !== "10001")
          return false;
        // ClickHouse 18.16 runs a DELETE as an asynchronous mutation of the parts that exist now (rows inserted
        // later are not touched): wait until system.mutations reports it done
        await chQuery(
          s,
          `ALTER TABLE ${s.params.table} DELETE WHERE (seq BETWEEN 1000 AND 1099) OR seq = 10000`,
        );
        for (let i = 0; i < 100; i++) {
          if ((await chQuery(s, "SELECT count() FROM system.mutations WHERE NOT is_done")).trim() === "0")
            return true;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error("the DELETE mutation did not finish in 10 s");
      })().then((ok) => {
        deleted = ok;
        deleting = undefined;
        return ok;
      });
    });
    const record = await run.run();
    await deleting;
    expect(deleted).toBe(true);
    expect(snapshot).toBeDefined();
    const present = await snapshot!;
    expect(record.status).toBe("failed");
    expect(record.ledger).toMatchObject({ lost: 101, duplicated: 0, unexpected: 0, rejected: 0 });
    expect(record.ledger!.missingRanges).toEqual([
      [0, 1000, 1099],
      [0, 10000, 10000],
    ]);
    expect(expectLedgerNamesExactlyTheAbsentSeqs(record, present)).toBe(101);
    // the collector wrote everything it received; the sink lost the deleted rows
    expect(record.collectorClaims).toMatchObject({
      counts: { received: record.ledger!.sent, written: record.ledger!.sent, dropped: 0, queued: 0 },
    });
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports a batch the client deliberately sends twice as duplicated rows through syslog-ng into ClickHouse, not as throughput", async () => {
    const record = await newBenchRun(
      STACK,
      sweepPlan({ rate: 20_000, duplicateEvery: 20, drainTimeoutMs: 20_000 }),
    ).run();
    expectDuplicatesCounted(record);
    expect(record.collectorClaims!.counts!.received).toBe(
      record.generator!.sent + record.generator!.repeated!,
    ); // syslog-ng saw every copy
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
