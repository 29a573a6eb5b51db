/**
 * Generator "fluent-forward": Fluentd Forward Protocol v1 over TCP (fluent/fluentd wiki, "Forward Protocol
 * Specification v1"), one PackedForward message per batch — `[tag, <entries as bin>, {"size": n, "chunk": id}]` with
 * EventTime (msgpack ext type 0) entry times; encoder ../events/fluent-forward.ts. What Fluentd's and Fluent Bit's
 * `forward` inputs take, and what Fluentd's out_forward sends.
 *
 * Acknowledgement (spec "Option" → chunk, "Response"; Fluentd out_forward's `require_ack_response`):
 * - `ack: true`: every message carries a unique `chunk` id, and the batch is accepted only when the server answers
 *   `{"ack": "<that id>"}` (msgpack map) on the same connection. No answer within `ackTimeoutMs` (out_forward's
 *   `ack_response_timeout`, default 190 s), an answer with another id, or a closed connection rejects the whole batch
 *   and replaces the connection; the batch is never resent (a resend is a collector's retry policy, which the ledger
 *   must see, not ours).
 * - `ack: false`: accepted means written into the kernel's socket buffer (as for syslog over TCP); only the
 *   verifier can say what the collector kept.
 * The spec's handshake (HELO/PING/PONG, shared_key authentication) is not implemented: a server that opens with HELO
 * fails the connection with an error that says so.
 *
 * Pacing, seqs, latency (send start → ack, or → written), rejected ranges and the stop are the shared loop's (loop.ts).
 */
import type { Socket } from "node:net";
import { z } from "zod";
import {
  FluentForwardEncoder,
  ForwardResponseReader,
  isForwardAck,
  type ForwardBatch,
} from "../../core/events/fluent-forward.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import { batchLoopFields, runSourceBatchLoop, type BatchTransport } from "./loop.ts";
import { openSocket, writeAll } from "./syslog.ts";
import type {
  Generator,
  GeneratorContext,
  GeneratorFactory,
  GeneratorFinal,
  GeneratorProgress,
} from "./types.ts";

/** Scenario block `generator.fluent-forward`. */
export const fluentForwardSchema = z
  .object({
    ...batchLoopFields,
    batch: batchLoopFields.batch.default(1000),
    /** Fluentd tag of every message */
    tag: z.string().min(1).max(1024).default("ingestbench"),
    /** ask for an ack per message (option.chunk) and wait for it before the batch counts as accepted */
    ack: z.boolean().default(false),
    /** how long to wait for an ack, milliseconds (Fluentd out_forward's ack_response_timeout is 190 s) */
    ackTimeoutMs: z.number().int().positive().default(190_000),
    /** msgpack type wrapping the entries: bin (spec) or str (old msgpack implementations) */
    entries: z.enum(["bin", "str"]).default("bin"),
  })
  .strict();

export type FluentForwardConfig = z.infer<typeof fluentForwardSchema>;

/** A waiting ack: the chunk id and how to settle its send. */
interface PendingAck {
  chunk: string;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** A connection slot: the socket, its answer reader, the ack awaited, and the error that broke it, if any. */
interface ForwardConn {
  socket: Socket;
  reader: ForwardResponseReader;
  pending: PendingAck | null;
  error: Error | null;
}

/** Describe a decoded answer briefly for an error message. */
function describe(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) =>
      x instanceof Map ? Object.fromEntries(x) : x instanceof Uint8Array ? `<${x.length} bytes>` : x,
    ).slice(0, 200);
  } catch {
    return String(v).slice(0, 200);
  }
}

class FluentForwardGenerator implements Generator {
  private readonly source: EventSource;
  private readonly encoder: FluentForwardEncoder;

  constructor(
    private readonly config: FluentForwardConfig,
    private readonly ctx: GeneratorContext,
  ) {
    this.source = createEventSource({
      fields: ctx.fields,
      seed: config.seed,
      genId: ctx.genId,
      genBase: ctx.genBase,
      replayFile: ctx.replayFile,
    });
    this.encoder = new FluentForwardEncoder(this.source, {
      tag: config.tag,
      ack: config.ack,
      entries: config.entries,
    });
  }

  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { host, port } = this.ctx.target;
    const { ack, ackTimeoutMs } = this.config;
    const fail = (conn: ForwardConn, err: Error): void => {
      conn.error ??= err;
      const p = conn.pending;
      conn.pending = null;
      p?.reject(conn.error);
    };
    const transport: BatchTransport<ForwardConn, ForwardBatch> = {
      label: "forward",
      address: `${host}:${port}`,
      connect: async () => {
        const socket = await openSocket(host, port);
        const conn: ForwardConn = { socket, reader: new ForwardResponseReader(), pending: null, error: null };
        socket.on("error", (err) => fail(conn, err));
        socket.on("close", () => fail(conn, new Error("connection closed by the receiver")));
        socket.on("data", (bytes: Buffer) => {
          let answers: unknown[];
          try {
            answers = conn.reader.push(bytes);
          } catch (err) {
            fail(
              conn,
              new Error(`the receiver answered bytes that are not msgpack: ${(err as Error).message}`),
            );
            socket.destroy();
            return;
          }
          for (const a of answers) {
            if (Array.isArray(a) && a[0] === "HELO") {
              fail(
                conn,
                new Error(
                  "the receiver opened the handshake (HELO): forward security (shared_key) is not supported by this generator",
                ),
              );
              socket.destroy();
              return;
            }
            const p = conn.pending;
            if (p && isForwardAck(a, p.chunk)) {
              conn.pending = null;
              p.resolve();
              continue;
            }
            fail(
              conn,
              new Error(
                p ? `expected {"ack":"${p.chunk}"}, got ${describe(a)}` : `unexpected answer ${describe(a)}`,
              ),
            );
            socket.destroy();
            return;
          }
        });
        return conn;
      },
      alive: (conn) => conn.error === null && !conn.socket.destroyed,
      send: async (conn, b) => {
        if (conn.error) throw conn.error;
        if (!ack || b.chunk === null) {
          await writeAll(conn.socket, b.payload);
          if (conn.error) throw conn.error;
          return { accepted: b.count };
        }
        const chunk = b.chunk;
        const acked = new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => {
            if (conn.pending?.chunk !== chunk) return;
            fail(conn, new Error(`no ack for chunk ${chunk} within ${ackTimeoutMs} ms`));
            conn.socket.destroy();
          }, ackTimeoutMs);
          conn.pending = {
            chunk,
            resolve: () => {
              clearTimeout(t);
              resolve();
            },
            reject: (err) => {
              clearTimeout(t);
              reject(err);
            },
          };
        });
        acked.catch(() => undefined); // observed below; a write error may come first
        await writeAll(conn.socket, b.payload);
        await acked;
        return { accepted: b.count };
      },
      close: (conn) =>
        new Promise<void>((resolve) => {
          conn.pending = null;
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

/** Factory "fluent-forward": ctx.target host and port of a Forward protocol input (Fluentd in_forward, Fluent Bit forward). */
export const fluentForward: GeneratorFactory<FluentForwardConfig> = {
  name: "fluent-forward",
  schema: fluentForwardSchema,
  create: (config, ctx) => new FluentForwardGenerator(config, ctx),
};
