/**
 * A reader of OTLP/HTTP protobuf log requests (opentelemetry-proto: collector/logs/v1 ExportLogsServiceRequest,
 * logs/v1 ResourceLogs, ScopeLogs, LogRecord; common/v1 KeyValue, AnyValue), for the tests' counting receiver in
 * place of a sink: the log records' attributes, each as its scalar value. Only what the fluentforward receiver makes:
 * string, bool, int and double values (nested maps and arrays are read as null).
 *
 * Field numbers: ExportLogsServiceRequest.resource_logs = 1; ResourceLogs.scope_logs = 2; ScopeLogs.log_records = 2;
 * LogRecord.attributes = 6; KeyValue.key = 1, value = 2; AnyValue string_value = 1, bool_value = 2, int_value = 3,
 * double_value = 4.
 */

type Value = string | number | boolean | null;

/** The fields of one protobuf message: field number → its raw values (varints as bigint, length-delimited as bytes, 64-bit as 8 bytes). */
function fields(buf: Uint8Array): Map<number, Array<bigint | Uint8Array>> {
  const out = new Map<number, Array<bigint | Uint8Array>>();
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error("OTLP protobuf: truncated varint");
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    let value: bigint | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.subarray(i, i + 8);
      i += 8;
    } else if (wire === 2) {
      const n = Number(varint());
      value = buf.subarray(i, i + n);
      i += n;
    } else if (wire === 5) {
      value = buf.subarray(i, i + 4);
      i += 4;
    } else throw new Error(`OTLP protobuf: wire type ${wire} of field ${field}`);
    if (i > buf.length) throw new Error("OTLP protobuf: truncated message");
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const bytes = (m: Map<number, Array<bigint | Uint8Array>>, n: number): Uint8Array[] =>
  (m.get(n) ?? []).filter((v): v is Uint8Array => v instanceof Uint8Array);

function anyValue(buf: Uint8Array): Value {
  const f = fields(buf);
  const s = bytes(f, 1)[0];
  if (s) return Buffer.from(s).toString("utf8");
  const b = f.get(2)?.[0];
  if (typeof b === "bigint") return b !== 0n;
  const n = f.get(3)?.[0];
  if (typeof n === "bigint") return Number(BigInt.asIntN(64, n));
  const d = bytes(f, 4)[0];
  if (d) return Buffer.from(d).readDoubleLE(0);
  return null;
}

/** The attributes of every log record in one ExportLogsServiceRequest body, in order. @throws Error on bytes that are not protobuf */
export function otlpLogRecords(body: Uint8Array): Array<Record<string, Value>> {
  const out: Array<Record<string, Value>> = [];
  for (const rl of bytes(fields(body), 1))
    for (const sl of bytes(fields(rl), 2))
      for (const lr of bytes(fields(sl), 2)) {
        const rec: Record<string, Value> = {};
        for (const kv of bytes(fields(lr), 6)) {
          const f = fields(kv);
          const key = Buffer.from(bytes(f, 1)[0] ?? new Uint8Array()).toString("utf8");
          const v = bytes(f, 2)[0];
          rec[key] = v ? anyValue(v) : null;
        }
        out.push(rec);
      }
  return out;
}
