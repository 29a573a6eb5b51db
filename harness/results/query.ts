/**
 * Ad-hoc questions over results on disk with DuckDB (`ingestbench results query "SQL"`).
 *
 * An in-memory DuckDB database gets two views over the JSON files, read with `read_json_auto` (schema inferred
 * from every file, `union_by_name`, so runs written by older or newer versions of the harness still line up):
 *
 * - `runs`: one row per results/<stack>/<scenario>/<run-id>/run.json, the fields of RunRecord (types.ts) as
 *   columns and structs (`summary.rowsPerSecond`, `ledger.lost`, `limits.sink.applied.cfsQuotaUs`, ...), plus
 *   `dir` (the run directory).
 * - `series`: one row per line of every series.jsonl (SeriesPoint: `elapsedS`, `phase`, `rowsPerSec`, `lagMs`,
 *   `hosts.sink.cpuCores`, ...), plus `stack`, `scenario`, `runId` and `dir` taken from the file's path, to join
 *   with `runs` (`USING (runId)`).
 *
 * The file lists are gathered by the harness (not by a DuckDB glob), so an empty results directory gives empty
 * views rather than an error, and paths with SQL or glob characters are safe. Extensions are never downloaded
 * (JSON support is built into the binding).
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import { ConfigurationError } from "../../core/errors.ts";

/** One result of a query: column names, DuckDB type names and rows as JSON-ready values. */
export interface QueryResult {
  /** files left out (a run.json that does not parse), with why */
  skipped: string[];
  columns: string[];
  types: string[];
  rows: Array<Record<string, unknown>>;
}

/**
 * The files under resultsRoot (results/<stack>/<scenario>/<run-id>/{run.json, series.jsonl}). A run.json that is not
 * one JSON object (a damaged file) is listed in `skipped` instead of failing every query.
 */
