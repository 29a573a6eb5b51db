/**
 * For the collector pipeline tests (a collector killed mid-run): kill it, read the seqs the sink holds (PostgreSQL
 * directly over `pg`, or a reader the test gives), and check the run's ledger against them, independently of the
 * verifier's own SQL.
 */
import { passwordOption } from "../../core/secrets.ts";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { expect } from "vitest";
import type { RunRecord, SeriesPoint } from "../../harness/results/types.ts";
import type { BenchRun } from "../../harness/runner/run.ts";
import type { RunningComponent } from "../../core/component.ts";

/** Where the harness reaches the sink (the run's "sink" event). */
export interface SinkInfo {
  host: string;
  port: number;
  params: Record<string, string>;
}

/** Every seq stored in the sink's table (`params.table`), as a set. */
export async function readStoredSeqs(s: SinkInfo): Promise<Set<number>> {
  // INGESTBENCH_POSTGRES_PASSWORD when the sink has one (core/secrets.ts), as the verifier connects
  const c = new pg.Client({
    host: s.host,
    port: s.port,
    user: s.params.user,
    database: s.params.database,
    ...passwordOption("postgres"),
  });
  await c.connect();
  try {
    const r = await c.query<{ seq: string }>(`SELECT seq FROM ${s.params.table}`);
    return new Set(r.rows.map((x) => Number(x.seq)));
  } finally {
    await c.end();
  }
}

/**
 * How many sequential scans PostgreSQL has started on the sink's table (pg_stat_user_tables.seq_scan: each count(*),
 * ledger or completion pass is one; the live samples' TID range scans and ANALYZE's sampling are not), once the
 * count has reached `atLeast` and held for 1.5 s: a backend reports its counters when its transaction ends, at most
 * once a second, an idle one within a second (PostgreSQL's pgstat_report_stat), so they are read until they settle
 * (at most 15 s).
 */
export async function tableSeqScans(s: SinkInfo, atLeast: number): Promise<number> {
  const c = new pg.Client({
    host: s.host,
    port: s.port,
    user: s.params.user,
    database: s.params.database,
    ...passwordOption("postgres"),
  });
  await c.connect();
  try {
    const read = async (): Promise<number> =>
      Number(
        (
          await c.query<{ n: string }>(
            "SELECT seq_scan::text AS n FROM pg_stat_user_tables WHERE relid = $1::regclass",
            [s.params.table],
          )
        ).rows[0]?.n ?? -1,
      );
    const until = Date.now() + 15_000;
    let n = await read();
    let since = Date.now();
    while (Date.now() < until && (n < atLeast || Date.now() - since < 1500)) {
      await new Promise((r) => setTimeout(r, 250));
      const m = await read();
      if (m !== n) [n, since] = [m, Date.now()];
    }
    return n;
  } finally {
    await c.end();
  }
}

/** Inclusive runs of the seqs in [0, sent) that are not in `present`. */
export function absentRanges(present: ReadonlySet<number>, sent: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let s = 0; s < sent; s++) {
    if (present.has(s)) continue;
    const last = out.at(-1);
    if (last && last[1] === s - 1) last[1] = s;
    else out.push([s, s]);
  }
  return out;
}

/**
 * Assert that the ledger of a one-generator run names exactly the seqs absent from `present` (the final table):
 * stored = |present|, nothing duplicated or unexpected, rejected = the generator's rejected ranges, and lost and
 * missingRanges (the first 20 runs, [gen 0, from, to]) = the absent seqs that were not rejected.
 * @returns the number of lost seqs
 */
export function expectLedgerNamesExactlyTheAbsentSeqs(
  record: RunRecord,
  present: ReadonlySet<number>,
): number {
  const l = record.ledger!;
  expect(l.stored).toBe(present.size);
  expect(l).toMatchObject({ duplicated: 0, unexpected: 0 });
  const rejected = new Set<number>();
  for (const [a, b] of record.generator!.rejectedRanges) for (let s = a; s <= b; s++) rejected.add(s);
  expect(l.rejected).toBe(rejected.size);
  const absentCount = absentRanges(present, l.sent).reduce((n, [a, b]) => n + b - a + 1, 0);
  expect(absentCount).toBe(l.sent - l.stored);
  const lostRanges = absentRanges(new Set([...present, ...rejected]), l.sent);
  expect(l.lost).toBe(lostRanges.reduce((n, [a, b]) => n + b - a + 1, 0));
  expect(l.lost + [...rejected].filter((s) => !present.has(s)).length).toBe(l.sent - l.stored);
  expect(l.missingRanges).toEqual(lostRanges.slice(0, 20).map(([a, b]) => [0, a, b]));
  return l.lost;
}

