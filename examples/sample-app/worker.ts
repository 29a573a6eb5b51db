/**
 * A request worker of the sample application (./bench.ts): per request a fixed amount of work, a SHA-256 chain of
 * `work` rounds over a 32-byte digest, then, with export on, one trace record into this worker's bounded ring
 * (./queue.ts): its seq is taken from the app-wide counter (so a dropped record uses up its seq, and the ledger sees
 * the hole), and the record is dropped and counted when the ring is full.
 *
 * workerData: { work, seqCounter: SharedArrayBuffer (Int32 [0]) | null, ring: SharedArrayBuffer | null }.
 * Messages in: { id } per request; out: "ready" once loaded, then { id } per request done.
 */
import { createHash } from "node:crypto";
import { parentPort, workerData } from "node:worker_threads";
import { SeqRing } from "./queue.ts";

const { work, seqCounter, ring } = workerData as {
  work: number;
  seqCounter: SharedArrayBuffer | null;
  ring: SharedArrayBuffer | null;
};
const seqs = seqCounter ? new Int32Array(seqCounter) : null;
const queue = ring ? new SeqRing(ring) : null;

/** The fixed work of one request: `rounds` SHA-256 applications, each over the previous digest. */
function chain(rounds: number, start: Buffer): Buffer {
  let d = start;
  for (let i = 0; i < rounds; i++) d = createHash("sha256").update(d).digest();
  return d;
}

const seed = Buffer.alloc(32, 7);
parentPort!.on("message", (m: { id: number }) => {
  chain(work, seed);
  if (seqs && queue) queue.offer(Atomics.add(seqs, 0, 1));
  parentPort!.postMessage({ id: m.id });
});
parentPort!.postMessage("ready");
