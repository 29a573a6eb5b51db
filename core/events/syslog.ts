/**
 * syslog: RFC 5424 messages in RFC 6587 octet-counting frames, for syslog over TCP.
 *
 * Frame (RFC 6587 §3.4.1): `MSG-LEN SP SYSLOG-MSG`, MSG-LEN the decimal octet count of SYSLOG-MSG (no leading zero),
 * no trailer, so a message may contain any byte, LF included.
 * Message (RFC 5424 §6): `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [SP MSG]`
 * - PRI = facility × 8 + severity (§6.2.1; default local0.info = 134); VERSION 1.
 * - TIMESTAMP (§6.2.3): the event's first timestamp field as `YYYY-MM-DDThh:mm:ss.mmmZ`; without one, the send time.
 * - HOSTNAME, APP-NAME, PROCID, MSGID (§6.2.4-7): configured, printable US-ASCII (33..126) of at most 255, 48, 128
 *   and 32 octets; "-" is the NILVALUE.
 * - STRUCTURED-DATA (§6.3): one element `[ib@32473 <name>="<value>" ...]` holding every field except the one carried
 *   in MSG, then gen, seq and sent_at (32473 is the example enterprise number reserved for documentation by RFC 5612;
 *   configure another SD-ID if you own one). In PARAM-VALUE, `"`, `\` and `]` are escaped with a backslash (§6.3.3).
 * - MSG (§6.4): the event's last string field (where replayed log lines go), as octets without a BOM (MSG-ANY);
 *   `bom: true` prefixes the UTF-8 BOM (MSG-UTF8). Without a string field there is no MSG.
 */
import {
  ByteWriter,
  checkRange,
  directTextOf,
  type EncodePathOption,
  PLACEHOLDER_SENT_AT_MS,
  put,
  stampBatch,
  type StampedBatch,
} from "./encoding.ts";
import { MAX_REPLAY_LINE_BYTES } from "./replay-lines.ts";
import { DEFAULT_STRING_SIZE, type DirectText, type EventRow, type RowSource } from "./source.ts";
import { TRACKING_FIELDS, type EventField } from "./types.ts";

export interface SyslogOptions extends EncodePathOption {
  /** 0..23, default 16 (local0) */
  facility?: number;
  /** 0..7, default 6 (informational) */
  severity?: number;
  hostname?: string;
  appName?: string;
  procId?: string;
  msgId?: string;
  /** SD-ID of the element carrying the fields, default "ib@32473" */
  sdId?: string;
  /** prefix MSG with the UTF-8 BOM (RFC 5424 MSG-UTF8), default false */
  bom?: boolean;
}

/** The default SD-ID: name "ib" under the documentation enterprise number 32473 (RFC 5612). */
export const SYSLOG_SD_ID = "ib@32473";

const PRINTUSASCII = /^[\x21-\x7e]+$/;
const SD_NAME = /^[\x21-\x7e]{1,32}$/;

function header(name: string, v: string, max: number): string {
  if (v.length > max || !PRINTUSASCII.test(v))
    throw new RangeError(
      `syslog ${name} "${v}" must be 1..${max} printable US-ASCII characters (RFC 5424 §6.2)`,
    );
  return v;
}

