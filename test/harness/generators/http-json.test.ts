import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { httpJson, httpJsonSchema } from "../../../harness/generators/http-json.ts";
import { generators } from "../../../harness/generators/index.ts";
import { GeneratorProcess } from "../../../harness/generators/process.ts";
import type { GeneratorFinal } from "../../../harness/generators/types.ts";
import type { EventField } from "../../../core/events/types.ts";

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];

/** An HTTP receiver storing the seqs of every body it answers 200; every `failEvery`-th request gets 503. */
async function receiver(failEvery = 0): Promise<{
  server: Server;
  port: number;
  stored: number[];
  refused: number[];
  types: Set<string>;
  paths: Set<string>;
}> {
  const stored: number[] = [];
  const refused: number[] = [];
  const types = new Set<string>();
  const paths = new Set<string>();
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      types.add(String(req.headers["content-type"]));
      paths.add(req.url ?? "");
      const text = Buffer.concat(chunks).toString("utf8");
      const docs = (
        text.startsWith("[")
          ? JSON.parse(text)
          : text
              .trimEnd()
              .split("\n")
              .map((l) => JSON.parse(l))
      ) as Array<{ seq: number; gen: number }>;
      const seqs = docs.map((d) => d.seq);
      if (failEvery > 0 && ++n % failEvery === 0) {
        refused.push(...seqs);
        res.writeHead(503).end("busy");
      } else {
        stored.push(...seqs);
        res.writeHead(200).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as AddressInfo).port, stored, refused, types, paths };
}

/** Run for `ms`, or until `until()` holds (checked every 20 ms): evidence ends the wait, not a busy machine's pace. */
async function runFor(
  config: Record<string, unknown>,
  port: number,
  ms: number,
  until?: () => boolean,
): Promise<GeneratorFinal> {
  const gen = httpJson.create(httpJsonSchema.parse(config), {
    target: { host: "127.0.0.1", port, params: { path: "/in" } },
    fields,
    genId: 0,
  });
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  const poll = until
    ? setInterval(() => {
        if (until()) ac.abort();
      }, 20)
    : undefined;
  try {
    return await gen.run(ac.signal, () => undefined);
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
  }
}

describe("http-json generator (real HTTP receiver on 127.0.0.1)", () => {
  it("validates its config strictly and is registered", () => {
    expect(httpJsonSchema.parse({})).toMatchObject({
      batch: 500,
      connections: 1,
      rate: "max",
      framing: "ndjson",
      timeFormat: "iso",
    });
    expect(() => httpJsonSchema.parse({ framing: "csv" })).toThrow();
    expect(() => httpJsonSchema.parse({ path: "in" })).toThrow();
    expect(() => httpJsonSchema.parse({ url: "http://x" })).toThrow();
    expect(generators["http-json"]).toBe(httpJson);
  });

  it("POSTs NDJSON batches; every accepted seq is stored once, 503 answers become rejected ranges", async () => {
    const r = await receiver(3);
    try {
      // until the receiver has answered more than 2000 events (some with 503), within a generous bound
      const final = await runFor(
        { batch: 200, connections: 2, rate: "max" },
        r.port,
        60_000,
        () => r.stored.length + r.refused.length > 2000,
      );
      expect(final.sent).toBeGreaterThan(2000);
      expect(final.accepted).toBe(r.stored.length);
      expect(new Set(r.stored).size).toBe(r.stored.length);
      expect(final.rejected).toBe(r.refused.length);
      const rejected = final.rejectedRanges.flatMap(([a, b]) =>
        Array.from({ length: b - a + 1 }, (_, i) => a + i),
      );
      expect(rejected).toEqual([...r.refused].sort((a, b) => a - b));
      expect([...r.stored, ...r.refused].sort((a, b) => a - b)).toEqual(
        Array.from({ length: final.sent }, (_, i) => i),
      );
      expect(final.errors[0]).toMatch(/^POST \/in seqs \d+\.\.\d+: HTTP 503: busy$/);
      expect([...r.types]).toEqual(["application/x-ndjson"]);
      expect([...r.paths]).toEqual(["/in"]);
    } finally {
      r.server.close();
    }
  });

  it("sends JSON-array bodies at a fixed rate: never above it (+10 %), within 20 % of it or of the rate max measured in the same test", async () => {
    const r = await receiver();
    try {
      // the reference: what this generator and receiver manage right now at rate max (a busy machine manages less)
      let t0 = performance.now();
      const max = await runFor({ batch: 100, connections: 2, rate: "max", framing: "array" }, r.port, 1000);
      const maxRate = max.sent / ((performance.now() - t0) / 1000);
      r.stored.length = 0;
      t0 = performance.now();
      const final = await runFor(
        { batch: 100, connections: 2, rate: 20_000, framing: "array" },
        r.port,
        2000,
      );
      const rate = final.sent / ((performance.now() - t0) / 1000);
      console.log(
        `http-json fixed: ${rate.toFixed(0)} events/s (target 20000; rate max just before ${maxRate.toFixed(0)})`,
      );
      expect(final.errors).toEqual([]);
      expect(final.accepted).toBe(final.sent);
      expect(r.stored.length).toBe(final.sent);
      expect(rate).toBeLessThan(22_000);
      expect(rate).toBeGreaterThan(0.8 * Math.min(20_000, maxRate));
      expect([...r.types]).toEqual(["application/json"]);
    } finally {
      r.server.close();
    }
  });

  it("pipelines 2 requests per connection by default; a connection that closes under both never gets either re-sent", async () => {
    expect(httpJsonSchema.parse({}).pipelining).toBe(2);
    // a raw receiver that answers a connection's first request with headers only (undici sends the next request once
    // the previous answer's headers are in) and closes the connection when the second request arrives
    let requestLines = 0;
    const server = createTcpServer((sock) => {
      let seen = 0;
      sock.on("data", (c: Buffer) => {
        const n = c.toString("latin1").split("POST /in ").length - 1;
        requestLines += n;
        if (seen === 0 && n > 0) sock.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
        seen += n;
        if (seen >= 2) sock.destroy();
      });
      sock.on("error", () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const final = await runFor(
        { batch: 50, requests: 2, timeoutMs: 5000 },
        (server.address() as AddressInfo).port,
        10_000,
      );
      expect(final).toMatchObject({ sent: 100, accepted: 0, rejected: 100, rejectedRanges: [[0, 99]] });
      expect(requestLines).toBe(2); // undici alone would re-send the second on a new connection
    } finally {
      server.close();
    }
  });

  it("runs as a generator process through child.ts", async () => {
    const r = await receiver();
    try {
      const spec = {
        name: "http-json",
        config: { batch: 100, rate: 5000 },
        ctx: { target: { host: "127.0.0.1", port: r.port, params: {} }, fields, genId: 1 },
      };
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "harness/generators/child.ts", JSON.stringify(spec)],
        {
          cwd: fileURLToPath(new URL("../../..", import.meta.url)),
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      const proc = new GeneratorProcess(child);
      const started = Date.now();
      while ((!proc.last || proc.last.sent === 0) && Date.now() - started < 30_000 && child.exitCode === null)
        await new Promise((res) => setTimeout(res, 20));
      await new Promise((res) => setTimeout(res, 500));
      const final = await proc.stop();
      expect(final.genId).toBe(1);
      expect(final.errors).toEqual([]);
      expect(final.accepted).toBe(final.sent);
      expect(r.stored.length).toBe(final.sent);
    } finally {
      r.server.close();
    }
  });
});
