/**
 * The sender thread of the sample application's exporter (./bench.ts): every `flushMs` it drains every worker's ring
 * (./queue.ts) and writes one RFC 5424 message per record in RFC 6587 octet-counting frames over one TCP connection
 * to the collector (`INGESTBENCH_TARGET`), encoded by the project's syslog encoder (core/events/syslog.ts) with the
 * run's gen (`INGESTBENCH_GEN`), the record's seq and its send time; the record's fields are the scenario's event,
 * filled from the run's seed for (gen, seq) (core/events/source.ts), so the harness's content check can compare them.
 * While the socket pushes back (write returned false) the sender waits for it to drain, and the workers' rings fill
 * and drop: the exporter never slows the requests.
 *
 * workerData: { target: "host:port", gen, seed, fields, flushMs, rings: SharedArrayBuffer[] }.
 * Message in: "stop" (drain what is queued, close the connection); out: "ready" once connected, { exported, exportedBytes } once closed,
 * or { error } when the connection fails.
 */
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import { stampBatch } from "../../core/events/encoding.ts";
import { createEventSource } from "../../core/events/source.ts";
import { SyslogEncoder } from "../../core/events/syslog.ts";
import type { EventField } from "../../core/events/types.ts";
import { SeqRing } from "./queue.ts";

const cfg = workerData as { target: string; gen: number; seed: number; fields: EventField[]; flushMs: number; rings: SharedArrayBuffer[] };
const rings = cfg.rings.map((b) => new SeqRing(b));
const encoder = new SyslogEncoder(createEventSource({ fields: cfg.fields, seed: cfg.seed, genId: 0, genBase: cfg.gen }), { appName: "sample-app", procId: "exporter" });
const [host, port] = [cfg.target.slice(0, cfg.target.lastIndexOf(":")), Number(cfg.target.slice(cfg.target.lastIndexOf(":") + 1))];

let stopping = false;
parentPort!.on("message", (m) => { if (m === "stop") stopping = true; });

async function main(): Promise<void> {
  const socket = connect({ host, port });
  await new Promise<void>((resolve, reject) => { socket.once("connect", resolve); socket.once("error", reject); });
  socket.setNoDelay(true);
  parentPort!.postMessage("ready");
  let failure: Error | null = null;
  socket.on("error", (e) => { failure = e; });
  let exported = 0;
  let exportedBytes = 0;
  const seqs: number[] = [];
  for (;;) {
    const last = stopping; // read before draining: after "stop" the workers enqueue nothing more
    seqs.length = 0;
    for (const r of rings) r.drain(seqs);
    if (seqs.length > 0) {
      const frames = seqs.map((s) => encoder.encode(s, 1));
      const now = Date.now();
      for (const f of frames) stampBatch(f, now);
      const payload = Buffer.concat(frames.map((f) => f.payload));
      exported += seqs.length;
      exportedBytes += payload.length;
      if (!socket.write(payload)) await new Promise((resolve) => socket.once("drain", resolve));
    }
    if (failure) throw failure;
    if (last) break;
    await sleep(cfg.flushMs);
  }
  await new Promise<void>((resolve) => socket.end(resolve));
  parentPort!.postMessage({ exported, exportedBytes });
}

main().catch((e: Error) => parentPort!.postMessage({ error: e.message }));
