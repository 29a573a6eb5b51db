/** Test helpers: run a generator in-process against a local receiver until the test aborts it or `maxMs` pass. */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { EventField } from "../../../core/events/types.ts";
import type { GeneratorFactory, GeneratorFinal } from "../../../harness/generators/types.ts";

export const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "level", type: "string", size: 8 },
  { name: "msg", type: "string", size: 120 },
  { name: "n", type: "int" },
];

export interface Running {
  /** abort to stop the generator (the receiver may call it once it has seen enough) */
  stop: () => void;
  done: Promise<GeneratorFinal>;
}

/** Start `factory` with `config` (parsed by its schema) against 127.0.0.1:`port`; stops by itself after `maxMs`. */
export function startGenerator<C>(
  factory: GeneratorFactory<C>,
  config: unknown,
  port: number,
  params: Record<string, string> = {},
  maxMs = 10_000,
  genId = 0,
): Running {
  const gen = factory.create(factory.schema.parse(config), {
    target: { host: "127.0.0.1", port, params },
    fields,
    genId,
  });
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), maxMs);
  const done = gen.run(ac.signal, () => undefined).finally(() => clearTimeout(t));
  return { stop: () => ac.abort(), done };
}

/** Every seq inside inclusive ranges, ascending. */
export function seqsOf(ranges: ReadonlyArray<readonly [number, number]>): number[] {
  return ranges.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i));
}

/** A request as an HTTP receiver got it. */
export interface GotRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** 1-based index among all requests */
  k: number;
}

/** An in-process node:http receiver on 127.0.0.1 that records every request and answers with `answer(req)`. */
export async function httpReceiver(
  answer: (req: GotRequest) => { status: number; body?: string; headers?: Record<string, string> },
): Promise<{
  server: Server;
  port: number;
  got: GotRequest[];
  onRequest: (f: (k: number) => void) => void;
  close: () => Promise<void>;
}> {
  const got: GotRequest[] = [];
  let listener: (k: number) => void = () => undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const g: GotRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        k: got.length + 1,
      };
      got.push(g);
      const a = answer(g);
      res.writeHead(a.status, {
        ...(a.body !== undefined ? { "Content-Type": "application/json" } : {}),
        ...a.headers,
      });
      res.end(a.body);
      listener(g.k);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    got,
    onRequest: (f) => {
      listener = f;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
