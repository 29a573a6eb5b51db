/**
 * The sender thread of the sample application's exporter (./bench.ts): every `flushMs` it drains every worker's ring
 * (./queue.ts) and writes the records over one TCP connection to the collector (`INGESTBENCH_TARGET`) in the
 * protocol the harness names (`INGESTBENCH_PROTOCOL`), framed as the scenario's `generator` block says
 * (`INGESTBENCH_GENERATOR`, defaults filled in), by ./framing.ts:
 *
 * - `syslog`: one RFC 5424 message per record in RFC 6587 octet-counting frames (what syslog-ng and rsyslog receive);
 * - `fluent-forward`: one Forward protocol v1 PackedForward message per drain, `[tag, entries as bin, {"size": n}]`
 *   (what Fluentd's and Fluent Bit's `forward` inputs receive).
 *
 * Each record carries the run's gen (`INGESTBENCH_GEN`), its seq and its send time; its fields are the scenario's
 * event, filled from the run's seed for (gen, seq) (core/events/source.ts), so the harness's content check can compare
 * them and its bytes check (harness/runner/app-bytes.ts) re-encode them. While the socket pushes back (write returned
 * false) the sender waits for it to drain, and the workers' rings fill and drop: the exporter never slows the requests.
 *
 * workerData: { target: "host:port", protocol, generator (the block), gen, seed, fields, flushMs, rings: SharedArrayBuffer[] }.
 * Message in: "stop" (drain what is queued, close the connection); out: "ready" once connected,
 * { exported, exportedBytes, recordBytes } once closed, or { error } when the connection fails.
 */
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import type { EventField } from "../../core/events/types.ts";
import { framer } from "./framing.ts";
import { SeqRing } from "./queue.ts";

const cfg = workerData as {
  target: string;
  protocol: string;
  generator: Record<string, unknown>;
  gen: number;
  seed: number;
  fields: EventField[];
  flushMs: number;
  rings: SharedArrayBuffer[];
};
const rings = cfg.rings.map((b) => new SeqRing(b));
const frame = framer(cfg);
const [host, port] = [
  cfg.target.slice(0, cfg.target.lastIndexOf(":")),
  Number(cfg.target.slice(cfg.target.lastIndexOf(":") + 1)),
];

let stopping = false;
parentPort!.on("message", (m) => {
  if (m === "stop") stopping = true;
});

async function main(): Promise<void> {
  const socket = connect({ host, port });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.setNoDelay(true);
  socket.on("data", () => undefined); // neither protocol's receiver answers without an ack asked for; drain whatever comes
  parentPort!.postMessage("ready");
  let failure: Error | null = null;
  socket.on("error", (e) => {
    failure = e;
  });
  let exported = 0;
  let exportedBytes = 0;
  let recordBytes = 0;
  const seqs: number[] = [];
  for (;;) {
    const last = stopping; // read before draining: after "stop" the workers enqueue nothing more
    seqs.length = 0;
    for (const r of rings) r.drain(seqs);
    if (seqs.length > 0) {
      const out = frame(seqs, Date.now());
      exported += seqs.length;
      exportedBytes += out.payload.length;
      recordBytes += out.recordBytes;
      if (!socket.write(out.payload)) await new Promise((resolve) => socket.once("drain", resolve));
    }
    if (failure) throw failure;
    if (last) break;
    await sleep(cfg.flushMs);
  }
  await new Promise<void>((resolve) => socket.end(resolve));
  parentPort!.postMessage({ exported, exportedBytes, recordBytes });
}

main().catch((e: Error) => parentPort!.postMessage({ error: e.message }));
