import { describe, expect, it } from "vitest";
import { LOKI_PAGE, lokiHeaders, lokiVerifier } from "./verifier.ts";
import { withEnv } from "../../../test/helpers/env.ts";
import { sinks } from "../../registry.ts";
import { fields, httpReceiver, type GotRequest } from "../../../test/harness/generators/run-generator.ts";

interface Entry { ts: bigint; labels: Record<string, string>; line: string }

/**
 * An in-process stand-in for Loki's query API ("Loki HTTP API"): GET /ready, and query_range for
 * `sum(count_over_time({job="ingestbench"}[<n>ms]))` (a matrix evaluated at `end`) and for the log query
 * `{job="ingestbench"}` (streams; start inclusive, end exclusive, `limit` entries across streams in `direction`).
 */
function lokiAnswers(entries: Entry[]) {
  const json = (body: unknown) => ({ status: 200, body: JSON.stringify(body) });
  const stats = { summary: { bytesProcessedPerSecond: 0, linesProcessedPerSecond: 0, totalBytesProcessed: 0, totalLinesProcessed: 0, execTime: 0.001 } };
  return (req: GotRequest) => {
    const u = new URL(req.url, "http://x");
    if (u.pathname === "/ready") return { status: 200, body: "ready\n", headers: { "Content-Type": "text/plain" } };
    if (u.pathname !== "/loki/api/v1/query_range") return { status: 404, body: "404 page not found\n" };
    expect(req.headers["x-scope-orgid"]).toBe("tenant-1");
    const q = u.searchParams.get("query")!;
    const start = BigInt(u.searchParams.get("start")!);
    const end = BigInt(u.searchParams.get("end")!);
    // the count, over every line or (a run with its own id space) over the lines whose JSON gen lies in a range
    const m = /^sum\(count_over_time\(\{job="ingestbench"\}(?: \| json ib_gen="gen" \| ib_gen >= (\d+) and ib_gen < (\d+) )?\[(\d+)ms\]\)\)$/.exec(q);
    if (m) {
      expect(start).toBe(end); // one evaluation, at end
      const from = end - BigInt(m[3]!) * 1_000_000n;
      const genOf = (line: string): number | undefined => { try { const g = (JSON.parse(line) as { gen?: unknown }).gen; return typeof g === "number" ? g : undefined; } catch { return undefined; } };
      const inRange = (e: Entry): boolean => { if (m[1] === undefined) return true; const g = genOf(e.line); return g !== undefined && g >= Number(m[1]) && g < Number(m[2]); };
      const n = entries.filter((e) => e.ts > from && e.ts <= end && inRange(e)).length;
      return json({ status: "success", data: { resultType: "matrix", result: n ? [{ metric: {}, values: [[Number(end / 1_000_000n) / 1000, String(n)]] }] : [], stats } });
    }
    expect(q).toBe('{job="ingestbench"}');
    const limit = Number(u.searchParams.get("limit"));
    const backward = u.searchParams.get("direction") !== "forward";
    const sel = entries.filter((e) => e.ts >= start && e.ts < end).sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.labels.gen!.localeCompare(b.labels.gen!)));
    if (backward) sel.reverse();
    const streams = new Map<string, { stream: Record<string, string>; values: Array<[string, string]> }>();
    for (const e of sel.slice(0, limit)) {
      const k = JSON.stringify(e.labels);
      if (!streams.has(k)) streams.set(k, { stream: e.labels, values: [] });
      streams.get(k)!.values.push([String(e.ts), e.line]);
    }
    return json({ status: "success", data: { resultType: "streams", result: [...streams.values()], stats } });
  };
}

