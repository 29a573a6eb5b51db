/**
 * The sample application under test (docs/app-under-test.md; write-up 003, docs/write-ups.md) and its own benchmark:
 * an HTTP service whose main thread hands each request to one of `workers` worker threads (./worker.ts: a SHA-256
 * chain of `work` rounds), and with export on, one trace record per request through the worker's bounded ring
 * (./queue.ts, `queue` entries, drop when full) to the one sender thread (./sender.ts: syslog, RFC 5424 in RFC 6587
 * octet-counting frames, or fluent-forward, Forward protocol v1 PackedForward messages: ./framing.ts; to
 * `INGESTBENCH_TARGET`). Its load loop (./load.ts, `connections` closed loops with
 * HdrHistogram latency) starts once the service listens and the exporter is connected, and runs until SIGTERM (or
 * `--duration-ms`); then the loop stops, the service closes, the sender drains the rings and closes its connection,
 * and the app prints one JSON line on stdout:
 *
 *   { txPerSecond, requests, errors, meanMs, p50Ms, p99Ms, maxMs, elapsedMs,                // the load loop's (after warmup)
 *     export, workers, queue, records, exported, exportedBytes, recordBytes, dropped }      // the exporter's
 *
 * `records` is the seqs used (one per request with export on), `exported` what the sender wrote, `dropped` what found
 * its ring full: records = exported + dropped. `exportedBytes` is all it wrote, `recordBytes` the records' own
 * encodings in it (./framing.ts: all of it for syslog, the entries for fluent-forward). Log lines go to stderr ("listening on <port>" once the load starts).
 *
 * Settings: env PORT (8080), WORKERS (4), WORK (200 rounds), EXPORT (0|1), QUEUE (1024 per worker), FLUSH_MS (the
 * sender's drain interval, 5), CONNECTIONS (8), WARMUP_MS (0; default INGESTBENCH_WARMUP_MS), DURATION_MS (none), or
 * the flags --port, --workers, --work, --export, --queue, --flush-ms, --connections, --warmup-ms, --duration-ms
 * (flags win). From the harness: INGESTBENCH_TARGET (host:port of the collector), INGESTBENCH_PROTOCOL (syslog or
 * fluent-forward), INGESTBENCH_GENERATOR (the scenario's generator block, JSON: APP-NAME, tag, …), INGESTBENCH_GEN
 * (the run's gen), INGESTBENCH_SEED, INGESTBENCH_FIELDS (the scenario's event, JSON).
 *
 * Run by hand: `node --import tsx examples/sample-app/bench.ts --duration-ms 3000` (export off).
 */
import { createServer } from "node:http";
import { Worker } from "node:worker_threads";
import { framer, PROTOCOLS } from "./framing.ts";
import { ringBuffer } from "./queue.ts";

const FLAGS: Record<string, string> = {
  "--port": "PORT",
  "--workers": "WORKERS",
  "--work": "WORK",
  "--export": "EXPORT",
  "--queue": "QUEUE",
  "--flush-ms": "FLUSH_MS",
  "--connections": "CONNECTIONS",
  "--warmup-ms": "WARMUP_MS",
  "--duration-ms": "DURATION_MS",
};
const settings: Record<string, string | undefined> = { ...process.env };
settings.WARMUP_MS ??= process.env.INGESTBENCH_WARMUP_MS;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = FLAGS[argv[i]!];
  if (!key || argv[i + 1] === undefined)
    fail(`unknown flag or missing value: ${argv[i]} (flags: ${Object.keys(FLAGS).join(", ")})`);
  settings[key] = argv[i + 1];
}
function fail(message: string): never {
  process.stderr.write(`sample-app: ${message}\n`);
  process.exit(2);
}
function int(name: string, dflt: number, min: number): number {
  const raw = settings[name];
  const v = raw === undefined || raw === "" ? dflt : Number(raw);
  if (!Number.isInteger(v) || v < min) fail(`${name} must be an integer ≥ ${min}, got ${raw}`);
  return v;
}

const port = int("PORT", 8080, 1);
const workers = int("WORKERS", 4, 1);
const work = int("WORK", 200, 0);
const exportOn = settings.EXPORT === "1" || settings.EXPORT === "true";
const queue = int("QUEUE", 1024, 1);
const flushMs = int("FLUSH_MS", 5, 0);
const connections = int("CONNECTIONS", 8, 1);
const warmupMs = int("WARMUP_MS", 0, 0);
const durationMs = settings.DURATION_MS ? int("DURATION_MS", 0, 1) : undefined;

interface SenderReport {
  exported: number;
  exportedBytes: number;
  recordBytes: number;
}

/**
 * A worker thread running the TypeScript module `file` beside this one: tsx's loader is registered in the worker
 * first (a worker does not inherit the main thread's module hooks).
 */
