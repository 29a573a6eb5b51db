// The otelcol component against the real Collector: the project's own build (scripts/build-otelcol.sh, which CI runs
// before the tests; a missing build FAILS these tests). The build's `components` against ./distribution/components.go,
// the renders the local platform uses checked by the real `validate`, and real Forward records from the fluent-forward
// encoder through the real Collector in a host into a counting OTLP/HTTP receiver on VictoriaLogs' path (a node:http
// server here; the end-to-end tests in test/e2e/otelcol-victorialogs.test.ts use the real VictoriaLogs).
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { connect } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Downstream, RunningComponent } from "../../../core/component.ts";
import { VerificationError } from "../../../core/errors.ts";
import { createEventSource } from "../../../core/events/source.ts";
import { FluentForwardEncoder } from "../../../core/events/fluent-forward.ts";
import type { EventField } from "../../../core/events/types.ts";
import { collectorTestScope, waitForCount } from "../../../test/helpers/collector-test.ts";
import { distributionComponents, otelcolBuildPath, otelcolBuilt } from "./build.ts";
import { OTELCOL_PROGRAM, otelcol, otelcolPressure, otelcolSignals } from "./component.ts";
import { otlpLogRecords } from "./otlp-reader.ts";
import { OTELCOL_LOCAL_SINKS, OTELCOL_PIN, otelcolSchema, renderOtelcolConfig } from "./render.ts";

const scope = collectorTestScope("ib-test-otelcol-");

/** The built binary; fails (never skips) when the build is absent. */
function built(): string {
  const bin = otelcolBuilt();
  if (bin === null)
    throw new Error(
      `the project's Collector build is absent (${otelcolBuildPath() ?? "no Go on PATH"}): run \`bash scripts/build-otelcol.sh\` (CI's .ci/run does)`,
    );
  return bin;
}

const FIELDS: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "level", type: "string", size: 5 },
  { name: "code", type: "int" },
  { name: "msg", type: "string", size: 60 },
];

