/**
 * griddb-webapi: row bodies and error answers of GridDB's Web API (griddb/webapi, "GridDB Web API Reference":
 * "Row registration in a single container", `PUT /griddb/v2/:cluster/dbs/:database/containers/:container/rows`,
 * Basic authentication, Content-Type application/json).
 *
 * Body: a JSON array of rows, each row a positional JSON array of column values, matched to the container's columns
 * strictly by position: the scenario's fields in order, then gen, seq, sent_at. TIMESTAMP values are strings
 * `YYYY-MM-DDThh:mm:ss.SSSZ` (UTC), integers and floats are numbers, BOOL true/false, NULL null. A TIME_SERIES
 * container upserts on its row key (the first column), so rows sharing a timestamp overwrite each other.
 *
 * Answers: 200 `{"count":<rows updated or inserted>}`; on failure 400/401/404/500 with
 * `{"version":"v2","errorCode":<code>,"errorMessage":"<text>"}` ("Response body" of the reference). Two messages
 * matter for positional rows (write-up 000): "Row data is invalid" (the row's value count differs from the column count)
 * and "The specified data cannot be converted to <TYPE> type" (a value landed in a column of another type).
 */
import { IngestbenchError } from "../errors.ts";
import { basicAuthorization, passwordConfigKey, passwordEnvName, sinkPassword } from "../secrets.ts";
import {
  BatchTemplate,
  ByteWriter,
  checkRange,
  directTextOf,
  type EncodePathOption,
  stampBatch,
  writeJsonField,
  writeSentAt,
  type StampedBatch,
} from "./encoding.ts";
import type { DirectText, RowSource } from "./source.ts";

/** The path of the row registration endpoint; names are URL-encoded. */
export function gridDbRowsPath(cluster: string, database: string, container: string): string {
  const e = encodeURIComponent;
  return `/griddb/v2/${e(cluster)}/dbs/${e(database)}/containers/${e(container)}/rows`;
}

/** `Basic <base64(user:password)>` (RFC 7617): core/secrets.ts basicAuthorization. */
export const basicAuth = basicAuthorization;

export class GridDbRowsEncoder {
  private readonly w = new ByteWriter();
  /** the template path: generated text written straight into the body (JsonObjectRows in encoding.ts) */
  private readonly direct: DirectText | undefined;

  /** template path: `<genId>,` and `,"<placeholder sent_at>"]` with the sent_at slot's offset in it */
  private readonly genComma: Buffer;
  private readonly sentClose: Buffer;
  private readonly sentSlot: number;
  private readonly template: BatchTemplate;

  constructor(
    private readonly source: RowSource,
    options: EncodePathOption = {},
  ) {
    this.direct = directTextOf(source, options);
    this.template = new BatchTemplate(source.fields, this.direct);
    this.genComma = Buffer.from(`${source.genId},`, "latin1");
    const t = new ByteWriter(64);
    t.byte(0x2c);
    writeSentAt(t, "iso");
    t.byte(0x5d);
    const close = t.take(0, 0);
    this.sentClose = close.payload;
    this.sentSlot = close.slots[0]!.at[0]!;
  }

  /** `[[v1,..,gen,seq,"sent_at"],..]` for seqs [from, from + count). @throws RangeError for a bad range */
  encode(from: number, count: number): StampedBatch {
    checkRange(from, count);
    const filled = this.template.fill(from, count);
    if (filled) return filled;
    const holes = this.template.recorder(count);
    const w = this.w;
    w.reset();
    const n = this.source.fields.length;
    const direct = this.direct;
    w.byte(0x5b);
    for (let seq = from; seq < from + count; seq++) {
      holes?.row();
      const row = direct ? direct.fillScalars(seq) : this.source.fill(seq);
      w.ascii(seq > from ? ",[" : "[");
      for (let i = 0; i < n; i++) {
        if (direct?.generated[i]) {
          w.ensure(row.len[i]! + 3);
          w.buf[w.pos++] = 0x22;
          direct.writeText(seq, i, w.buf, w.pos);
          holes?.text(i, w.pos, w.pos + row.len[i]!);
          w.pos += row.len[i]!;
          w.buf[w.pos++] = 0x22;
        } else {
          const start = w.pos;
          writeJsonField(w, row, i, "iso");
          if (holes !== null && row.types[i] === 0) holes.time(i, "iso", start + 1, w.pos - 1); // inside the quotes
        }
        w.byte(0x2c);
      }
      if (direct) {
        // pre-encoded gen and placeholder sent_at (the same bytes as below)
        w.bytes(this.genComma);
        const seqAt = w.pos;
        w.int(seq);
        holes?.seq(seqAt, w.pos);
        w.ensure(this.sentClose.length);
        w.slot("iso", w.pos + this.sentSlot);
        w.bytes(this.sentClose);
        continue;
      }
      w.int(this.source.genId);
      w.byte(0x2c);
      w.int(seq);
      w.byte(0x2c);
      writeSentAt(w, "iso");
      w.byte(0x5d);
    }
    w.byte(0x5d);
    const batch = w.take(from, count);
    this.template.keep(batch, holes);
    return batch;
  }