/**
 * Assert a clean run: no error, status ok, and an exact ledger — nothing lost, duplicated, unexpected or rejected,
 * no missing range, stored = sent.
 * @returns the ledger
 */
export function expectCleanRun(record: RunRecord): NonNullable<RunRecord["ledger"]> {
  expect(record.error).toBeNull();
  expect(record.status).toBe("ok");
  const l = record.ledger!;
  expect(l).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, rejected: 0, missingRanges: [] });
  expect(l.stored).toBe(l.sent);
  return l;
}

/**
 * Assert a run refused before any load because the collector's pin `pinned` does not match the installed version
 * `installed`: status error, E_VERSION (a verification error) naming both versions, no generator ever started.
 */
export function expectPinRefusal(record: RunRecord, pinned: string, installed: string): void {
  expect(record.status).toBe("error");
  expect(record.error).toMatchObject({ code: "E_VERSION", kind: "verification" });
  expect(record.error!.message).toContain(pinned);
  expect(record.error!.message).toContain(installed);
  expect(record.generator).toBeNull(); // no load was ever started
}

/** How runKillingCollector kills and reads. */
export interface KillCollectorOptions {
  /** SIGKILL the collector at the first measurement sample with at least this many rows stored */
  killAtStored: number;
  /** every seq the sink's table holds; default readStoredSeqs (PostgreSQL) */
  readSeqs?: (s: SinkInfo) => Promise<Set<number>>;
  /** the collector's name in the logged account, e.g. "rsyslogd" */
  label: string;
}

/**
 * Run `run`, SIGKILL its collector (the "collector" event's pid) once the sink holds `killAtStored` rows during
 * measurement, and at the first drain sample (the collector dead, the generator stopped: the table no longer changes)
 * read every stored seq. Asserts what every such run must show: the kill happened, the final table was read, stored ≥
 * the count at the kill, and the ledger names exactly the absent seqs
 * (expectLedgerNamesExactlyTheAbsentSeqs): what the collector held (queues, batches in the making, socket buffers) as
 * lost, what its dead socket refused as rejected; the run fails (the scenario's lost: 0 check) exactly when some were lost.
 * @returns the record, the stored count at the kill and the seqs present in the final table
 */
export async function runKillingCollector(
  run: BenchRun,
  o: KillCollectorOptions,
): Promise<{ record: RunRecord; killedAt: number; present: Set<number> }> {
  const readSeqs = o.readSeqs ?? readStoredSeqs;
  let sink: SinkInfo | undefined;
  let collector: RunningComponent | undefined;
  let killedAt: number | undefined;
  let snapshot: Promise<Set<number>> | undefined;
  run.on("sink", (s: SinkInfo) => {
    sink = s;
  });
  run.on("collector", (c: RunningComponent) => {
    collector = c;
  });
  run.on("tick", (p: { stored: number; phase: string }) => {
    if (killedAt === undefined && p.phase === "measure" && p.stored >= o.killAtStored && collector?.pid) {
      killedAt = p.stored;
      process.kill(collector.pid, "SIGKILL");
    }
    if (p.phase === "drain" && killedAt !== undefined && !snapshot && sink) snapshot = readSeqs(sink);
  });
  const record = await run.run();
  expect(killedAt).toBeDefined();
  expect(snapshot).toBeDefined();
  const present = await snapshot!;
  expect(record.ledger!.stored).toBeGreaterThanOrEqual(killedAt!);
  const lost = expectLedgerNamesExactlyTheAbsentSeqs(record, present);
  const l = record.ledger!;
  // what is missing was held by the collector when it died (lost) or refused by its dead socket (rejected). A kill
  // right after a commit, with nothing in flight and no write attempted before the run stopped, misses nothing: the
  // ledger must then say exactly that (a heavily loaded machine makes this rare case likelier).
  if (l.sent === l.stored)
    expect({ lost: l.lost, missing: l.missingRanges.length }).toEqual({ lost: 0, missing: 0 });
  expect(record.status).toBe(lost > 0 ? "failed" : "ok"); // the scenario's lost: 0 check
  console.log(
    `killed ${o.label} at stored ${killedAt}: sent ${l.sent}, stored ${l.stored}, lost ${l.lost}, rejected ${l.rejected}, missingRanges ${JSON.stringify(l.missingRanges)}`,
  );
  return { record, killedAt: killedAt!, present };
}

