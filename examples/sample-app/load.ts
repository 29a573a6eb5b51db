/**
 * The sample application's load loop (./bench.ts), in its own worker thread: `connections` closed-loop request loops
 * (each sends the next request when the previous answer is read) against the app's HTTP port over keep-alive
 * connections, latency per request, send to the end of the answer, in an HdrHistogram (hdr-histogram-js, microseconds,
 * 3 significant digits). Requests sent during the first `warmupMs` are not counted, nor answers after "stop": the window
 * is warmup end to the stop, and throughput the requests answered in it over its length.
 *
 * workerData: { port, connections, warmupMs }. Message in: "stop"; out: "started" as the loops start, then the results once every loop has finished its
 * request in flight: { requests, errors, elapsedMs, txPerSecond, meanMs, p50Ms, p99Ms, maxMs }.
 */
import { Agent, request } from "node:http";
import { parentPort, workerData } from "node:worker_threads";
import * as hdr from "hdr-histogram-js";

const { port, connections, warmupMs } = workerData as { port: number; connections: number; warmupMs: number };
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const histogram = hdr.build({
  lowestDiscernibleValue: 1,
  highestTrackableValue: 3_600_000_000,
  numberOfSignificantValueDigits: 3,
});
let stopping = false;
let stopAt = Number.POSITIVE_INFINITY;
let requests = 0;
let errors = 0;
const start = performance.now();
const measureFrom = start + warmupMs;
parentPort!.on("message", (m) => {
  if (m === "stop") {
    stopping = true;
    stopAt = performance.now();
  }
});

function once(): Promise<void> {
  return new Promise((resolve) => {
    const t = performance.now();
    const req = request({ host: "127.0.0.1", port, path: "/work", method: "GET", agent }, (res) => {
      res.on("data", () => undefined);
      res.on("end", () => {
        const done = performance.now();
        if (t >= measureFrom && done <= stopAt) {
          if (res.statusCode === 200) {
            requests++;
            histogram.recordValue(Math.max(1, Math.round((done - t) * 1000)));
          } else errors++;
        }
        resolve();
      });
    });
    req.on("error", () => {
      errors++;
      resolve();
    });
    req.end();
  });
}

async function loop(): Promise<void> {
  while (!stopping) await once();
}

parentPort!.postMessage("started");
await Promise.all(Array.from({ length: connections }, loop));
const elapsedMs = Math.max(0, stopAt - measureFrom);
agent.destroy();
parentPort!.postMessage({
  requests,
  errors,
  elapsedMs,
  txPerSecond: elapsedMs > 0 ? (requests * 1000) / elapsedMs : 0,
  meanMs: histogram.mean / 1000,
  p50Ms: histogram.getValueAtPercentile(50) / 1000,
  p99Ms: histogram.getValueAtPercentile(99) / 1000,
  maxMs: histogram.maxValue / 1000,
});
