/**
 * How the sample application's exporter (./sender.ts) frames a drain's records, per protocol, with the project's
 * encoders (core/events/syslog.ts, core/events/fluent-forward.ts) and the scenario's `generator` block, as the
 * harness's own generator of that protocol frames generator 0's records (harness/generators/syslog.ts,
 * harness/generators/fluent-forward.ts):
 *
 * - `syslog`: each record one RFC 5424 message in an RFC 6587 §3.4.1 octet-counting frame (`MSG-LEN SP SYSLOG-MSG`),
 *   facility, severity, hostname and APP-NAME from the block, PROCID "0" (the generator index); the frames back to back.
 * - `fluent-forward`: the Forward Protocol v1 (fluent/fluentd wiki, "Forward Protocol Specification v1") PackedForward
 *   mode: `[tag, MessagePackEventStream, option]`, the records' entries `[EventTime, record]` (EventTime the msgpack
 *   ext type 0, `d7 00` + seconds and nanoseconds as big-endian uint32) back to back as one bin, option
 *   `{"size": <entries>}`. The entries come from core's encoder; the message around them is written by
 *   @msgpack/msgpack (a drain's seqs are not one contiguous seq range, so they cannot be one encoder batch). The
 *   spec's acknowledgements (option "chunk") are not asked for, and entries as str (for old msgpack receivers) are not
 *   written: a block with `ack: true` or `entries: str` is refused.
 *
 * `recordBytes` is the part of the payload that is the records' own encodings (harness/runner/app-bytes.ts): all of it
 * for syslog, the entries for fluent-forward (the message's array header, tag, bin header and option belong to no
 * record).
 */
import { decode, encode } from "@msgpack/msgpack";
import { stampBatch } from "../../core/events/encoding.ts";
import { FluentForwardEncoder } from "../../core/events/fluent-forward.ts";
import { createEventSource } from "../../core/events/source.ts";
import { SyslogEncoder } from "../../core/events/syslog.ts";
import type { EventField } from "../../core/events/types.ts";

/** What a drain's records became: the bytes to write, and how many of them are the records' own encodings. */
export interface Framed {
  payload: Buffer;
  recordBytes: number;
}

/** The protocols this exporter speaks. */
export const PROTOCOLS = ["syslog", "fluent-forward"] as const;

/**
 * A framer of record seqs (any order, holes allowed) sent at `sentAtMs`, for `protocol` with its `generator` block.
 * @throws RangeError for another protocol, `ack: true`, `entries: str`, or a block value outside the protocol (e.g. an APP-NAME of 49 bytes)
 */
export function framer(cfg: {
  protocol: string;
  generator: Record<string, unknown>;
  gen: number;
  seed: number;
  fields: EventField[];
}): (seqs: readonly number[], sentAtMs: number) => Framed {
  const source = createEventSource({ fields: cfg.fields, seed: cfg.seed, genId: 0, genBase: cfg.gen });
  const g = cfg.generator;
  if (cfg.protocol === "syslog") {
    const enc = new SyslogEncoder(source, {
      facility: g.facility as number | undefined,
      severity: g.severity as number | undefined,
      hostname: g.hostname as string | undefined,
      appName: g.appName as string | undefined,
      procId: "0",
    });
    return (seqs, sentAtMs) => {
      const frames = seqs.map((s) => enc.encode(s, 1));
      for (const f of frames) stampBatch(f, sentAtMs);
      const payload = Buffer.concat(frames.map((f) => f.payload));
      return { payload, recordBytes: payload.length };
    };
  }
  if (cfg.protocol === "fluent-forward") {
    if (g.ack === true)
      throw new RangeError("this exporter does not wait for Forward acks (option chunk): set ack: false");
    if (g.entries === "str")
      throw new RangeError(
        "this exporter writes the entries as bin (the spec's MessagePackEventStream), not str: set entries: bin",
      );
    const tag = (g.tag as string | undefined) ?? "ingestbench";
    const enc = new FluentForwardEncoder(source, { tag });
    return (seqs, sentAtMs) => {
      const entries = Buffer.concat(
        seqs.map((s) => {
          const one = enc.encode(s, 1);
          stampBatch(one, sentAtMs);
          const [, stream] = decode(one.payload) as [string, Uint8Array];
          return stream;
        }),
      );
      // @msgpack/msgpack writes a Uint8Array as bin (bin 8/16/32 by length), the option map as a fixmap
      const payload = Buffer.from(encode([tag, entries, { size: seqs.length }]));
      return { payload, recordBytes: entries.length };
    };
  }
  throw new RangeError(`this exporter speaks ${PROTOCOLS.join(", ")}, not ${cfg.protocol}`);
}