/** A counting OTLP/HTTP receiver on 127.0.0.1 (VictoriaLogs' path): every record's attributes, answers `status`. */
async function otlpReceiver(): Promise<{
  port: number;
  records: Array<Record<string, string | number | boolean | null>>;
  requests: number;
  status: number;
  close(): Promise<void>;
}> {
  const state = {
    port: 0,
    records: [] as Array<Record<string, string | number | boolean | null>>,
    requests: 0,
    status: 200,
    close: async () => undefined as void,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      state.requests++;
      if (req.url !== "/insert/opentelemetry/v1/logs" || state.status !== 200) {
        res.writeHead(req.url === "/insert/opentelemetry/v1/logs" ? state.status : 404).end();
        return;
      }
      // otlphttp compresses with gzip by default (confighttp `compression`)
      const raw = Buffer.concat(chunks);
      try {
        const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
        state.records.push(...otlpLogRecords(body));
      } catch (e) {
        res.writeHead(400).end((e as Error).message);
        return;
      }
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.port = (server.address() as AddressInfo).port;
  state.close = () => new Promise<void>((r) => server.close(() => r()));
  return state;
}

const receivers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

function downstreamTo(port: number): Downstream {
  const sink: RunningComponent = {
    name: "victorialogs",
    pinned: "x",
    running: "x",
    data: { host: "127.0.0.1", port },
    control: { host: "127.0.0.1", port },
    params: {},
    stop: async () => undefined,
  };
  return { sink, params: {}, fields: FIELDS };
}

/** Send seqs 0..count-1 of `genId` as PackedForward messages of `batch` records each to 127.0.0.1:`port`. */
async function sendForward(port: number, genId: number, count: number, batch: number): Promise<void> {
  const source = createEventSource({ fields: FIELDS, seed: 7, genId });
  await source.load(0, count);
  const enc = new FluentForwardEncoder(source);
  const socket = connect({ host: "127.0.0.1", port });
  await new Promise<void>((r, j) => socket.once("connect", r).once("error", j));
  for (let from = 0; from < count; from += batch) {
    const b = enc.encode(from, Math.min(batch, count - from));
    enc.stamp(b, new Date("2026-01-02T03:04:05.678Z"));
    if (!socket.write(b.payload)) await new Promise((r) => socket.once("drain", r));
    enc.release(b);
  }
  await new Promise<void>((r) => socket.end(r));
}

/** A config on its own ports (the direct host shares the machine's network). */
const configOn = (base: number, extra: Record<string, unknown> = {}) =>
  otelcolSchema.parse({
    receivers: { fluentforward: { endpoint: `127.0.0.1:${base}` } },
    extensions: { health_check: { endpoint: `127.0.0.1:${base + 1}` } },
    processors: { batch: { timeout: "100ms", send_batch_size: 500 } },
    service: {
      telemetry: {
        metrics: { readers: [{ pull: { exporter: { prometheus: { host: "127.0.0.1", port: base + 2 } } } }] },
      },
    },
    ...extra,
  });

describe("otelcol build (real: scripts/build-otelcol.sh's binary)", () => {
  it("real otelcol build: --version prints the pin; `components` lists exactly what distribution/components.go registers", () => {
    const bin = built();
    const v = spawnSync(bin, ["--version"], { encoding: "utf8" });
    expect(v.stdout.trim()).toBe(`otelcol-ingestbench version ${OTELCOL_PIN}`);
    expect(OTELCOL_PROGRAM.patterns[0]!.exec(v.stdout)?.[1]).toBe(OTELCOL_PIN);
    const c = spawnSync(bin, ["components"], { encoding: "utf8" });
    expect(c.status, c.stderr).toBe(0);
    const doc = parse(c.stdout) as Record<string, Array<{ name: string }> | unknown>;
    // 0.165 lists the snake_case type names (fluent_forward, otlp_http); configs may use either spelling
    const flat = (n: string) => n.replace(/_/g, "");
    const names = (k: string) => ((doc[k] as Array<{ name: string }>) ?? []).map((x) => flat(x.name)).sort();
    const want = distributionComponents();
    for (const k of ["receivers", "processors", "exporters", "extensions"] as const)
      expect(names(k), k).toEqual(want[k].map(flat).sort());
    expect(want.receivers.sort()).toEqual(["fluentforward", "otlp", "syslog"]);
    expect(want.exporters).toContain("otlphttp");
  });

  it("real otelcol validate: every local render uses only the build's components and passes; the container-only elasticsearch render is refused by the real binary", async () => {
    const bin = built();
    const dir = await scope.tmp();
    const have = distributionComponents();
    for (const sinkName of OTELCOL_LOCAL_SINKS) {
      const file = join(dir, `${sinkName}.yaml`);
      const r = renderOtelcolConfig(
        {
          config: otelcolSchema.parse({}),
          sink: { name: sinkName, host: "10.214.0.3", port: 9428, params: {} },
          fields: FIELDS,
        },
        file,
      );
      const doc = parse(r.text) as Record<string, Record<string, unknown>>;
      const types = (k: string) => Object.keys(doc[k] ?? {}).map((id) => id.split("/")[0]!);
      for (const k of ["receivers", "processors", "exporters", "extensions"] as const)
        for (const t of types(k)) expect(have[k], `${sinkName}: ${k} ${t}`).toContain(t);
      await writeFile(file, r.text);
      const v = spawnSync(bin, ["validate", "--config", file], { encoding: "utf8" });
      expect(v.status, `${v.stdout}${v.stderr}\n${r.text}`).toBe(0);
    }
    const es = renderOtelcolConfig({
      config: otelcolSchema.parse({}),
      sink: { name: "elasticsearch", host: "10.214.0.3", port: 9200, params: {} },
      fields: FIELDS,
    });
    const file = join(dir, "elasticsearch.yaml");
    await writeFile(file, es.text);
    const v = spawnSync(bin, ["validate", "--config", file], { encoding: "utf8" });
    expect(v.status).not.toBe(0);
    expect(`${v.stdout}${v.stderr}`).toMatch(/elasticsearch/);
  });
});

describe("otelcol component (real Collector build in a host)", () => {
  it("real otelcol: Forward records reach the OTLP receiver exactly once with every field; claims received = written, dropped 0; signals name the exporter's queue", async () => {
    built();
    const rx = await otlpReceiver();
    receivers.push(rx);
    const base = 24311;
    const c = scope.keep(
      await otelcol.startLocal(await scope.host(), configOn(base), undefined, downstreamTo(rx.port)),
    );
    expect(c.running).toBe(OTELCOL_PIN);
    await sendForward(base, 3, 2000, 100);
    expect(await waitForCount(async () => rx.records.length, 2000)).toBe(2000);
    const seqs = rx.records.map((r) => r.seq as number).sort((a, b) => a - b);
    expect(new Set(seqs).size).toBe(2000);
    expect(seqs[0]).toBe(0);
    expect(seqs[1999]).toBe(1999);
    const r0 = rx.records.find((r) => r.seq === 0)!;
    expect(r0).toMatchObject({ gen: 3, sent_at: "2026-01-02T03:04:05.678Z", "fluent.tag": "ingestbench" });
    expect(typeof r0.ts).toBe("string");
    expect(typeof r0.code).toBe("number");
    expect(Object.keys(r0).sort()).toEqual([
      "code",
      "fluent.tag",
      "gen",
      "level",
      "msg",
      "sent_at",
      "seq",
      "ts",
    ]);
    // the claims come after the exporter's counters have caught up with what the receiver holds
    await waitForCount(async () => (await c.stats!()).written ?? 0, 2000);
    expect(await c.stats!()).toEqual({ received: 2000, refused: 0, written: 2000, dropped: 0, queued: 0 });
    const s = await c.signals!();
    expect(s).toMatchObject({
      "fluentforward.accepted": 2000,
      "otlphttp/ib_victorialogs.sent": 2000,
      "otlphttp/ib_victorialogs.send_failed": 0,
      "otlphttp/ib_victorialogs.queue_size": 0,
    });
    expect(s["otlphttp/ib_victorialogs.queue_capacity"]).toBeGreaterThan(0);
    // the verdict's view (harness/runner/collector-pressure.ts): the exporter, its queue empty, no failed sends
    expect(otelcolPressure(s)).toEqual([
      { output: "otlphttp/ib_victorialogs", queued: 0, queuedUnit: "items", queueUsed: 0, sendFailures: 0 },
    ]);
    await c.stop();
  });

  it("real otelcol: a sink answering 400 (a permanent error) gives send_failed claims, none written", async () => {
    built();
    const rx = await otlpReceiver();
    receivers.push(rx);
    rx.status = 400;
    const base = 24321;
    const c = scope.keep(
      await otelcol.startLocal(await scope.host(), configOn(base), undefined, downstreamTo(rx.port)),
    );
    await sendForward(base, 1, 300, 100);
    const dropped = await waitForCount(async () => (await c.stats!()).dropped ?? 0, 300);
    expect(dropped).toBe(300);
    expect(await c.stats!()).toMatchObject({ received: 300, written: 0, dropped: 300 });
    const failed = await c.signals!();
    expect(failed["otlphttp/ib_victorialogs.send_failed"]).toBe(300);
    expect(otelcolPressure(failed)).toMatchObject([
      { output: "otlphttp/ib_victorialogs", sendFailures: 300 },
    ]);
    expect(rx.records).toHaveLength(0);
    await c.stop();
  });

  it("real otelcol: a pin other than the program's version is refused naming both, nothing spawned", async () => {
    built();
    const host = await scope.host();
    const err = await otelcol
      .startLocal(host, configOn(24331, { version: "0.159.0" }), undefined, downstreamTo(1))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(VerificationError);
    expect((err as Error).message).toContain("0.159.0");
    expect((err as Error).message).toContain(OTELCOL_PIN);
    expect(host.children).toHaveLength(0);
  });
});

describe("otelcol signals (parser)", () => {
  it("reads per-exporter and per-receiver counters and the queue gauges from the Prometheus text", () => {
    const text = [
      "# TYPE otelcol_exporter_queue_size gauge",
      'otelcol_exporter_queue_size{data_type="logs",exporter="otlphttp/a"} 7',
      "# TYPE otelcol_exporter_queue_capacity gauge",
      'otelcol_exporter_queue_capacity{data_type="logs",exporter="otlphttp/a"} 1000',
      "# TYPE otelcol_exporter_sent_log_records_total counter",
      'otelcol_exporter_sent_log_records_total{exporter="otlphttp/a"} 12',
      "# TYPE otelcol_receiver_accepted_log_records_total counter",
      'otelcol_receiver_accepted_log_records_total{receiver="fluentforward",transport="tcp"} 19',
    ].join("\n");
    expect(otelcolSignals(`${text}\n`)).toEqual({
      "otlphttp/a.send_failed": 0,
      "otlphttp/a.queue_size": 7,
      "otlphttp/a.queue_capacity": 1000,
      "otlphttp/a.sent": 12,
      "fluentforward.accepted": 19,
    });
  });
});
