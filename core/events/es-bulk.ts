/**
 * es-bulk: Elasticsearch `_bulk` request bodies and response parsing (Elasticsearch reference, "Bulk API").
 *
 * Body: NDJSON, for each event an action line and a source line, each ending in LF (the final line must end in a
 * newline too): `{"index":{}}` (or `{"index":{"_index":"<name>"}}`, or `create` for data streams, which accept only
 * `create`), then the document `{"<field>":...,"gen":<genId>,"seq":<seq>,"sent_at":"<iso>"}`. Content-Type
 * application/x-ndjson. No `_id` by default, so a repeated batch is stored twice and the ledger sees duplicates;
 * `ids: true` sets `_id` to `<gen>-<seq>` (a repeat then overwrites).
 *
 * Response: HTTP 200 with `{"took":..,"errors":<bool>,"items":[{"<action>":{"status":<http status>,"error":{..}}},..]}`,
 * items in request order. `"errors": true` means at least one item failed; each item has its own status: 2xx
 * stored, 429 (es_rejected_execution_exception: a full write queue) rejected but retryable, other 4xx/5xx (e.g.
 * 400 mapper_parsing_exception) rejected. A whole-request failure is a non-200 status with `{"error":..,"status":..}`.
 */
import { IngestbenchError } from "../errors.ts";
import { sinkAuthHeaders } from "../secrets.ts";
import {
  BatchTemplate,
  ByteWriter,
  checkRange,
  directTextOf,
  type EncodePathOption,
  JsonObjectRows,
  stampBatch,
  type StampedBatch,
} from "./encoding.ts";
import type { RowSource } from "./source.ts";

export interface EsBulkOptions extends EncodePathOption {
  /** target index in each action line; omit to use the index in the URL (`POST /<index>/_bulk`) */
  index?: string;
  /** "index" (default) or "create" (required by data streams) */
  op?: "index" | "create";
  /** set `_id` = "<gen>-<seq>" (default false: duplicates stay visible) */
  ids?: boolean;
}

/** Content-Type of a bulk body. */
export const ES_BULK_CONTENT_TYPE = "application/x-ndjson";

export class EsBulkEncoder {
  private readonly w = new ByteWriter();
  private readonly rows: JsonObjectRows;
  private readonly actionHead: Buffer;
  private readonly actionTail: Buffer;
  private readonly template: BatchTemplate;

  constructor(
    private readonly source: RowSource,
    private readonly options: EsBulkOptions = {},
  ) {
    const direct = directTextOf(source, options);
    this.rows = new JsonObjectRows(source.fields, "iso", 1, direct);
    this.template = new BatchTemplate(source.fields, direct);
    const op = options.op ?? "index";
    const meta: string[] = [];
    if (options.index !== undefined) meta.push(`"_index":${JSON.stringify(options.index)}`);
    if (options.ids) {
      meta.push(`"_id":"`);
      this.actionHead = Buffer.from(`{"${op}":{${meta.join(",")}`);
      this.actionTail = Buffer.from(`"}}\n`);
    } else {
      this.actionHead = Buffer.from(`{"${op}":{${meta.join(",")}}}\n`);
      this.actionTail = Buffer.alloc(0);
    }
  }

