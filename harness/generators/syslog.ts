/**
 * Generator "syslog": RFC 5424 messages over TCP with RFC 6587 §3.4.1 octet-counting framing (encoder:
 * ../events/syslog.ts), one batch = `batch` frames written back to back on one connection.
 *
 * Plain syslog over TCP has no application-level acknowledgement, so `accepted` here means "written into the
 * kernel's socket buffer" (the write callback fired); what the collector kept is for the verifier to count. A write
 * error or a closed connection rejects the batch, and the slot reconnects. Pacing, seqs, latency, rejected ranges
 * and the stop are the shared loop's (loop.ts).
 */
import { connect as netConnect, type Socket } from "node:net";
import { z } from "zod";
import type { StampedBatch } from "../../core/events/encoding.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import { SyslogEncoder } from "../../core/events/syslog.ts";
import { batchLoopFields, runSourceBatchLoop, type BatchTransport } from "./loop.ts";
import type {
  Generator,
  GeneratorContext,
  GeneratorFactory,
  GeneratorFinal,
  GeneratorProgress,
} from "./types.ts";

/** Scenario block `generator.syslog`. */
export const syslogSchema = z
  .object({
    ...batchLoopFields,
    batch: batchLoopFields.batch.default(1000),
    /** RFC 5424 facility 0..23 (default 16, local0) and severity 0..7 (default 6, info) */
    facility: z.number().int().min(0).max(23).default(16),
    severity: z.number().int().min(0).max(7).default(6),
    hostname: z.string().min(1).max(255).default("ingestbench"),
    appName: z.string().min(1).max(48).default("ingestbench"),
  })
  .strict();

export type SyslogConfig = z.infer<typeof syslogSchema>;

/** A connection slot: the socket and the error that broke it, if any. */
interface SyslogConn {
  socket: Socket;
  error: Error | null;
}

/** Open a TCP connection; rejects on error or after `timeoutMs`. */
export function openSocket(host: string, port: number, timeoutMs = 10_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect({ host, port });
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error(`connect timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    s.once("connect", () => {
      clearTimeout(t);
      s.setNoDelay(true);
      resolve(s);
    });
    s.once("error", (err) => {
      clearTimeout(t);
      reject(err);
    });
  });
}

/** Write `payload` and resolve once it is in the kernel's buffer; rejects on a socket error. */
export function writeAll(socket: Socket, payload: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.write(payload, (err) => (err ? reject(err) : resolve()));
  });
}

class SyslogGenerator implements Generator {
  private readonly source: EventSource;
  private readonly encoder: SyslogEncoder;

  constructor(
    private readonly config: SyslogConfig,
    private readonly ctx: GeneratorContext,
  ) {
    this.source = createEventSource({
      fields: ctx.fields,
      seed: config.seed,
      genId: ctx.genId,
      genBase: ctx.genBase,
      replayFile: ctx.replayFile,
    });
    this.encoder = new SyslogEncoder(this.source, {
      facility: config.facility,
      severity: config.severity,
      hostname: config.hostname,
      appName: config.appName,
      procId: String(ctx.genId),
    });
  }

  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { host, port } = this.ctx.target;
    const transport: BatchTransport<SyslogConn, StampedBatch> = {
      label: "syslog write",
      address: `${host}:${port}`,
      connect: async () => {
        const socket = await openSocket(host, port);
        const conn: SyslogConn = { socket, error: null };
        socket.on("error", (err) => {
          conn.error = err;
        });
        socket.on("close", () => {
          conn.error ??= new Error("connection closed by the receiver");
        });
        socket.on("data", () => undefined); // a syslog receiver sends nothing; drain whatever comes
        return conn;
      },
      alive: (conn) => conn.error === null && !conn.socket.destroyed,
      send: async (conn, b) => {
        if (conn.error) throw conn.error;
        await writeAll(conn.socket, b.payload);
        if (conn.error) throw conn.error;
        return { accepted: b.count };
      },
      close: (conn) =>
        new Promise<void>((resolve) => {
          if (conn.socket.destroyed) return resolve();
          conn.socket.end(() => resolve());
          setTimeout(() => {
            conn.socket.destroy();
            resolve();
          }, 5000).unref();
        }),
    };
    return runSourceBatchLoop(
      this.config,
      { signal, onProgress, genId: this.ctx.genId },
      transport,
      this.source,
      this.encoder,
    );
  }
}

/** Factory "syslog": ctx.target host and port of a TCP syslog receiver (RFC 6587 octet counting). */
export const syslog: GeneratorFactory<SyslogConfig> = {
  name: "syslog",
  schema: syslogSchema,
  create: (config, ctx) => new SyslogGenerator(config, ctx),
};