/**
 * A run whose generator re-sent every k-th batch on purpose (`duplicateEvery`): the ledger must count exactly the
 * repeated events as duplicated (nothing lost, every seq stored), the duplicated check must fail the run, and the
 * headline rows/s must count distinct rows only (below the stored-rows rate). Returns the ledger.
 */
export function expectDuplicatesCounted(record: RunRecord): NonNullable<RunRecord["ledger"]> {
  const g = record.generator!;
  const l = record.ledger!;
  expect(g.repeated).toBeGreaterThan(0);
  expect(l).toMatchObject({
    lost: 0,
    unexpected: 0,
    duplicated: g.repeated,
    distinct: g.sent,
    stored: g.sent + g.repeated!,
  });
  expect(record.status).toBe("failed");
  expect(record.checks.find((c) => c.check === "ledger.duplicated")).toMatchObject({
    ok: false,
    actual: g.repeated,
  });
  const s = record.summary!;
  expect(s.storedRowsPerSecond).toBeGreaterThan(s.rowsPerSecond);
  expect(s.rowsPerSecond).toBeCloseTo(s.storedRowsPerSecond! * (l.distinct / l.stored), 6);
  return l;
}

/** The run's series.jsonl (written by BenchRun into its results directory). */
export function readSeries(run: BenchRun): SeriesPoint[] {
  return readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SeriesPoint);
}

/**
 * What an open-loop generator's count can be held to on any machine, however busy: it sent something, and never
 * more than its offered rate (events/s per generator × generators) allows over the time it ran, plus one batch per
 * connection in flight. The first drain sample was taken after the generator stopped, so its elapsedS bounds that
 * time. How far below the offer a busy machine kept it is not asserted: the ledger is (expectCleanRun).
 * @returns the upper bound on sent
 */
export function expectWithinOffer(
  run: BenchRun,
  record: RunRecord,
  o: { rate: number; batch: number; connections?: number; generators?: number },
): number {
  const series = readSeries(run);
  const drain = series.find((p) => p.phase === "drain");
  expect(drain).toBeDefined();
  const n = o.generators ?? 1;
  const bound = o.rate * n * drain!.elapsedS + o.batch * (o.connections ?? 1) * n;
  const sent = record.generator!.sent;
  expect(sent).toBeGreaterThan(0);
  expect(sent).toBeLessThanOrEqual(bound);
  // the series' generator totals never decrease and never pass the final report
  const sents = series.map((p) => p.sent);
  expect(sents).toEqual([...sents].sort((a, b) => a - b));
  expect(Math.max(...sents)).toBeLessThanOrEqual(sent);
  return bound;
}

/**
 * A kill-then-restart fault run (steps 0 and 1): every missing range of the ledger is charged to one of the two
 * faults, together they are the ledger's ranges (and its lost count while all ranges are listed: at most 20), and the
 * kill itself lost rows. Returns the ledger.
 */
export function expectKillRestartChargesEveryMissingRange(
  record: RunRecord,
): NonNullable<RunRecord["ledger"]> {
  const l = record.ledger!;
  const faults = record.faults!;
  expect(faults.map((f) => f.step)).toEqual([0, 1]);
  const charged = faults.flatMap((f) => f.lostRanges).sort((a, b) => a[1] - b[1]);
  expect(charged).toEqual([...l.missingRanges].sort((a, b) => a[1] - b[1]));
  if (l.missingRanges.length < 20) expect(faults[0]!.lost + faults[1]!.lost).toBe(l.lost);
  // what the collector held when it was killed is charged to the kill
  expect(faults[0]!.lost).toBeGreaterThan(0);
  return l;
}
