/**
 * loki-push: JSON bodies for Loki's push endpoint (Grafana Loki docs, "Loki HTTP API" → `POST /loki/api/v1/push`,
 * Content-Type application/json):
 *
 *   {"streams":[{"stream":{"<label>":"<value>",...},"values":[["<unix epoch in nanoseconds, as a string>","<line>"],...]}]}
 *
 * One stream per batch, labeled `job="ingestbench"`, `gen="<genId>"` plus any extra labels. Each log line is the
 * event as a JSON object `{"<field>":...,"gen":..,"seq":..,"sent_at":"<iso>"}` (queryable with LogQL `| json`).
 *
 * Entry timestamps: Loki refuses entries older than its `reject_old_samples_max_age` (a week by default), and the
 * seeded event times start in 2024, so the default `timestamp: "sent"` uses the send time: the 19-digit string
 * `<sent_at epoch ms><index in batch, 6 digits>`, i.e. sent_at in ns plus the entry's index in ns, which keeps entries
 * of a batch distinct and ordered (batches up to 10^6 entries). `timestamp: "event"` uses the first timestamp field
 * (`<ms>000000`), for receivers configured to accept old samples.
 *
 * Answers: 204 No Content on success; 400 (e.g. timestamp too old, line too long) and 429 (ingestion rate limit)
 * with a plain-text reason; `parseLokiPushResponse` types them. The whole batch succeeds or fails.
 */
import { IngestbenchError } from "../errors.ts";
import {
  BatchTemplate,
  ByteWriter,
  checkRange,
  directTextOf,
  type EncodePathOption,
  JsonObjectRows,
  PLACEHOLDER_SENT_AT_MS,
  stampBatch,
  type StampedBatch,
} from "./encoding.ts";
import type { RowSource } from "./source.ts";

export interface LokiPushOptions extends EncodePathOption {
  /** extra stream labels (job and gen are always set) */
  labels?: Record<string, string>;
  /** entry timestamp source, default "sent" (see the file comment) */
  timestamp?: "sent" | "event";
}

/** Entries per batch that keep distinct timestamps with timestamp "sent". */
export const LOKI_MAX_BATCH = 1_000_000;

/** Label names: Prometheus data model, `[a-zA-Z_][a-zA-Z0-9_]*`. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export class LokiPushEncoder {
  private readonly w = new ByteWriter();
  private readonly rows: JsonObjectRows;
  private readonly head: Buffer;
  private readonly tsField: number;
  private readonly template: BatchTemplate;

  /** @throws RangeError for a label name outside the Prometheus data model, or timestamp "event" without a timestamp field */
  constructor(
    private readonly source: RowSource,
    private readonly options: LokiPushOptions = {},
  ) {
    const direct = directTextOf(source, options);
    this.rows = new JsonObjectRows(source.fields, "iso", 2, direct);
    this.template = new BatchTemplate(source.fields, direct);
    const labels: Record<string, string> = {
      job: "ingestbench",
      ...options.labels,
      gen: String(source.genId),
    };
    for (const k of Object.keys(labels))
      if (!LABEL_NAME.test(k)) throw new RangeError(`Loki label name "${k}" is not [a-zA-Z_][a-zA-Z0-9_]*`);
    this.head = Buffer.from(`{"streams":[{"stream":${JSON.stringify(labels)},"values":[`);
    this.tsField = source.fields.findIndex((f) => f.type === "timestamp");
    if (options.timestamp === "event" && this.tsField < 0)
      throw new RangeError('Loki timestamp "event" needs a timestamp field in the event');
  }

  /** Push body for seqs [from, from + count). @throws RangeError for a bad range or more than LOKI_MAX_BATCH entries */
  encode(from: number, count: number): StampedBatch {
    checkRange(from, count);
    if (count > LOKI_MAX_BATCH)
      throw new RangeError(`a Loki batch holds at most ${LOKI_MAX_BATCH} entries, got ${count}`);
    const filled = this.template.fill(from, count);
    if (filled) return filled;
    const holes = this.template.recorder(count);
    const w = this.w;
    w.reset();
    w.bytes(this.head);
    const event = this.options.timestamp === "event";
    for (let seq = from; seq < from + count; seq++) {
      holes?.row();
      const row = this.rows.row(this.source, seq);
      w.ascii(seq > from ? ',["' : '["');
      if (event) {
        const tsAt = w.pos;
        w.time(row.num[this.tsField]!, "epoch-ms");
        holes?.time(this.tsField, "epoch-ms", tsAt, w.pos);
        w.ascii("000000");
      } else {
        // the placeholder time (a stamp slot) and the entry's index: the same bytes in every batch of this count
        w.slot("epoch-ms");
        w.time(PLACEHOLDER_SENT_AT_MS, "epoch-ms");
        w.padded(seq - from, 6);
      }
      w.ascii('","');
      this.rows.write(w, row, this.source.genId, holes);
      w.ascii('"]');
    }
    w.ascii("]}]}");
    const batch = w.take(from, count);
    this.template.keep(batch, holes);
    return batch;
  }

  /** The batch is sent and answered (harness/generators/loop.ts BatchEncoder.release): its memory may take a later batch. */
  release(batch: StampedBatch): void {
    this.template.release(batch);
  }

  /** Write the send time into sent_at and (timestamp "sent") the entry timestamps. */
  stamp(batch: StampedBatch, sentAt: Date): void {
    stampBatch(batch, sentAt);
  }
}

/** Loki refused a push. code E_LOKI_PUSH; `retryable` for 429 and 5xx. */
export class LokiPushError extends IngestbenchError {
  constructor(
    message: string,
    readonly status: number,
    readonly retryable: boolean,
  ) {
    super("E_LOKI_PUSH", message);
  }
}

/** @throws LokiPushError unless the status is 2xx (Loki answers 204) */
export function parseLokiPushResponse(status: number, body: string): void {
  if (status >= 200 && status < 300) return;
  throw new LokiPushError(
    `Loki push answered ${status}: ${body.trim().slice(0, 300)}`,
    status,
    status === 429 || status >= 500,
  );
}
