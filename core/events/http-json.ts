/**
 * http-json body encoder: a batch of N events as one HTTP request body, either
 * - "ndjson": one JSON object per line, each line ending in LF (the NDJSON convention, media type
 *   application/x-ndjson; what Fluent Bit's and Vector's http inputs accept as newline-delimited JSON), or
 * - "array": one JSON array of N objects (RFC 8259 §5), media type application/json.
 * Each object is `{"<field>":<value>,...,"gen":<genId>,"seq":<seq>,"sent_at":<time>}` in the scenario's field
 * order (JSON text per RFC 8259; see encoding.ts for escaping and time formats).
 */
import {
  BatchTemplate,
  ByteWriter,
  checkRange,
  directTextOf,
  type EncodePathOption,
  JsonObjectRows,
  stampBatch,
  type JsonTimeFormat,
  type StampedBatch,
} from "./encoding.ts";
import type { RowSource } from "./source.ts";

export type HttpJsonFraming = "ndjson" | "array";

export interface HttpJsonOptions extends EncodePathOption {
  framing: HttpJsonFraming;
  /** timestamp fields and sent_at; default "iso" */
  timeFormat?: JsonTimeFormat;
}

/** Content-Type header for a framing. */
export function httpJsonContentType(framing: HttpJsonFraming): string {
  return framing === "ndjson" ? "application/x-ndjson" : "application/json";
}

/** Encodes batches of one source; reuses one growing buffer, and a batch template (encoding.ts) where the fields allow. */
export class HttpJsonEncoder {
  private readonly w = new ByteWriter();
  private readonly rows: JsonObjectRows;
  private readonly template: BatchTemplate;

  constructor(
    private readonly source: RowSource,
    private readonly options: HttpJsonOptions,
  ) {
    const direct = directTextOf(source, options);
    this.rows = new JsonObjectRows(source.fields, options.timeFormat ?? "iso", 1, direct);
    this.template = new BatchTemplate(source.fields, direct);
  }

  /**
   * Body for seqs [from, from + count) (rows must be loaded for replay sources), sent_at left as a placeholder.
   * @throws RangeError for a negative or non-integer range
   */
  encode(from: number, count: number): StampedBatch {
    checkRange(from, count);
    const filled = this.template.fill(from, count);
    if (filled) return filled;
    const holes = this.template.recorder(count);
    const w = this.w;
    w.reset();
    const array = this.options.framing === "array";
    if (array) w.byte(0x5b);
    for (let seq = from; seq < from + count; seq++) {
      if (array && seq > from) w.byte(0x2c);
      holes?.row();
      this.rows.write(w, this.rows.row(this.source, seq), this.source.genId, holes);
      if (!array) w.byte(0x0a);
    }
    if (array) w.byte(0x5d);
    const batch = w.take(from, count);
    this.template.keep(batch, holes);
    return batch;
  }

  /** The batch is sent and answered (harness/generators/loop.ts BatchEncoder.release): its memory may take a later batch. */
  release(batch: StampedBatch): void {
    this.template.release(batch);
  }

  /** Write the send time into every sent_at of the batch. */
  stamp(batch: StampedBatch, sentAt: Date): void {
    stampBatch(batch, sentAt);
  }
}
