/**
 * Where each column of the verifier's table is found in a message of the `syslog` generator, for every collector
 * that receives it (syslog-ng, rsyslog): the single place that restates the encoder's layout
 * (core/events/syslog.ts) on the collector side.
 *
 * The syslog encoder puts the event's last string field in MSG (RFC 5424 §6.4) and every other field, then gen,
 * seq and sent_at, as PARAMs of one SD element `[<sdId> name="value" ...]` (§6.3). Table order (the PostgreSQL
 * verifier's CREATE TABLE): the fields in scenario order, then gen, seq, sent_at.
 */
import { SYSLOG_SD_ID } from "./syslog.ts";
import type { EventField, FieldType } from "./types.ts";

/** One column: its name, the field type it holds (gen and seq: "int"; sent_at: "timestamp"), and its source. */
export interface SyslogColumn {
  column: string;
  type: FieldType;
  /** "msg": the MSG part; "sd": the PARAM `param` of the SD element `sdId` */
  from: { part: "msg" } | { part: "sd"; sdId: string; param: string };
}

/** The columns in table order and where each comes from. `sdId` defaults to the encoder's "ib@32473". */
export function syslogColumns(fields: readonly EventField[], sdId = SYSLOG_SD_ID): SyslogColumn[] {
  const msgField = fields.map((f) => f.type).lastIndexOf("string");
  const cols: SyslogColumn[] = fields.map((f, i) => ({
    column: f.name,
    type: f.type,
    from: i === msgField ? { part: "msg" } : { part: "sd", sdId, param: f.name },
  }));
  cols.push(
    { column: "gen", type: "int", from: { part: "sd", sdId, param: "gen" } },
    { column: "seq", type: "int", from: { part: "sd", sdId, param: "seq" } },
    { column: "sent_at", type: "timestamp", from: { part: "sd", sdId, param: "sent_at" } },
  );
  return cols;
}