  /** The batch is sent and answered (harness/generators/loop.ts BatchEncoder.release): its memory may take a later batch. */
  release(batch: StampedBatch): void {
    this.template.release(batch);
  }

  stamp(batch: StampedBatch, sentAt: Date): void {
    stampBatch(batch, sentAt);
  }
}

/** What kind of failure an answer reports. */
export type GridDbErrorKind =
  "row-invalid" | "type-conversion" | "auth" | "not-found" | "count-mismatch" | "other";

/**
 * A failed row registration. code E_GRIDDB_<KIND>; `errorCode` is the Web API's own code (number or string as sent),
 * `targetType` the column type named by a conversion error ("LONG", "TIMESTAMP", ...).
 */
export class GridDbError extends IngestbenchError {
  constructor(
    readonly kind: GridDbErrorKind,
    message: string,
    readonly status: number,
    readonly errorCode: string | number | null,
    readonly targetType: string | null = null,
  ) {
    super(`E_GRIDDB_${kind.toUpperCase().replace("-", "_")}`, message);
  }
}

/**
 * Read the answer to a row registration of `count` rows: returns the stored row count, or throws.
 * @throws GridDbError — "row-invalid" for "Row data is invalid", "type-conversion" for "... cannot be converted to
 *   <TYPE> type", "auth" for 401, "not-found" for 404, "count-mismatch" when 200 reports another count, else "other"
 */
export function parseGridDbResponse(status: number, body: string, count: number): number {
  type Answer = { count?: unknown; errorCode?: unknown; errorMessage?: unknown } | null;
  let doc: Answer;
  try {
    doc = JSON.parse(body) as Answer;
  } catch {
    doc = null;
  }
  if (status === 200) {
    const c = typeof doc?.count === "number" ? doc.count : null;
    if (c === count) return c;
    throw new GridDbError(
      "count-mismatch",
      `GridDB stored ${c ?? "an unknown number of"} rows of ${count}: ${body.slice(0, 200)}`,
      status,
      null,
    );
  }
  const message = typeof doc?.errorMessage === "string" ? doc.errorMessage : body.trim().slice(0, 300);
  const ec = doc?.errorCode;
  const errorCode = typeof ec === "number" || typeof ec === "string" ? ec : null;
  const conv = /cannot be converted to (\w+) type/i.exec(message);
  let kind: GridDbErrorKind;
  if (/row data is invalid/i.test(message)) kind = "row-invalid";
  else if (conv) kind = "type-conversion";
  else if (status === 401) kind = "auth";
  else if (status === 404) kind = "not-found";
  else kind = "other";
  throw new GridDbError(
    kind,
    `GridDB answered ${status}${errorCode !== null ? ` (errorCode ${errorCode})` : ""}: ${message}`,
    status,
    errorCode,
    conv ? conv[1]!.toUpperCase() : null,
  );
}

/** Where rows go, from a target's params (defaults: cluster "myCluster", database "public", container "ib_events", user "admin", GridDB's administrator account). */
export function gridDbTarget(params: Record<string, string>): {
  cluster: string;
  database: string;
  container: string;
  user: string;
} {
  return {
    cluster: params.cluster ?? "myCluster",
    database: params.database ?? "public",
    container: params.container ?? "ib_events",
    user: params.user ?? "admin",
  };
}

/**
 * The Authorization header for the Web API: Basic auth of the target's user and the GridDB password, which has no
 * default: INGESTBENCH_GRIDDB_PASSWORD (core/secrets.ts) in `env`.
 * @throws IngestbenchError E_GRIDDB_PASSWORD when no password is set (the message names the variable and the stack's
 *         Pulumi config secret)
 */
export function gridDbAuthorization(
  params: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const password = sinkPassword("griddb", env);
  if (password === undefined) {
    throw new IngestbenchError(
      "E_GRIDDB_PASSWORD",
      `GridDB has no default password: set ${passwordEnvName("griddb")} (and, on docker and azure stacks, the same value with \`pulumi config set --secret ${passwordConfigKey("griddb")} …\`)`,
    );
  }
  return basicAuth(gridDbTarget(params).user, password);
}

/** Content-Type the Web API requires on every request ("Request header"). */
export const GRIDDB_CONTENT_TYPE = "application/json; charset=UTF-8";
