/**
 * The query phase (scenario `query`, harness/scenario/schema.ts QueryPhase): write-up 001's query half
 * (docs/write-ups.md), statements run against the sink at concurrency × count cells once the ingest has filled the
 * table, every acknowledged seq present (harness/runner/run.ts runs it after the completion wait, before the
 * measurement ends, so the sink is still under its caps).
 *
 * Per statement and cell: `concurrency` closed-loop workers, each sending `count` requests one after the other
 * (write-up 001's "100×10" is 100 workers × 10 requests), over one undici Pool of `concurrency` connections to the
 * sink's HTTP interface (ClickHouse: POST / with the statement as body, ?database=…[&user=…], the answer in
 * TabSeparated: https://clickhouse.com/docs/en/interfaces/http). The harness process sends them, from the harness's
 * side of the sink's control address (as the verifier's counts do), not from the loadgen host.
 *
 * Latency per request, send to the whole answer read, goes into an HdrHistogram (hdr-histogram-js; microseconds,
 * 3 significant digits, Gil Tene's HdrHistogram). The loop is closed (a worker sends its next request when the
 * previous one answered), so coordinated omission correction does not apply: the latencies are what each request
 * waited, and requests/s is what the server sustained at that concurrency. Every answer is checked (`checkAnswer`):
 * a non-200 status, a ClickHouse exception in the body, or a row count or first value other than the statement
 * declares is an error, counted beside the requests, never a fast query.
 */
import * as hdr from "hdr-histogram-js";
import { Pool } from "undici";
import { ConfigurationError } from "../../core/errors.ts";
import type { QueryCellResult, QueryPhaseRecord } from "../results/types.ts";
import type { QueryPhase, QueryStatement } from "../scenario/schema.ts";

/** Where the harness reaches the sink (the run's "sink" event: control address, sink params). */
export interface QueryTarget {
  host: string;
  port: number;
  params: Record<string, string>;
}

/** Errors kept as text per cell. */
const ERROR_SAMPLES = 5;

/** The table a statement's `{table}` names: `params.table` (default ib_events, may be "db.table") in `params.database`. */
export function tableRef(params: Record<string, string>): { database: string; ref: string } {
  const t = params.table ?? "ib_events";
  const dot = t.indexOf(".");
  const database = dot > 0 ? t.slice(0, dot) : (params.database ?? "default");
  const name = dot > 0 ? t.slice(dot + 1) : t;
  return { database, ref: `${database}.${name}` };
}

/** The statement as sent: `{table}` replaced, " FORMAT TabSeparated" appended (a trailing ";" dropped). */
export function statementText(st: QueryStatement, table: string): string {
  return `${st.sql.replaceAll("{table}", table).trim().replace(/;$/, "")} FORMAT TabSeparated`;
}

/**
 * Check one answer (status and TabSeparated body) against the statement: status 200, no ClickHouse exception text,
 * `rows` lines when declared, and the first field of the first line equal to `value` ("{stored}" = `tableRows`) when
 * declared. Returns the rows returned, or the error in words.
 */
export function checkAnswer(status: number, body: string, st: QueryStatement, tableRows: number): { rows: number } | { error: string } {
  if (status !== 200) return { error: `HTTP ${status}: ${body.trim().split("\n")[0]!.slice(0, 200)}` };
  // ClickHouse reports an exception raised while streaming the answer after a 200 header, in the body
  const exception = /Code: \d+, e\.displayText\(\) = DB::Exception|DB::Exception:/.exec(body);
  if (exception) return { error: `exception in the answer: ${body.slice(exception.index).split("\n")[0]!.slice(0, 200)}` };
  const lines = body === "" ? [] : body.replace(/\n$/, "").split("\n");
  if (st.rows !== undefined && lines.length !== st.rows) return { error: `wrong answer: ${lines.length} rows, expected ${st.rows}` };
  if (st.value !== undefined) {
    const expected = st.value === "{stored}" ? tableRows : st.value;
    const first = lines[0]?.split("\t")[0];
    if (first === undefined || Number(first) !== expected) return { error: `wrong answer: first value ${first ?? "(no row)"}, expected ${expected}${st.value === "{stored}" ? " (the rows in the table)" : ""}` };
  }
  return { rows: lines.length };
}

/** Summed figures of a query phase for scenario checks (`query.requests`, `query.ok`, `query.errors`). */
export function queryTotals(q: QueryPhaseRecord | undefined): { requests: number; ok: number; errors: number } | undefined {
  if (!q) return undefined;
  return q.cells.reduce((t, c) => ({ requests: t.requests + c.requests, ok: t.ok + c.ok, errors: t.errors + c.errors }), { requests: 0, ok: 0, errors: 0 });
}

