// The victorialogs verifier against the real VictoriaLogs 1.52.2 (the project's Go module build, started by the
// component on a direct host), fed by the generators' own encoders over the paths the component hands out: the
// Elasticsearch bulk, Loki push and JSON-lines bodies exactly as es-bulk, loki-push and http-json send them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkFidelity } from "../../../core/fidelity.ts";
import { ES_BULK_CONTENT_TYPE, EsBulkEncoder, parseBulkResponse } from "../../../core/events/es-bulk.ts";
import { HttpJsonEncoder } from "../../../core/events/http-json.ts";
import { LokiPushEncoder } from "../../../core/events/loki-push.ts";
import { createEventSource } from "../../../core/events/source.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { StampedBatch } from "../../../core/events/encoding.ts";
import { genBaseOf } from "../../../core/ledger.ts";
import type { RunningComponent } from "../../../core/component.ts";
import type { Verifier } from "../../../core/verifier.ts";
import { createDirectHost, type DirectHost } from "../../../test/helpers/direct-host.ts";
import { victorialogs, victoriaLogsSchema } from "./component.ts";
import { victoriaLogsVerifier } from "./verifier.ts";

const PORT = 39431;
const SEED = 42;
const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 120 },
  { name: "level", type: "int" },
  { name: "ratio", type: "float" },
  { name: "ok", type: "bool" },
];

let host: DirectHost | undefined;
let server: RunningComponent | undefined;
const verifiers: Verifier[] = [];

beforeAll(async () => {
  host = await createDirectHost("sink", "root");
  server = await victorialogs.startLocal(host, victoriaLogsSchema.parse({ httpListenAddr: `:${PORT}` }));
}, 120_000);

afterAll(async () => {
  for (const v of verifiers) await v.close().catch(() => undefined);
  await server?.stop().catch(() => undefined);
  await host?.cleanup();
});

function verifier(genBase?: number): Verifier {
  const v = victoriaLogsVerifier.create({
    host: "127.0.0.1",
    port: PORT,
    params: server!.params,
    fields,
    ...(genBase !== undefined ? { genBase } : {}),
  });
  verifiers.push(v);
  return v;
}

/** POST a stamped batch to `path` (one of the component's params), as the generator does; the answer's text. */
async function post(
  path: string,
  contentType: string,
  batch: StampedBatch,
): Promise<{ status: number; body: string }> {
  const r = await fetch(`http://127.0.0.1:${PORT}${path}`, {
    method: "POST",
    headers: { "Content-Type": contentType },
    body: new Uint8Array(batch.payload),
  });
  return { status: r.status, body: await r.text() };
}

type Protocol = "es-bulk" | "loki-push" | "jsonline";

/** Send seqs [from, from + count) of generator `genId` (stored gen genBase + genId) over `protocol`, stamped now. */
async function send(
  protocol: Protocol,
  genId: number,
  from: number,
  count: number,
  genBase = 0,
): Promise<void> {
  const source = createEventSource({ fields, seed: SEED, genId, genBase });
  const p = server!.params;
  if (protocol === "es-bulk") {
    const e = new EsBulkEncoder(source, { index: "ib_events" });
    const b = e.encode(from, count);
    e.stamp(b, new Date());
    const r = await post(`${p.bulkPath}&filter_path=errors`, ES_BULK_CONTENT_TYPE, b);
    expect(r.status, r.body).toBe(200);
    // VictoriaLogs answers each item as created: the generator's parser maps them to accepted seqs
    expect(parseBulkResponse(r.status, r.body, from, count)).toMatchObject({
      accepted: count,
      rejectedSeqs: [],
    });
  } else if (protocol === "loki-push") {
    const e = new LokiPushEncoder(source);
    const b = e.encode(from, count);
    e.stamp(b, new Date());
    const r = await post(p.lokiPushPath!, "application/json", b);
    expect(r.status, r.body).toBe(204);
  } else {
    const e = new HttpJsonEncoder(source, { framing: "ndjson", timeFormat: "iso" });
    const b = e.encode(from, count);
    e.stamp(b, new Date());
    const r = await post(p.path!, "application/x-ndjson", b);
    expect(r.status, r.body).toBe(200);
  }
}

/**
 * An OTLP/HTTP logs request (opentelemetry-proto logs/v1/logs.proto and collector/logs/v1/logs_service.proto, field
 * numbers as there), the shape an OpenTelemetry Collector's otlphttp exporter POSTs as application/x-protobuf: one
 * ResourceLogs, one ScopeLogs, one LogRecord per event, every field an attribute (as the Collector's fluentforward
 * receiver makes of a record without a `log` or `message` key), no body, time_unix_nano 0 and the observed time set.
 */
