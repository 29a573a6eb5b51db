/**
 * clickhouse-http body encoder: rows in ClickHouse's JSONEachRow input format (ClickHouse docs, "Formats for Input
 * and Output Data" → JSONEachRow: one JSON object per line, keys are column names), sent as the body of
 * `POST /?query=INSERT INTO <table> (<cols>) FORMAT JSONEachRow` to the HTTP interface (docs, "HTTP Interface").
 *
 * Time columns: ClickHouse 18.16 (the locally packaged server) has DateTime (seconds) and no DateTime64, so the
 * default "epoch-ms" writes timestamps and sent_at as integer milliseconds (for UInt64 columns, lossless); use
 * "datetime" (`YYYY-MM-DD hh:mm:ss`, UTC) for DateTime columns.
 *
 * Errors: the server answers a failed insert with a non-2xx status and a text body "Code: <n>, e.displayText() =
 * DB::Exception: ..." (older servers) or "Code: <n>. DB::Exception: ... (NAME)" (newer); `parseClickHouseError` reads
 * the code. Code 252 is TOO_MANY_PARTS (inserts outpacing merges), which a client may retry later.
 */
import { copyColumns, quoteIdent, quoteTable } from "./copy-text.ts";
import type { JsonTimeFormat } from "./encoding.ts";
import { HttpJsonEncoder } from "./http-json.ts";
import type { RowSource } from "./source.ts";
import type { EventField } from "./types.ts";

/** ClickHouse error code TOO_MANY_PARTS. */
export const CLICKHOUSE_TOO_MANY_PARTS = 252;

/** `INSERT INTO "t" ("a", ..., "gen", "seq", "sent_at") FORMAT JSONEachRow` (the `query` URL parameter). */
export function clickHouseInsertQuery(table: string, fields: readonly EventField[]): string {
  return `INSERT INTO ${quoteTable(table)} (${copyColumns(fields).map(quoteIdent).join(", ")}) FORMAT JSONEachRow`;
}

/** JSONEachRow is NDJSON of the event objects: the http-json encoder with "ndjson" framing (encode, stamp). */
export class ClickHouseJsonEachRowEncoder extends HttpJsonEncoder {
  /** `timeFormat`: "epoch-ms" (default) or "datetime"/"iso" (see the file comment). */
  constructor(source: RowSource, timeFormat: JsonTimeFormat = "epoch-ms") {
    super(source, { framing: "ndjson", timeFormat });
  }
}

/** A ClickHouse error answer: `code` (null if the body names none), whether retrying later may succeed, the text. */
export interface ClickHouseError {
  status: number;
  code: number | null;
  retryable: boolean;
  message: string;
}

/**
 * Read an HTTP answer to an INSERT: null for 2xx, else the error. Retryable: code 252 TOO_MANY_PARTS, HTTP 429 and
 * 503. Never throws.
 */
export function parseClickHouseError(status: number, body: string): ClickHouseError | null {
  if (status >= 200 && status < 300) return null;
  const m = /Code:\s*(\d+)/.exec(body);
  const code = m ? Number(m[1]) : null;
  return {
    status,
    code,
    retryable: code === CLICKHOUSE_TOO_MANY_PARTS || status === 429 || status === 503,
    message: body.trim().slice(0, 500),
  };
}
