import { describe, expect, it } from "vitest";
import { generators } from "../../../harness/generators/index.ts";
import { lokiPush, lokiPushSchema } from "../../../harness/generators/loki-push.ts";
import { fields, httpReceiver, seqsOf, startGenerator, type GotRequest } from "./run-generator.ts";

interface PushBody {
  streams: Array<{ stream: Record<string, string>; values: Array<[string, string]> }>;
}

const parse = (r: GotRequest): PushBody => JSON.parse(r.body.toString("utf8")) as PushBody;

describe("loki-push generator (push body and answers from the Loki HTTP API docs; no Loki here)", () => {
  it("validates its config strictly and is registered", () => {
    expect(lokiPushSchema.parse({})).toMatchObject({
      batch: 1000,
      timestamp: "sent",
      labels: {},
    });
    // no path: the sink's params.lokiPushPath (VictoriaLogs'), else Loki's /loki/api/v1/push
    expect(lokiPushSchema.parse({}).path).toBeUndefined();
    expect(() => lokiPushSchema.parse({ labels: { "bad-name": "x" } })).toThrow();
    expect(() => lokiPushSchema.parse({ batch: 2_000_000 })).toThrow();
    expect(generators["loki-push"]).toBe(lokiPush);
  });

  it("POSTs {streams:[{stream, values:[[ns, line]]}]}; 204 accepts; a 400 and a 429 reject exactly their batches with Loki's reason (documented shapes; no Loki here)", async () => {
    const r = await httpReceiver((req) => {
      if (req.k === 2)
        return {
          status: 400,
          body: 'entry for stream \'{gen="0", job="ingestbench"}\' has timestamp too old: 2024-11-07T00:00:00Z',
          headers: { "Content-Type": "text/plain; charset=utf-8" },
        };
      if (req.k === 4)
        return {
          status: 429,
          body: "Ingestion rate limit exceeded for user fake (limit: 4194304 bytes/sec) while attempting to ingest '30' lines totaling '6000' bytes, reduce log volume or contact your Loki administrator to see if the limit can be increased",
          headers: { "Content-Type": "text/plain; charset=utf-8" },
        };
      return { status: 204 };
    });
    try {
      const t0 = Date.now();
      const run = startGenerator(lokiPush, { batch: 30, labels: { env: "test" } }, r.port, {
        tenant: "team-a",
      });
      r.onRequest((k) => {
        if (k >= 6) run.stop();
      });
      const final = await run.done;
      const seqs: number[] = [];
      for (const req of r.got) {
        expect(req.method).toBe("POST");
        expect(req.url).toBe("/loki/api/v1/push");
        expect(req.headers["content-type"]).toBe("application/json");
        expect(req.headers["x-scope-orgid"]).toBe("team-a");
        const b = parse(req);
        expect(b.streams).toHaveLength(1);
        expect(b.streams[0]!.stream).toEqual({ job: "ingestbench", env: "test", gen: "0" });
        let prev = 0n;
        for (const [ts, line] of b.streams[0]!.values) {
          expect(ts).toMatch(/^\d{19}$/); // unix epoch in nanoseconds, as a string
          const t = BigInt(ts);
          expect(t).toBeGreaterThan(prev); // distinct, ordered entries within a stream
          prev = t;
          expect(Number(t / 1_000_000n)).toBeGreaterThanOrEqual(t0 - 1000);
          const doc = JSON.parse(line) as Record<string, unknown>;
          expect(Object.keys(doc)).toEqual([...fields.map((f) => f.name), "gen", "seq", "sent_at"]);
          expect(Date.parse(doc.sent_at as string)).toBe(Number(t / 1_000_000n)); // entry time = send time (ms)
          seqs.push(doc.seq as number);
        }
      }
      expect(seqs).toEqual(Array.from({ length: final.sent }, (_, i) => i));
      expect(seqsOf(final.rejectedRanges)).toEqual([
        ...Array.from({ length: 30 }, (_, i) => 30 + i),
        ...Array.from({ length: 30 }, (_, i) => 90 + i),
      ]);
      expect(final.accepted).toBe(final.sent - 60);
      const errs = final.errors.join("\n");
      expect(errs).toContain("Loki push answered 400: entry for stream");
      expect(errs).toMatch(
        /Loki push answered 429: Ingestion rate limit exceeded.*\(retryable, not resent\)/,
      );
    } finally {
      await r.close();
    }
  });

  it("a sink's params.lokiPushPath (VictoriaLogs' /insert/loki/api/v1/push?…) takes the pushes; a scenario's path wins (no Loki here)", async () => {
    for (const [config, want] of [
      [{ batch: 5 }, "/insert/loki/api/v1/push?_msg_field=msg"],
      [{ batch: 5, path: "/other/push" }, "/other/push"],
    ] as const) {
      const r = await httpReceiver(() => ({ status: 204 }));
      try {
        const run = startGenerator(lokiPush, config, r.port, {
          lokiPushPath: "/insert/loki/api/v1/push?_msg_field=msg",
        });
        r.onRequest((k) => {
          if (k >= 1) run.stop();
        });
        await run.done;
        expect(r.got.map((q) => q.url)).toContain(want);
        expect(new Set(r.got.map((q) => q.url)).size).toBe(1);
      } finally {
        await r.close();
      }
    }
  });
});