function tsWorker(file: string, workerData: unknown): Worker {
  const url = new URL(file, import.meta.url).href;
  return new Worker(
    `import("tsx/esm/api").then((api) => { api.register(); return import(${JSON.stringify(url)}); });`,
    { eval: true, workerData },
  );
}

let sender: Worker | null = null;
let senderDone: Promise<SenderReport> | null = null;
const seqCounter = exportOn ? new SharedArrayBuffer(4) : null;
const rings = exportOn ? Array.from({ length: workers }, () => ringBuffer(queue)) : [];
if (exportOn) {
  const target = settings.INGESTBENCH_TARGET;
  if (!target || !/^.+:\d+$/.test(target)) fail(`EXPORT=1 needs INGESTBENCH_TARGET=host:port, got ${target}`);
  const protocol = settings.INGESTBENCH_PROTOCOL ?? "syslog";
  if (!(PROTOCOLS as readonly string[]).includes(protocol))
    fail(`this exporter speaks ${PROTOCOLS.join(", ")}, not ${protocol}`);
  const fields = settings.INGESTBENCH_FIELDS
    ? JSON.parse(settings.INGESTBENCH_FIELDS)
    : [
        { name: "ts", type: "timestamp" },
        { name: "span", type: "string", size: 120 },
      ];
  const generator = settings.INGESTBENCH_GENERATOR ? JSON.parse(settings.INGESTBENCH_GENERATOR) : {};
  const framing = {
    protocol,
    generator,
    gen: int("INGESTBENCH_GEN", 0, 0),
    seed: int("INGESTBENCH_SEED", 1, 0),
    fields,
  };
  try {
    framer(framing);
  } catch (e) {
    fail((e as Error).message);
  } // a block this exporter cannot frame: refused before it starts
  sender = tsWorker("./sender.ts", { target, ...framing, flushMs, rings });
  senderDone = new Promise((resolve, reject) => {
    sender!.on("message", (m: "ready" | (SenderReport & { error?: string })) => {
      if (m !== "ready") {
        if (m.error) reject(new Error(`exporter: ${m.error}`));
        else resolve(m);
      }
    });
    sender!.on("error", reject);
  });
  senderDone.catch((e: Error) => fail(e.message));
}

// the request workers, dispatched round-robin; pending answers by request id
const pool = rings.length
  ? rings.map((ring) => tsWorker("./worker.ts", { work, seqCounter, ring }))
  : Array.from({ length: workers }, () => tsWorker("./worker.ts", { work, seqCounter: null, ring: null }));
const pending = new Map<number, () => void>();
const loaded = pool.map(
  (w) =>
    new Promise<void>((resolve, reject) => {
      w.on("message", (m: "ready" | { id: number }) => {
        if (m === "ready") return resolve();
        pending.get(m.id)?.();
        pending.delete(m.id);
      });
      w.once("error", reject);
    }),
);
if (sender)
  loaded.push(
    new Promise((resolve) =>
      sender!.on("message", (m) => {
        if (m === "ready") resolve();
      }),
    ),
  );
await Promise.all(loaded); // every worker loaded and the exporter connected before the first request
let nextId = 0;

const server = createServer((req, res) => {
  if (req.url === "/health") {
    res.end("ok");
    return;
  }
  const id = nextId++;
  pending.set(id, () => res.end("done"));
  pool[id % pool.length]!.postMessage({ id });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(port, "0.0.0.0", resolve));

const load = tsWorker("./load.ts", { port, connections, warmupMs });
const loadDone = new Promise<Record<string, number>>((resolve, reject) => {
  load.on("message", (m: "started" | Record<string, number>) => {
    if (m !== "started") resolve(m);
  });
  load.once("error", reject);
});
await new Promise<void>((resolve) =>
  load.on("message", (m) => {
    if (m === "started") resolve();
  }),
);
process.stderr.write(
  `sample-app: listening on ${port}, ${workers} workers, work ${work}, export ${exportOn ? `on, queue ${queue}, flush ${flushMs} ms` : "off"}\n`,
);

let stopped = false;
async function stop(): Promise<void> {
  if (stopped) return;
  stopped = true;
  load.postMessage("stop");
  const figures = await loadDone;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  while (pending.size > 0) await new Promise((r) => setTimeout(r, 5));
  // every request is answered: the workers enqueue nothing more, so the sender's last drain empties the rings
  let report: SenderReport = { exported: 0, exportedBytes: 0, recordBytes: 0 };
  if (sender) {
    sender.postMessage("stop");
    report = await senderDone!;
  }
  const dropped = rings.reduce((n, b) => n + new Int32Array(b)[2]!, 0);
  const records = seqCounter ? new Int32Array(seqCounter)[0]! : 0;
  process.stdout.write(
    `${JSON.stringify({ ...figures, export: exportOn, workers, queue, records, exported: report.exported, exportedBytes: report.exportedBytes, recordBytes: report.recordBytes, dropped })}\n`,
  );
  process.exit(0);
}
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
if (durationMs !== undefined) setTimeout(() => void stop(), durationMs);