describe("loki verifier's authentication headers (bytes per RFC 7617 and Loki's X-Scope-OrgID; no Loki or proxy here)", () => {
  it("sends X-Scope-OrgID for params.tenant, Basic auth for the authenticating proxy with INGESTBENCH_LOKI_PASSWORD (user ingestbench or params.user), and names the variable on a 401 (no Loki here)", async () => {
    expect(lokiHeaders({}, {})).toEqual({});
    expect(lokiHeaders({ tenant: "t1" }, { INGESTBENCH_LOKI_PASSWORD: "open sesame" })).toEqual({ "X-Scope-OrgID": "t1", Authorization: `Basic ${Buffer.from("ingestbench:open sesame").toString("base64")}` });
    // RFC 7617 section 2's vector
    expect(lokiHeaders({ user: "Aladdin" }, { INGESTBENCH_LOKI_PASSWORD: "open sesame" }).Authorization).toBe("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
    const r = await httpReceiver(() => ({ status: 401, body: "no credentials\n" }));
    try {
      const v = await withEnv({ INGESTBENCH_LOKI_PASSWORD: "bad-4e2" }, () => lokiVerifier.create({ host: "127.0.0.1", port: r.port, params: { tenant: "t1" }, fields }));
      const err = await v.prepare().then(() => undefined, (e: unknown) => e as Error & { code?: string });
      await v.close();
      expect(r.got[0]!.headers["x-scope-orgid"]).toBe("t1");
      expect(r.got[0]!.headers.authorization).toBe(`Basic ${Buffer.from("ingestbench:bad-4e2").toString("base64")}`);
      expect(err?.code).toBe("E_SINK_AUTH");
      expect(err?.message).toMatch(/refused user "ingestbench" with the password from INGESTBENCH_LOKI_PASSWORD/);
      expect(err?.message).not.toContain("bad-4e2");
    } finally {
      await r.close();
    }
  });
});

describe("loki verifier: a run with its own generator-id space (LogQL query text per the Loki docs; no Loki here)", () => {
  it("the sample counts only this run's gens (256..511), not a previous run's late lines in the window; the ledger calls those foreign", async () => {
    const entries: Entry[] = [];
    const r = await httpReceiver(lokiAnswers(entries));
    const v = lokiVerifier.create({ host: "127.0.0.1", port: r.port, params: { tenant: "tenant-1" }, fields, genBase: 256 });
    try {
      await v.prepare();
      const w0 = BigInt(Date.now()) * 1_000_000n + 1_000_000n;
      const add = (gen: number, seq: number, ts: bigint): void => { entries.push({ ts, labels: { gen: String(gen), job: "ingestbench" }, line: JSON.stringify({ ts: "2024-11-07T00:00:00.000Z", level: "info", msg: "m", n: 1, gen, seq, sent_at: new Date(Number(ts / 1_000_000n)).toISOString() }) }); };
      for (let s = 0; s < 100; s++) add(256, s, w0 + BigInt(s) * 1000n); // this run
      for (let s = 0; s < 40; s++) add(0, s, w0 + BigInt(s) * 1000n + 500n); // the previous run's collector, late
      await new Promise((res) => setTimeout(res, 60));
      expect((await v.sample()).stored).toBe(100);
      const q = r.got.map((g) => new URL(g.url, "http://x").searchParams.get("query")).find((x) => x?.startsWith("sum("));
      expect(q).toBe('sum(count_over_time({job="ingestbench"} | json ib_gen="gen" | ib_gen >= 256 and ib_gen < 512 [' + q!.match(/\[(\d+)ms\]/)![1] + "ms]))");
      const l = await v.ledger([100], [[]]);
      expect(l).toMatchObject({ sent: 100, stored: 100, lost: 0, foreign: 40 });
    } finally {
      await v.close();
      await r.close();
    }
  });
});

describe("loki verifier (query_range answers of the documented Loki HTTP API shapes from an in-process stand-in; no Loki here)", () => {
  it("counts the run window with count_over_time and builds the ledger from the lines' gen/seq across paged, tied timestamps (no Loki here)", async () => {
    expect(sinks.loki.verifier).toBe(lokiVerifier);
    const entries: Entry[] = [];
    const r = await httpReceiver(lokiAnswers(entries));
    const v = lokiVerifier.create({ host: "127.0.0.1", port: r.port, params: { tenant: "tenant-1" }, fields });
    try {
      await v.prepare();
      expect(r.got.map((g) => g.url)).toEqual(["/ready"]);
      const w0 = BigInt(Date.now()) * 1_000_000n + 1_000_000n; // 1 ms into the window
      const line = (gen: number, seq: number, ts: bigint): string => JSON.stringify({ ts: "2024-11-07T00:00:00.000Z", level: "info", msg: "m", n: 1, gen, seq, sent_at: new Date(Number(ts / 1_000_000n)).toISOString() });
      const add = (gen: number, seq: number, ts: bigint): void => { entries.push({ ts, labels: { gen: String(gen), job: "ingestbench" }, line: line(gen, seq, ts) }); };
      // a previous cell's line, before the window: not this run's
      entries.push({ ts: w0 - 5_000_000_000n, labels: { gen: "0", job: "ingestbench" }, line: line(0, 0, w0) });
      // gen 0 sent 12 000 (11 000..11 009 rejected and absent), 3000..3004 and 11 999 lost; gen 1 sent 4000, 1234 lost;
      // gen 1's seq i shares gen 0's seq i timestamp, so page boundaries fall between tied entries
      for (let s = 0; s < 12_000; s++) {
        if ((s >= 3000 && s < 3005) || (s >= 11_000 && s < 11_010) || s === 11_999) continue;
        add(0, s, w0 + BigInt(s) * 1000n);
      }
      for (let s = 0; s < 4000; s++) if (s !== 1234) add(1, s, w0 + BigInt(s) * 1000n);
      add(0, 10, w0 + 12_500_000n); // seq 10 again, later: a duplicate
      entries.push({ ts: w0 + 12_600_000n, labels: { gen: "0", job: "ingestbench" }, line: "not json" }); // unexpected
      await new Promise((res) => setTimeout(res, 60)); // every entry time is now in the past
      const s = await v.sample();
      expect(s.stored).toBe(15_985);
      expect(s.newestSentAtMs).toBe(Number((w0 + 12_600_000n) / 1_000_000n)); // the newest line has no sent_at: its entry time
      const l = await v.ledger([12_000, 4000], [[[11_000, 11_009]], []]);
      expect(l).toEqual({
        sent: 16_000, accepted: 15_990, rejected: 10,
        stored: 15_985, distinct: 15_984, duplicated: 1, lost: 7, overwritten: 0, unexpected: 1,
        missingRanges: [[0, 3000, 3004], [0, 11_999, 11_999], [1, 1234, 1234]], foreign: 0, rejectedStored: 0, deduplicated: 0,
      });
      const pages = r.got.filter((g) => g.url.includes("direction=forward"));
      expect(pages.length).toBe(Math.ceil(15_985 / LOKI_PAGE));
    } finally {
      await v.close();
      await r.close();
    }
  });
});