function sdName(what: string, v: string): string {
  if (!SD_NAME.test(v) || /[= \]"]/.test(v))
    throw new RangeError(
      `syslog ${what} "${v}" must be 1..32 printable US-ASCII characters other than '=', ' ', ']' and '"' (RFC 5424 §6.3)`,
    );
  return v;
}

export class SyslogEncoder {
  private readonly w = new ByteWriter();
  private readonly head: Buffer;
  private readonly afterTime: Buffer;
  private readonly params: Array<{ i: number; prefix: Buffer }>;
  private readonly tail: { gen: Buffer; seq: Buffer; sent: Buffer; close: Buffer };
  private readonly tsField: number;
  private readonly msgField: number;
  /** the template path (see encode) */
  private readonly direct: DirectText | undefined;
  /** template path: `" gen="<genId>" seq="`, `" sent_at="<placeholder>"] [BOM]` and the sent_at slot's offset in it */
  private readonly genSeq: Buffer;
  private readonly sentClose: Buffer;
  private readonly sentSlot: number;
  /** template path: MSG-LEN digits of the previous frame (the next one is written after that much room) */
  private lenDigits = 3;

  /** @throws RangeError for a facility, severity, header value, SD-ID or field name outside RFC 5424 */
  constructor(
    private readonly source: RowSource,
    options: SyslogOptions = {},
  ) {
    const facility = options.facility ?? 16;
    const severity = options.severity ?? 6;
    if (!Number.isInteger(facility) || facility < 0 || facility > 23)
      throw new RangeError(`syslog facility ${facility} is not 0..23`);
    if (!Number.isInteger(severity) || severity < 0 || severity > 7)
      throw new RangeError(`syslog severity ${severity} is not 0..7`);
    this.head = Buffer.from(`<${facility * 8 + severity}>1 `);
    const host = header("HOSTNAME", options.hostname ?? "ingestbench", 255);
    const app = header("APP-NAME", options.appName ?? "ingestbench", 48);
    const proc = header("PROCID", options.procId ?? "-", 128);
    const msgId = header("MSGID", options.msgId ?? "-", 32);
    const sdId = sdName("SD-ID", options.sdId ?? SYSLOG_SD_ID);
    this.afterTime = Buffer.from(` ${host} ${app} ${proc} ${msgId} [${sdId}`);
    const fields = source.fields;
    this.tsField = fields.findIndex((f) => f.type === "timestamp");
    this.msgField = fields.map((f) => f.type).lastIndexOf("string");
    this.params = [];
    fields.forEach((f, i) => {
      if (i !== this.msgField)
        this.params.push({ i, prefix: Buffer.from(` ${sdName("PARAM-NAME", f.name)}="`) });
    });
    this.tail = {
      gen: Buffer.from(' gen="'),
      seq: Buffer.from('" seq="'),
      sent: Buffer.from('" sent_at="'),
      close: Buffer.from(this.msgField >= 0 ? `"] ${options.bom ? "\ufeff" : ""}` : '"]', "utf8"),
    };
    this.direct = directTextOf(source, options);
    this.genSeq = Buffer.concat([this.tail.gen, Buffer.from(String(source.genId)), this.tail.seq]);
    const placeholder = new ByteWriter(32);
    placeholder.time(PLACEHOLDER_SENT_AT_MS, "iso");
    this.sentSlot = this.tail.sent.length;
    this.sentClose = Buffer.concat([this.tail.sent, placeholder.take(0, 0).payload, this.tail.close]);
  }

  /**
   * Octet-counted frames for seqs [from, from + count), back to back. Two paths with the same bytes
   * (test/core/events/fast-path.test.ts): the reference path writes each message after 11 bytes of room and moves
   * it back once its length is known; the template path (a seeded source, see JsonObjectRows in encoding.ts) copies
   * pre-encoded constants, writes generated text straight into the frame, and leaves as much room for MSG-LEN as the
   * previous frame needed, so a message moves only when its length has another number of digits.
   * @throws RangeError for a bad range
   */
  encode(from: number, count: number): StampedBatch {
    checkRange(from, count);
    const w = this.w;
    w.reset();
    const direct = this.direct;
    if (direct)
      for (let seq = from; seq < from + count; seq++) this.frameTemplate(w, direct.fillScalars(seq), direct);
    else for (let seq = from; seq < from + count; seq++) this.frame(w, this.source.fill(seq));
    return w.take(from, count);
  }

  private frameTemplate(w: ByteWriter, row: EventRow, direct: DirectText): void {
    const gen = direct.generated;
    let bound = 96 + this.afterTime.length + this.genSeq.length + this.sentClose.length;
    for (const p of this.params) bound += p.prefix.length + (row.types[p.i] === 1 ? 2 * row.len[p.i]! : 32);
    if (this.msgField >= 0) bound += row.len[this.msgField]!;
    w.ensure(bound);
    const frameStart = w.pos;
    const msgStart = frameStart + this.lenDigits + 1;
    const out = w.buf;
    w.pos = put(out, msgStart, this.head);
    if (this.tsField >= 0) w.time(row.num[this.tsField]!, "iso");
    else {
      w.slot("iso");
      w.time(PLACEHOLDER_SENT_AT_MS, "iso");
    }
    w.pos = put(out, w.pos, this.afterTime);
    for (const p of this.params) {
      w.pos = put(out, w.pos, p.prefix);
      if (gen[p.i]) {
        direct.writeText(row.seq, p.i, out, w.pos);
        w.pos += row.len[p.i]!;
      } else this.value(w, row, p.i);
      out[w.pos++] = 0x22;
    }
    w.pos = put(out, w.pos, this.genSeq);
    w.int(row.seq);
    w.slot("iso", w.pos + this.sentSlot);
    w.pos = put(out, w.pos, this.sentClose);
    const m = this.msgField;
    if (m >= 0 && !row.isNull[m]) {
      if (gen[m]) direct.writeText(row.seq, m, out, w.pos);
      else out.set(row.bytes[m]!.subarray(0, row.len[m]!), w.pos);
      w.pos += row.len[m]!;
    }
    const len = w.pos - msgStart;
    const digits = len < 10 ? 1 : len < 100 ? 2 : len < 1000 ? 3 : String(len).length;
    if (digits !== this.lenDigits) {
      // another number of digits than the previous frame: move the message (and its slots) to where it belongs
      const start = frameStart + digits + 1;
      out.copyWithin(start, msgStart, w.pos);
      w.shiftSlots(msgStart, start - msgStart);
      w.pos = start + len;
      this.lenDigits = digits;
    }
    let q = frameStart + digits - 1;
    for (let x = len; q >= frameStart; x = (x / 10) | 0) out[q--] = 0x30 + (x % 10);
    out[frameStart + digits] = 0x20;
  }

  private frame(w: ByteWriter, row: EventRow): void {
    const frameStart = w.pos;
    w.ensure(11);
    w.pos += 11; // room for MSG-LEN (≤ 10 digits) and SP; the message is moved back once its length is known
    const msgStart = w.pos;
    w.bytes(this.head);
    if (this.tsField >= 0) w.time(row.num[this.tsField]!, "iso");
    else {
      w.slot("iso");
      w.time(PLACEHOLDER_SENT_AT_MS, "iso");
    }
    w.bytes(this.afterTime);
    for (const p of this.params) {
      w.bytes(p.prefix);
      this.value(w, row, p.i);
      w.byte(0x22);
    }
    w.bytes(this.tail.gen);
    w.int(this.source.genId);
    w.bytes(this.tail.seq);
    w.int(row.seq);
    w.bytes(this.tail.sent);
    w.slot("iso");
    w.time(PLACEHOLDER_SENT_AT_MS, "iso");
    w.bytes(this.tail.close);
    if (this.msgField >= 0 && !row.isNull[this.msgField])
      w.bytes(row.bytes[this.msgField]!, row.len[this.msgField]!);
    const len = w.pos - msgStart;
    const digits = String(len);
    const start = frameStart + digits.length + 1;
    w.buf.copyWithin(start, msgStart, w.pos);
    w.shiftSlots(msgStart, start - msgStart);
    w.buf.write(digits, frameStart, "latin1");
    w.buf[frameStart + digits.length] = 0x20;
    w.pos = start + len;
  }

  /** A PARAM-VALUE: `"`, `\` and `]` escaped (RFC 5424 §6.3.3). */
  private value(w: ByteWriter, row: EventRow, i: number): void {
    if (row.isNull[i]) return;
    switch (row.types[i]) {
      case 0:
        return w.time(row.num[i]!, "iso");
      case 1: {
        const b = row.bytes[i]!;
        const len = row.len[i]!;
        w.ensure(2 * len);
        const out = w.buf;
        let p = w.pos;
        for (let k = 0; k < len; k++) {
          const c = b[k]!;
          if (c === 0x22 || c === 0x5c || c === 0x5d) out[p++] = 0x5c;
          out[p++] = c;
        }
        w.pos = p;
        return;
      }
      case 2:
        return w.int(row.num[i]!);
      case 3:
        return w.float(row.num[i]!);
      default:
        return w.ascii(row.num[i] ? "true" : "false");
    }
  }

  /** Write the send time into sent_at (and TIMESTAMP when the event has no timestamp field). */
  stamp(batch: StampedBatch, sentAt: Date): void {
    stampBatch(batch, sentAt);
  }
}

/** Octets of a PARAM-VALUE that is not a string, at most: int64, a float's shortest form, an ISO 8601 time. */
const SD_NUMBER_MAX = 32;

/**
 * The largest SYSLOG-MSG (without its frame's MSG-LEN) SyslogEncoder can make for `fields`, in octets: an upper
 * bound, not an estimate. Header fields at RFC 5424 §6's maximum lengths (PRI 5, TIMESTAMP 32, HOSTNAME 255, APP-NAME
 * 48, PROCID 128, MSGID 32), the SD element with every field but MSG at its largest, a string's value escaped
 * throughout (§6.3.3, twice its size), and MSG at the larger of its size and a replayed line's cut
 * (MAX_REPLAY_LINE_BYTES) with a BOM. Collectors take this as their message size limit (syslog-ng's `log-msg-size`,
 * rsyslog's `maxMessageSize`), so that no frame a generator sends is refused for its size (syslog-ng closes a
 * connection whose frame exceeds it, and every frame queued behind it on that connection is lost).
 */
export function maxSyslogMessageBytes(fields: readonly EventField[]): number {
  const msg = fields.map((f) => f.type).lastIndexOf("string");
  let bytes = 5 + 2 + 32 + 255 + 48 + 128 + 32 + 6; // <PRI>1, the header's fields, their separators
  bytes += 2 + 32; // [SD-ID ... ]
  for (const [i, f] of [...fields, ...TRACKING_FIELDS].entries()) {
    if (i === msg) continue;
    bytes +=
      1 +
      32 +
      3 +
      (f.type === "string" ? 2 * ((f as EventField).size ?? DEFAULT_STRING_SIZE) : SD_NUMBER_MAX); // SP name="value"
  }
  if (msg >= 0) bytes += 1 + 3 + Math.max(fields[msg]!.size ?? DEFAULT_STRING_SIZE, MAX_REPLAY_LINE_BYTES);
  return bytes;
}