/**
 * Run one statement at one concurrency × count cell and measure it (see the module comment).
 * @throws the abort reason when `signal` aborts
 */
async function runCell(target: QueryTarget, st: QueryStatement, cell: { concurrency: number; count: number }, opts: { timeoutMs: number; tableRows: number; signal?: AbortSignal }): Promise<QueryCellResult> {
  const { database } = tableRef(target.params);
  const search = new URLSearchParams({ database });
  if (target.params.user) search.set("user", target.params.user);
  const body = statementText(st, tableRef(target.params).ref);
  const pool = new Pool(`http://${target.host}:${target.port}`, { connections: cell.concurrency, pipelining: 1 });
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: Math.max(2, opts.timeoutMs * 1000 * 2), numberOfSignificantValueDigits: 3 });
  let ok = 0;
  let errors = 0;
  let rows = 0;
  const samples: string[] = [];
  const fail = (e: string): void => {
    errors++;
    if (samples.length < ERROR_SAMPLES) samples.push(e);
  };
  const worker = async (): Promise<void> => {
    for (let i = 0; i < cell.count; i++) {
      opts.signal?.throwIfAborted();
      const t = performance.now();
      try {
        const r = await pool.request({
          path: `/?${search}`, method: "POST", body,
          headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs,
        });
        const text = await r.body.text();
        histogram.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
        const a = checkAnswer(r.statusCode, text, st, opts.tableRows);
        if ("error" in a) fail(a.error);
        else { ok++; rows += a.rows; }
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        histogram.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
        fail(`request failed: ${(err as Error).message}`);
      }
    }
  };
  // one abort listener for the cell (not one per request): aborting destroys the pool, failing what is in flight
  const onAbort = (): void => { void pool.destroy(opts.signal?.reason instanceof Error ? opts.signal.reason : null).catch(() => undefined); };
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: cell.concurrency }, worker));
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    await pool.close().catch(() => pool.destroy());
  }
  const elapsedMs = performance.now() - started;
  const requests = cell.concurrency * cell.count;
  const ms = (us: number): number => us / 1000;
  const result: QueryCellResult = {
    id: `${st.name}@${cell.concurrency}x${cell.count}`, statement: st.name, concurrency: cell.concurrency, count: cell.count,
    requests, ok, errors, errorSamples: samples, rows, elapsedMs,
    requestsPerSecond: elapsedMs > 0 ? (requests * 1000) / elapsedMs : Number.NaN,
    latencyMs: { mean: ms(histogram.mean), p50: ms(histogram.getValueAtPercentile(50)), p99: ms(histogram.getValueAtPercentile(99)), max: ms(histogram.maxValue) },
  };
  histogram.destroy();
  return result;
}

/**
 * Run a query phase against the sink: every statement at every cell, statements outer, cells inner, one after the
 * other (cells never overlap). `tableRows` is what the table holds (the ingest's stored count, complete).
 * @throws ConfigurationError E_QUERY_SINK when the sink has no query support here; the abort reason when aborted
 */
export async function runQueryPhase(opts: { phase: QueryPhase; sink: string; target: QueryTarget; tableRows: number; signal?: AbortSignal }): Promise<QueryPhaseRecord> {
  if (opts.sink !== "clickhouse") throw new ConfigurationError("E_QUERY_SINK", `the query phase runs against clickhouse sinks only, not "${opts.sink}"`, { field: "query" });
  const cells: QueryCellResult[] = [];
  for (const st of opts.phase.statements) {
    for (const cell of opts.phase.cells) {
      cells.push(await runCell(opts.target, st, cell, { timeoutMs: opts.phase.timeout.ms, tableRows: opts.tableRows, signal: opts.signal }));
    }
  }
  return { sink: opts.sink, tableRows: opts.tableRows, cells };
}

/** "count@10x50: 1,234 queries/s, p50 3.1 ms, p99 9.8 ms, max 12.0 ms, 500 requests, 0 errors" lines for the terminal. */
export function queryLines(q: QueryPhaseRecord): string[] {
  const f = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : "–");
  return [
    `  queries against ${q.sink} (${q.tableRows.toLocaleString("en-US")} rows in the table):`,
    ...q.cells.map((c) => `    ${c.id}: ${f(c.requestsPerSecond)} queries/s, p50 ${f(c.latencyMs.p50)} ms, p99 ${f(c.latencyMs.p99)} ms, max ${f(c.latencyMs.max)} ms; `
      + `${c.requests} requests, ${c.errors} errors${c.errorSamples.length ? ` (first: ${c.errorSamples[0]})` : ""}`),
  ];
}