function otlpLogsRequest(
  events: Array<Record<string, unknown>>,
  typeOf: (k: string) => EventField["type"] | "int",
): Buffer {
  const varint = (n: bigint): Buffer => {
    const out: number[] = [];
    let v = BigInt.asUintN(64, n);
    do {
      const b = Number(v & 0x7fn);
      v >>= 7n;
      out.push(v > 0n ? b | 0x80 : b);
    } while (v > 0n);
    return Buffer.from(out);
  };
  const tag = (field: number, wire: number): Buffer => varint(BigInt((field << 3) | wire));
  const bytes = (field: number, b: Buffer): Buffer =>
    Buffer.concat([tag(field, 2), varint(BigInt(b.length)), b]);
  const fixed64 = (field: number, n: bigint): Buffer => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(n);
    return Buffer.concat([tag(field, 1), b]);
  };
  const anyValue = (type: EventField["type"] | "int", v: unknown): Buffer => {
    if (type === "int") return Buffer.concat([tag(3, 0), varint(BigInt(v as number))]); // int_value
    if (type === "float") {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(v as number);
      return Buffer.concat([tag(4, 1), b]); // double_value
    }
    if (type === "bool") return Buffer.concat([tag(2, 0), varint(v ? 1n : 0n)]); // bool_value
    return bytes(1, Buffer.from(String(v), "utf8")); // string_value
  };
  const observed = BigInt(Date.now()) * 1_000_000n;
  const records = events.map((e) =>
    bytes(
      2, // ScopeLogs.log_records
      Buffer.concat([
        ...Object.entries(e).map(([k, v]) =>
          bytes(6, Buffer.concat([bytes(1, Buffer.from(k)), bytes(2, anyValue(typeOf(k), v))])),
        ), // LogRecord.attributes: KeyValue { key = 1, value = 2 }
        fixed64(11, observed), // LogRecord.observed_time_unix_nano
      ]),
    ),
  );
  const scopeLogs = bytes(2, Buffer.concat(records)); // ResourceLogs.scope_logs
  return bytes(1, scopeLogs); // ExportLogsServiceRequest.resource_logs
}

