/**
 * The bytes an application under test exported, checked against what the sink holds (docs/app-under-test.md,
 * "Bytes"; write-up 003's "bytes exported", docs/write-ups.md).
 *
 * Why per record: the sink holds rows, not what went over the wire. The collector parses each frame into the row's
 * columns (syslog-ng: RFC 5424 header and structured data into ts, span, gen, seq, sent_at) and the sink stores those
 * in its own encoding, so the exporter's bytes cannot be read back as such, and a sum of stored column sizes is no
 * measure of them. What can be compared is each record's own encoding: a record's bytes are a function of its (gen,
 * seq), its fields (filled from the run's seed: core/events/source.ts, and checked at the sink by the content check,
 * core/fidelity.ts), its send time (a fixed-width stamp: core/events/encoding.ts stampBatch) and the protocol's framing
 * as the scenario's `generator` block sets it. So the harness reads back the seqs the sink holds for the app's gen,
 * encodes each as that protocol's record and sums the lengths; the app's `recordBytes` (what it wrote of the records it
 * did not drop) must equal that sum. A record's own encoding, per protocol:
 *
 * - syslog: the whole RFC 6587 octet-counting frame of its RFC 5424 message (one frame per record): MSG-LEN, SP and
 *   the message (core/events/syslog.ts, with the generator block's facility, severity, hostname and appName, PROCID
 *   the generator index "0", as harness/generators/syslog.ts frames generator 0's records);
 * - fluent-forward: its PackedForward entry `[EventTime, record]` (core/events/fluent-forward.ts): a message's
 *   wrapper (array header, tag, bin header, option map) belongs to no record, so it is left out on both sides.
 *
 * An exporter framed otherwise (another APP-NAME, another tag) differs by a constant per record, and the check says
 * by how much per record.
 */
import { decode } from "@msgpack/msgpack";
import { createEventSource } from "../../core/events/source.ts";
import { FluentForwardEncoder } from "../../core/events/fluent-forward.ts";
import { SyslogEncoder } from "../../core/events/syslog.ts";
import type { EventField } from "../../core/events/types.ts";
import { FIDELITY_PAGE, type StoredRowReader } from "../../core/fidelity.ts";
import { generators } from "../generators/index.ts";
import type { AppBytesCheck, AppFigures } from "../results/types.ts";

/** What a record's encoding depends on: the protocol (generator name) and its block, the event, the seed and the gen. */
export interface RecordEncoding {
  protocol: string;
  config: Record<string, unknown>;
  fields: readonly EventField[];
  seed: number;
  /** the app's gen (the run's genBase: core/ledger.ts) */
  gen: number;
}

/** Protocols whose records' own encoding the harness computes (see the file comment). */
export const RECORD_BYTES_PROTOCOLS = ["syslog", "fluent-forward"] as const;

/**
 * The scenario's `generator` block of `protocol` with its defaults filled in (its generator's schema), as the app's
 * exporter gets it (INGESTBENCH_GENERATOR); the block as given for a protocol without a generator here.
 * @throws ZodError when `config` is not a valid block of the protocol's generator
 */
export function generatorBlock(protocol: string, config: Record<string, unknown>): Record<string, unknown> {
  const factory = generators[protocol];
  return factory ? (factory.schema.parse(config) as Record<string, unknown>) : config;
}

/**
 * The byte length of record `seq`'s own encoding (see the file comment), or null for a protocol without one here.
 * @throws ZodError when `config` is not a valid block of the protocol's generator
 */
export function recordBytesOf(e: RecordEncoding): ((seq: number) => number) | null {
  const factory = generators[e.protocol];
  if (!factory || !(RECORD_BYTES_PROTOCOLS as readonly string[]).includes(e.protocol)) return null;
  const config = generatorBlock(e.protocol, e.config);
  const source = createEventSource({ fields: [...e.fields], seed: e.seed, genId: 0, genBase: e.gen });
  if (e.protocol === "syslog") {
    const enc = new SyslogEncoder(source, {
      facility: config.facility as number,
      severity: config.severity as number,
      hostname: config.hostname as string,
      appName: config.appName as string,
      procId: "0",
    });
    return (seq) => enc.encode(seq, 1).payload.length;
  }
  const enc = new FluentForwardEncoder(source, {
    tag: config.tag as string,
    entries: config.entries as "bin" | "str",
  });
  return (seq) => {
    const [, entries] = decode(enc.encode(seq, 1).payload) as [string, Uint8Array | string];
    return typeof entries === "string" ? Buffer.byteLength(entries) : entries.length;
  };
}

/**
 * Compare the app's `recordBytes` with the encodings of the records the sink holds (see the file comment): every
 * distinct seq in [0, sent) stored under the app's gen, read back through the sink's row reader in FIDELITY_PAGE
 * ranges, encoded and summed. Unchecked (with the reason) when the app reports no `recordBytes`, the protocol has no
 * per-record encoding here, the sink cannot read rows back, or it holds more than `limit` records (the content
 * check's `all` limit: beyond it rows are sampled, not all read).
 * @throws whatever the reader throws (a sink error while reading rows back)
 */
export async function appBytes(opts: {
  figures: AppFigures;
  encoding: RecordEncoding;
  reader?: StoredRowReader;
  sent: number;
  stored: number;
  limit: number;
}): Promise<AppBytesCheck> {
  const reported = opts.figures.recordBytes;
  if (reported === undefined) return { unchecked: "the app reports no recordBytes (app.results.map)" };
  const length = recordBytesOf(opts.encoding);
  if (!length)
    return {
      unchecked: `a record's own encoding is known for ${RECORD_BYTES_PROTOCOLS.join(", ")}, not ${opts.encoding.protocol}`,
    };
  if (!opts.reader) return { unchecked: "the sink's verifier cannot read rows back" };
  if (opts.stored > opts.limit)
    return {
      unchecked: `the sink holds ${opts.stored} records, more than the ${opts.limit} read back in full (fidelity.all)`,
    };
  const seen = new Set<number>();
  let atSink = 0;
  for (let from = 0; from < opts.sent; from += FIDELITY_PAGE) {
    for (const row of await opts.reader.readRange(
      opts.encoding.gen,
      from,
      Math.min(opts.sent, from + FIDELITY_PAGE),
    )) {
      if (seen.has(row.seq)) continue;
      seen.add(row.seq);
      atSink += length(row.seq);
    }
  }
  const unaccounted = reported - atSink;
  return {
    reported,
    atSink,
    records: seen.size,
    unaccounted,
    agrees: unaccounted === 0,
    per:
      opts.encoding.protocol === "syslog"
        ? "each record's RFC 6587 frame"
        : "each record's PackedForward entry [EventTime, record]",
  };
}

/** "bytes: 1,234,567 reported = 1,234,567 at the sink (each record's …)" or why they were not compared. */
export function appBytesLine(b: AppBytesCheck): string {
  if ("unchecked" in b) return `bytes not compared: ${b.unchecked}`;
  const n = (x: number): string => x.toLocaleString("en-US");
  const per = b.records > 0 ? `, ${(b.unaccounted / b.records).toFixed(2)} per record` : "";
  return b.agrees
    ? `bytes: ${n(b.reported)} reported = ${n(b.atSink)} at the sink over ${n(b.records)} records (${b.per})`
    : `bytes DISAGREE: ${n(b.reported)} reported, ${n(b.atSink)} at the sink over ${n(b.records)} records (${b.per}): ${n(b.unaccounted)} unaccounted${per}`;
}