  /** Bulk body for seqs [from, from + count). @throws RangeError for a bad range */
  encode(from: number, count: number): StampedBatch {
    checkRange(from, count);
    const filled = this.template.fill(from, count);
    if (filled) return filled;
    const holes = this.template.recorder(count);
    const w = this.w;
    w.reset();
    const gen = this.source.genId;
    for (let seq = from; seq < from + count; seq++) {
      holes?.row();
      w.bytes(this.actionHead);
      if (this.options.ids) {
        w.int(gen);
        w.byte(0x2d);
        const seqAt = w.pos;
        w.int(seq);
        holes?.seq(seqAt, w.pos);
        w.bytes(this.actionTail);
      }
      this.rows.write(w, this.rows.row(this.source, seq), gen, holes);
      w.byte(0x0a);
    }
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

/** A failed bulk item: its seq, HTTP status, error type and reason. */
export interface BulkItemFailure {
  seq: number;
  status: number;
  type: string;
  reason: string;
  /** 429: the node's write queue was full; sending the item again later may succeed */
  retryable: boolean;
}

/** What a bulk response says about a batch of seqs [from, from + count). */
export interface BulkOutcome {
  accepted: number;
  /** every refused seq (retryable ones included), ascending */
  rejectedSeqs: number[];
  /** the subset of rejectedSeqs refused with 429 */
  retryableSeqs: number[];
  failures: BulkItemFailure[];
  /** one line per (status, type): count and the first reason, e.g. "2 × 429 es_rejected_execution_exception: ..." */
  summary: string[];
}

/** The bulk request as a whole failed, or its response is not a bulk response. code: E_ES_BULK. */
export class EsBulkError extends IngestbenchError {
  constructor(
    message: string,
    readonly status: number,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super("E_ES_BULK", message, options);
  }
}

interface RawItem {
  status?: unknown;
  error?: { type?: unknown; reason?: unknown } | string | null;
}

/**
 * Map a `_bulk` answer back to seqs: item i is seq from + i. `errors: false` accepts all `count` items (their
 * count is still checked when items are present).
 * @throws EsBulkError when the HTTP status is not 200 (retryable for 429 and 503), the body is not JSON, or the items
 *   do not match the batch (a missing or extra item would make the seq mapping wrong)
 */
export function parseBulkResponse(
  status: number,
  body: string | Buffer,
  from: number,
  count: number,
): BulkOutcome {
  const text = typeof body === "string" ? body : body.toString("utf8");
  let doc: { errors?: unknown; items?: unknown; error?: unknown };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch (err) {
    throw new EsBulkError(
      `_bulk answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`,
      status,
      status === 429 || status === 503,
      { cause: err },
    );
  }
  if (status !== 200) {
    const e = doc.error as { type?: unknown; reason?: unknown } | string | undefined;
    const why = typeof e === "string" ? e : e ? `${String(e.type)}: ${String(e.reason)}` : text.slice(0, 200);
    throw new EsBulkError(`_bulk answered ${status}: ${why}`, status, status === 429 || status === 503);
  }
  const items = doc.items;
  if (!Array.isArray(items)) {
    if (doc.errors === false)
      return { accepted: count, rejectedSeqs: [], retryableSeqs: [], failures: [], summary: [] };
    throw new EsBulkError("_bulk response has no items array", status, false);
  }
  if (items.length !== count)
    throw new EsBulkError(`_bulk response has ${items.length} items for ${count} actions`, status, false);
  if (doc.errors === false)
    return { accepted: count, rejectedSeqs: [], retryableSeqs: [], failures: [], summary: [] };
  const failures: BulkItemFailure[] = [];
  items.forEach((raw, i) => {
    const wrapper = raw as Record<string, RawItem> | null;
    const item = wrapper && typeof wrapper === "object" ? Object.values(wrapper)[0] : undefined;
    const st = typeof item?.status === "number" ? item.status : 0;
    if (st >= 200 && st < 300) return;
    const e = item?.error;
    const type = typeof e === "string" ? "error" : String(e?.type ?? "unknown");
    const reason = typeof e === "string" ? e : String(e?.reason ?? (st === 0 ? "item without a status" : ""));
    failures.push({ seq: from + i, status: st, type, reason, retryable: st === 429 });
  });
  const groups = new Map<string, { n: number; reason: string }>();
  for (const f of failures) {
    const key = `${f.status} ${f.type}`;
    const g = groups.get(key);
    if (g) g.n++;
    else groups.set(key, { n: 1, reason: f.reason });
  }
  return {
    accepted: count - failures.length,
    rejectedSeqs: failures.map((f) => f.seq),
    retryableSeqs: failures.filter((f) => f.retryable).map((f) => f.seq),
    failures,
    summary: [...groups].map(([k, g]) => `${g.n} × ${k}: ${g.reason}`),
  };
}

/**
 * The Authorization header of Elasticsearch's (or OpenSearch's) Basic authentication (RFC 7617) for `sink`: the user
 * params.user (default `elastic` / `admin`, core/secrets.ts SINK_DEFAULT_USERS) and the password from
 * INGESTBENCH_<SINK>_PASSWORD, never from params (they are recorded); none without a password.
 */
export function authHeader(
  sink: "elasticsearch" | "opensearch",
  params: Record<string, string>,
): Record<string, string> {
  return sinkAuthHeaders(sink, params);
}