describe("victorialogs verifier (real VictoriaLogs 1.52.2, the project's Go module build)", () => {
  const v = (): Verifier => verifiers[0]!;

  it("real VictoriaLogs: counts what es-bulk, loki-push and JSON lines stored (force-flushed for a full sample) and the newest send time", async () => {
    const ver = verifier();
    await ver.prepare();
    const empty = await ver.sample({ full: true });
    expect(empty).toMatchObject({ stored: 0, newestSentAtMs: null });
    const t0 = Date.now();
    await send("es-bulk", 0, 0, 500);
    await send("es-bulk", 0, 500, 500);
    await send("loki-push", 1, 0, 1000);
    await send("jsonline", 2, 0, 1000);
    const s = await ver.sample({ full: true });
    expect(s.stored).toBe(3000);
    expect(s.tAfter).toBeGreaterThanOrEqual(s.tBefore);
    expect(s.newestSentAtMs).toBeGreaterThanOrEqual(t0 - 1);
    expect(s.newestSentAtMs).toBeLessThanOrEqual(Date.now() + 1);
    // a live sample reads what VictoriaLogs has made searchable itself (about a second after it took it)
    await send("jsonline", 3, 0, 10);
    let live = await ver.sample();
    for (let i = 0; i < 50 && live.stored < 3010; i++) {
      await new Promise((r) => setTimeout(r, 100));
      live = await ver.sample();
    }
    expect(live.stored).toBe(3010);
    const l = await ver.ledger([1000, 1000, 1000, 10], [[], [], [], []]);
    expect(l).toMatchObject({
      sent: 3010,
      accepted: 3010,
      stored: 3010,
      distinct: 3010,
      lost: 0,
      duplicated: 0,
      unexpected: 0,
      missingRanges: [],
    });
  });

  it("real VictoriaLogs: the content check reads every field back through all three protocols unaltered", async () => {
    const res = await checkFidelity(v().rows!, {
      fields,
      seed: SEED,
      sent: [1000, 1000, 1000, 10],
      stored: 3010,
      limits: { all: 10_000, sample: 10 },
    });
    expect(res).toMatchObject({ mode: "all", rowsCompared: 3010, seqsCompared: 3010, altered: 0 });
    const sample = await checkFidelity(v().rows!, {
      fields,
      seed: SEED,
      sent: [1000, 1000, 1000, 10],
      stored: 3010,
      limits: { all: 0, sample: 25 },
    });
    expect(sample).toMatchObject({ mode: "sample", sampleSize: 25, seqsCompared: 25, altered: 0 });
  });

  it("real VictoriaLogs: exact ledger of seqs never stored, a batch stored twice, seqs never sent, rejected seqs, entries without gen, and another run's", async () => {
    // gen 4: seqs 0..99 and 150..299 (100..149 never reach the sink), 200..209 sent twice
    await send("jsonline", 4, 0, 100);
    await send("es-bulk", 4, 150, 150);
    await send("loki-push", 4, 200, 10);
    // gen 2: 5 seqs beyond what the generator says it sent
    await send("jsonline", 2, 1000, 5);
    // an entry without gen or seq, and one of another run's generator-id space
    const r = await fetch(`http://127.0.0.1:${PORT}${server!.params.path}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-ndjson" },
      body: `{"msg":"no keys","sent_at":"${new Date().toISOString()}"}\n`,
    });
    expect(r.status).toBe(200);
    await send("jsonline", 0, 0, 3, genBaseOf("20261201T093000Z-123456"));
    // the generators' claims: gen 4 sent 0..299 with 290..299 rejected by the sink's answer
    const l = await v().ledger([1000, 1000, 1000, 10, 300], [[], [], [], [], [[290, 299]]]);
    expect(l).toEqual({
      sent: 3310,
      accepted: 3300,
      stored: 3010 + 5 + 1 + 100 + 150 + 10,
      distinct: 3010 + 5 + 1 + 250,
      lost: 50,
      duplicated: 10,
      overwritten: 0,
      rejected: 10,
      unexpected: 6,
      missingRanges: [[4, 100, 149]],
      foreign: 3,
      rejectedStored: 10,
      deduplicated: 0,
    });
  });

  it("real VictoriaLogs: a run with its own generator-id space counts only its own entries; a changed field is altered", async () => {
    const base = genBaseOf("20261201T094000Z-abcdef");
    const mine = verifier(base);
    await mine.prepare();
    await send("es-bulk", 0, 0, 200, base);
    await send("loki-push", 1, 0, 50, base);
    // seq 7 of generator 1 stored again with a truncated msg, as a collector that cut the text would
    const doc = JSON.stringify({
      ts: "2024-11-07T00:00:00.000Z",
      msg: "cut",
      level: 1,
      ratio: 0.5,
      ok: true,
      gen: base + 1,
      seq: 7,
      sent_at: new Date().toISOString(),
    });
    const r = await fetch(`http://127.0.0.1:${PORT}${server!.params.path}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-ndjson" },
      body: `${doc}\n`,
    });
    expect(r.status).toBe(200);
    const s = await mine.sample({ full: true });
    expect(s.stored).toBe(251); // this run's only: the earlier tests' gens and the stray entry are not counted
    const l = await mine.ledger([200, 50], [[], []]);
    // with a genBase the ledger reads everything the sink holds (no time bound): the earlier test's entry without
    // gen or seq is unexpected here too, the earlier gens are foreign
    expect(l).toMatchObject({ stored: 252, distinct: 251, duplicated: 1, lost: 0, unexpected: 1 });
    expect(l.foreign).toBeGreaterThanOrEqual(3010);
    const res = await checkFidelity(mine.rows!, {
      fields,
      seed: SEED,
      sent: [200, 50],
      genBase: base,
      stored: 251,
      limits: { all: 10_000, sample: 10 },
    });
    expect(res).toMatchObject({ mode: "all", rowsCompared: 251, altered: 1 });
    expect(res.examples[0]).toMatchObject({ gen: 1, seq: 7 });
  });

  it("real VictoriaLogs: OTLP/protobuf records at otlpLogsPath, their fields as attributes (as an OpenTelemetry Collector's otlphttp exporter sends them), are counted, accounted and read back unaltered", async () => {
    const base = genBaseOf("20261201T095000Z-0a1b2c");
    const mine = verifier(base);
    await mine.prepare();
    // the events as the generators make them (http-json's encoder), then as OTLP attributes with their types
    const source = createEventSource({ fields, seed: SEED, genId: 0, genBase: base });
    const e = new HttpJsonEncoder(source, { framing: "ndjson", timeFormat: "iso" });
    const b = e.encode(0, 300);
    e.stamp(b, new Date());
    const events = b.payload
      .toString("utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const types = new Map<string, EventField["type"] | "int">(fields.map((f) => [f.name, f.type]));
    const body = otlpLogsRequest(events, (k) =>
      k === "gen" || k === "seq" ? "int" : (types.get(k) ?? "string"),
    );
    const r = await fetch(`http://127.0.0.1:${PORT}${server!.params.otlpLogsPath}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-protobuf" },
      body: new Uint8Array(body),
    });
    expect(r.status, await r.text()).toBe(200);
    const s = await mine.sample({ full: true });
    expect(s.stored).toBe(300);
    // the newest send time is the sent_at attribute (kept as a field on this path), not the observed time
    expect(s.newestSentAtMs).toBe(Date.parse(events.at(-1)!.sent_at as string));
    const l = await mine.ledger([300], [[]]);
    // the entry without gen or seq of an earlier test is unexpected (no time bound with a genBase)
    expect(l).toMatchObject({ sent: 300, stored: 301, distinct: 301, lost: 0, duplicated: 0, unexpected: 1 });
    const res = await checkFidelity(mine.rows!, {
      fields,
      seed: SEED,
      sent: [300],
      genBase: base,
      stored: 300,
      limits: { all: 10_000, sample: 10 },
    });
    expect(res).toMatchObject({ mode: "all", rowsCompared: 300, altered: 0 });
  });
});