export async function findResultFiles(
  resultsRoot: string,
): Promise<{ runs: string[]; series: string[]; skipped: string[] }> {
  const runs: string[] = [];
  const series: string[] = [];
  const skipped: string[] = [];
  const dirs = async (p: string): Promise<string[]> => {
    try {
      const entries = await readdir(p, { withFileTypes: true });
      return entries
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch {
      return [];
    }
  };
  const isFile = async (p: string): Promise<boolean> => {
    try {
      const s = await stat(p);
      return s.isFile() && s.size > 0;
    } catch {
      return false;
    }
  };
  for (const stack of await dirs(resultsRoot)) {
    for (const scenario of await dirs(path.join(resultsRoot, stack))) {
      for (const run of await dirs(path.join(resultsRoot, stack, scenario))) {
        const dir = path.join(resultsRoot, stack, scenario, run);
        const runFile = path.join(dir, "run.json");
        if (await isFile(runFile)) {
          try {
            const parsed: unknown = JSON.parse(await readFile(runFile, "utf8"));
            if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
              throw new Error("not a JSON object");
            runs.push(runFile);
          } catch (err) {
            skipped.push(`${runFile}: ${(err as Error).message}`);
          }
        }
        if (await isFile(path.join(dir, "series.jsonl"))) series.push(path.join(dir, "series.jsonl"));
      }
    }
  }
  return { runs, series, skipped };
}

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const fileList = (files: string[]): string => `[${files.map(sqlString).join(", ")}]`;

/** Columns of an empty `series` view (when no run has a series yet), so that queries naming them still bind. */
const EMPTY_SERIES =
  "SELECT NULL::VARCHAR AS stack, NULL::VARCHAR AS scenario, NULL::VARCHAR AS runId, NULL::VARCHAR AS dir, " +
  "NULL::DOUBLE AS t, NULL::DOUBLE AS elapsedS, NULL::VARCHAR AS phase, NULL::BIGINT AS stored, NULL::DOUBLE AS countQueryMs, " +
  "NULL::DOUBLE AS rowsPerSec, NULL::DOUBLE AS mibPerSec, NULL::DOUBLE AS lagMs, NULL::BIGINT AS sent, NULL::BIGINT AS accepted WHERE false";
const EMPTY_RUNS =
  "SELECT NULL::VARCHAR AS status, NULL::VARCHAR AS runId, NULL::VARCHAR AS invocation, NULL::VARCHAR AS stack, " +
  "NULL::VARCHAR AS scenario, NULL::VARCHAR AS cell, NULL::VARCHAR AS dir WHERE false";

/** A connection with the `runs` and `series` views over resultsRoot. Close the returned instance when done. */
export async function openResults(
  resultsRoot: string,
): Promise<{ connection: DuckDBConnection; close: () => void; skipped: string[] }> {
  // a mistyped --results would otherwise answer every query with zero rows
  if (!existsSync(resultsRoot))
    throw new ConfigurationError(
      "E_NO_RESULTS",
      `no results directory ${resultsRoot}: bench writes results/ by default; give --results the directory it wrote to`,
    );
  const { runs, series, skipped } = await findResultFiles(resultsRoot);
  // never fetch extensions from the network; JSON is built in
  // loaded here, not at the top: DuckDB costs ~0.6 s to import, which every other command would pay
  const { DuckDBInstance } = await import("@duckdb/node-api");
  const instance = await DuckDBInstance.create(":memory:", {
    autoinstall_known_extensions: "false",
    threads: "2",
  });
  const connection = await instance.connect();
  const close = (): void => {
    connection.closeSync();
    instance.closeSync();
  };
  try {
    // the run directory from a file name: everything before the last "/"
    const dirOf = "regexp_replace(filename, '/[^/]*$', '')";
    const part = (n: number): string => `regexp_extract(filename, '([^/]+)/([^/]+)/([^/]+)/[^/]+$', ${n})`;
    await connection.run(
      runs.length === 0
        ? `CREATE VIEW runs AS ${EMPTY_RUNS}`
        : `CREATE VIEW runs AS SELECT * EXCLUDE (filename), ${dirOf} AS dir ` +
            `FROM read_json_auto(${fileList(runs)}, format = 'auto', union_by_name = true, filename = true, sample_size = -1, maximum_object_size = 67108864)`,
    );
    await connection.run(
      series.length === 0
        ? `CREATE VIEW series AS ${EMPTY_SERIES}`
        : `CREATE VIEW series AS SELECT ${part(1)} AS stack, ${part(2)} AS scenario, ` +
            `${part(3)} AS runId, ${dirOf} AS dir, * EXCLUDE (filename) ` +
            // a run killed in the middle of an append leaves a truncated last line: ignore_errors reads it as NULLs, and
            // every whole line has a phase
            `FROM read_json_auto(${fileList(series)}, format = 'newline_delimited', union_by_name = true, filename = true, sample_size = -1, ignore_errors = true) ` +
            "WHERE phase IS NOT NULL",
    );
  } catch (err) {
    close();
    throw new ConfigurationError(
      "E_RESULTS_READ",
      `cannot read the results under ${resultsRoot} with DuckDB: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return { connection, close, skipped };
}

/**
 * BIGINT and HUGEINT values arrive as bigint: numbers when exact, else strings; timestamps and other DuckDB value
 * objects as their text; structs, maps and lists recursively.
 */
function jsonReady(v: unknown): unknown {
  if (typeof v === "bigint")
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : v.toString();
  if (Array.isArray(v)) return v.map(jsonReady);
  if (v instanceof Date) return v.toISOString();
  // DuckDB value classes (timestamps, intervals, UUIDs, ...) print themselves
  if (
    v !== null &&
    typeof v === "object" &&
    Object.getPrototypeOf(v) !== Object.prototype &&
    Object.getPrototypeOf(v) !== null
  )
    return String(v);
  if (v !== null && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonReady(x)]));
  return v;
}

/**
 * Run one SQL statement over the results under resultsRoot (views `runs` and `series`).
 * @throws ConfigurationError E_QUERY when DuckDB rejects the statement (parse, binder or runtime error), with its
 *         message; E_RESULTS_READ when the files cannot be read at all
 */
export async function queryResults(resultsRoot: string, sql: string): Promise<QueryResult> {
  const { connection, close, skipped } = await openResults(resultsRoot);
  try {
    let reader;
    try {
      reader = await connection.runAndReadAll(sql);
    } catch (err) {
      throw new ConfigurationError(
        "E_QUERY",
        `query failed: ${(err as Error).message}\nviews: runs (run.json fields, dir), series (series.jsonl fields, stack, scenario, runId, dir) over ${resultsRoot}`,
        { cause: err },
      );
    }
    const columns = reader.columnNames();
    const json = reader.getRowObjectsJS();
    return {
      skipped,
      columns,
      types: reader.columnTypes().map((t) => t.toString()),
      rows: json.map((row) => Object.fromEntries(columns.map((c) => [c, jsonReady(row[c])]))),
    };
  } finally {
    close();
  }
}
