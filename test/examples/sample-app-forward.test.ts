// The sample application (examples/sample-app/bench.ts) exporting in Forward protocol v1 PackedForward mode to a local
// TCP receiver that decodes the stream with an independent msgpack implementation (@msgpack/msgpack decodeMulti): the
// harness has no Forward receiver of its own and no Fluentd or Fluent Bit runs here, so the receiver checks the spec's
// message shape ([tag, entries as bin, {size}], EventTime ext type 0) and the app's own account against what arrived.
import { spawn } from "node:child_process";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { decodeMulti, ExtData } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { generatorBlock, recordBytesOf } from "../../harness/runner/app-bytes.ts";
import type { EventField } from "../../core/events/types.ts";

const EVENT: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "span", type: "string", size: 120 },
];
const GEN = 777_000;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe("sample app → a Forward receiver (spec message shape decoded by @msgpack/msgpack; no Fluentd here)", () => {
  it("every record it did not drop arrives once, in PackedForward messages with the block's tag; exported, recordBytes and drops add up", async () => {
    const chunks: Buffer[] = [];
    const sockets: Socket[] = [];
    const receiver = createServer((s) => {
      sockets.push(s);
      s.on("data", (b: Buffer) => chunks.push(b));
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const target = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const generator = generatorBlock("fluent-forward", { seed: 42, tag: "sample.trace" });
    const child = spawn(process.execPath, ["--import", "tsx", "examples/sample-app/bench.ts"], {
      env: {
        ...process.env,
        PORT: String(await freePort()),
        WORKERS: "1",
        WORK: "20",
        CONNECTIONS: "2",
        EXPORT: "1",
        QUEUE: "1",
        FLUSH_MS: "100",
        DURATION_MS: "500",
        INGESTBENCH_TARGET: target,
        INGESTBENCH_PROTOCOL: "fluent-forward",
        INGESTBENCH_GENERATOR: JSON.stringify(generator),
        INGESTBENCH_GEN: String(GEN),
        INGESTBENCH_SEED: "42",
        INGESTBENCH_FIELDS: JSON.stringify(EVENT),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    try {
      const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
      expect(code, stderr).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => receiver.close(resolve));
    }
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
      records: number;
      exported: number;
      dropped: number;
      exportedBytes: number;
      recordBytes: number;
    };
    const stream = Buffer.concat(chunks);
    const seqs: number[] = [];
    let entryBytes = 0;
    for (const message of decodeMulti(stream)) {
      const [tag, entries, option] = message as [string, Uint8Array, { size: number }];
      expect(tag).toBe("sample.trace");
      expect(entries).toBeInstanceOf(Uint8Array); // MessagePackEventStream as bin
      entryBytes += entries.length;
      const decoded = [...decodeMulti(entries)] as Array<[ExtData, Record<string, unknown>]>;
      expect(option).toEqual({ size: decoded.length });
      for (const [time, record] of decoded) {
        expect([time.type, (time.data as Uint8Array).length]).toEqual([0, 8]);
        expect(record.gen).toBe(GEN);
        seqs.push(record.seq as number);
      }
    }
    // the app's account: every seq used was written or dropped; the receiver got each written one once
    expect(report.records).toBe(report.exported + report.dropped);
    expect(report.dropped).toBeGreaterThan(0); // a one-entry queue drained every 100 ms
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.length).toBe(report.exported);
    expect(seqs.every((s) => s >= 0 && s < report.records)).toBe(true);
    // bytes: all it wrote arrived; recordBytes are the entries, and equal the harness's per-record encodings of them
    expect(report.exportedBytes).toBe(stream.length);
    expect(report.recordBytes).toBe(entryBytes);
    const length = recordBytesOf({
      protocol: "fluent-forward",
      config: generator,
      fields: EVENT,
      seed: 42,
      gen: GEN,
    })!;
    expect(seqs.reduce((n, s) => n + length(s), 0)).toBe(report.recordBytes);
  }, 30_000);
});
