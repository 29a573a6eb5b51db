import { LIVE_HORIZON_MS, liveHorizonMs } from "../../../core/verifier.ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LOKI_BUCKET_MS, LOKI_PAGE, lokiHeaders, lokiVerifier } from "./verifier.ts";
import { withEnv } from "../../../test/helpers/env.ts";
import { sinks } from "../../registry.ts";
import { fields, httpReceiver, type GotRequest } from "../../../test/harness/generators/run-generator.ts";

/** An entry as Loki stores it; `visibleAtMs`: when it becomes visible to queries (Date.now(), default at once). */
interface Entry {
  ts: bigint;
  labels: Record<string, string>;
  line: string;
  visibleAtMs?: number;
}

/**
 * An in-process stand-in for Loki's query API ("Loki HTTP API"): GET /ready, and query_range for
 * `sum(count_over_time({job="ingestbench"}[<n>ms]))` (a matrix: evaluated at start, start + step, … ≤ end, each point
 * t counting the entries of (t − n ms, t], Loki's range aggregation bounds; points without entries left out; the
 * point's time as JSON float seconds) and for the log query `{job="ingestbench"}` (streams; start inclusive, end
 * exclusive, `limit` entries across streams in `direction`). Only entries visible at the request's Date.now() answer.
 */
function lokiAnswers(entries: Entry[]) {
  const json = (body: unknown) => ({ status: 200, body: JSON.stringify(body) });
  const stats = {
    summary: {
      bytesProcessedPerSecond: 0,
      linesProcessedPerSecond: 0,
      totalBytesProcessed: 0,
      totalLinesProcessed: 0,
      execTime: 0.001,
    },
  };
  return (req: GotRequest) => {
    const u = new URL(req.url, "http://x");
    if (u.pathname === "/ready")
      return { status: 200, body: "ready\n", headers: { "Content-Type": "text/plain" } };
    if (u.pathname !== "/loki/api/v1/query_range") return { status: 404, body: "404 page not found\n" };
    expect(req.headers["x-scope-orgid"]).toBe("tenant-1");
    const q = u.searchParams.get("query")!;
    const start = BigInt(u.searchParams.get("start")!);
    const end = BigInt(u.searchParams.get("end")!);
    const visible = entries.filter((e) => (e.visibleAtMs ?? 0) <= Date.now());
    // the count, over every line or (a run with its own id space) over the lines whose JSON gen lies in a range
    const m =
      /^sum\(count_over_time\(\{job="ingestbench"\}(?: \| json ib_gen="gen" \| ib_gen >= (\d+) and ib_gen < (\d+) )?\[(\d+)ms\]\)\)$/.exec(
        q,
      );
    if (m) {
      const range = BigInt(m[3]!) * 1_000_000n;
      const step = BigInt(Math.round(Number(u.searchParams.get("step")) * 1e9));
      expect(step > 0n).toBe(true);
      const genOf = (line: string): number | undefined => {
        try {
          const g = (JSON.parse(line) as { gen?: unknown }).gen;
          return typeof g === "number" ? g : undefined;
        } catch {
          return undefined;
        }
      };
      const inRange = (e: Entry): boolean => {
        if (m[1] === undefined) return true;
        const g = genOf(e.line);
        return g !== undefined && g >= Number(m[1]) && g < Number(m[2]);
      };
      const read = visible.filter((e) => e.ts > start - range && e.ts <= end && inRange(e));
      const values: Array<[number, string]> = [];
      for (let t = start; t <= end; t += step) {
        const n = read.filter((e) => e.ts > t - range && e.ts <= t).length;
        if (n) values.push([Number(t / 1_000_000n) / 1000, String(n)]);
      }
      return json({
        status: "success",
        data: { resultType: "matrix", result: values.length ? [{ metric: {}, values }] : [], stats },
      });
    }
    expect(q).toBe('{job="ingestbench"}');
    const limit = Number(u.searchParams.get("limit"));
    const backward = u.searchParams.get("direction") !== "forward";
    const sel = visible
      .filter((e) => e.ts >= start && e.ts < end)
      .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.labels.gen!.localeCompare(b.labels.gen!)));
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
    expect(lokiHeaders({ tenant: "t1" }, { INGESTBENCH_LOKI_PASSWORD: "open sesame" })).toEqual({
      "X-Scope-OrgID": "t1",
      Authorization: `Basic ${Buffer.from("ingestbench:open sesame").toString("base64")}`,
    });
    // RFC 7617 section 2's vector
    expect(lokiHeaders({ user: "Aladdin" }, { INGESTBENCH_LOKI_PASSWORD: "open sesame" }).Authorization).toBe(
      "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    );
    const r = await httpReceiver(() => ({ status: 401, body: "no credentials\n" }));
    try {
      const v = await withEnv({ INGESTBENCH_LOKI_PASSWORD: "bad-4e2" }, () =>
        lokiVerifier.create({ host: "127.0.0.1", port: r.port, params: { tenant: "t1" }, fields }),
      );
      const err = await v.prepare().then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string },
      );
      await v.close();
      expect(r.got[0]!.headers["x-scope-orgid"]).toBe("t1");
      expect(r.got[0]!.headers.authorization).toBe(
        `Basic ${Buffer.from("ingestbench:bad-4e2").toString("base64")}`,
      );
      expect(err?.code).toBe("E_SINK_AUTH");
      expect(err?.message).toMatch(
        /refused user "ingestbench" with the password from INGESTBENCH_LOKI_PASSWORD/,
      );
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
    const v = lokiVerifier.create({
      host: "127.0.0.1",
      port: r.port,
      params: { tenant: "tenant-1" },
      fields,
      genBase: 256,
    });
    try {
      await v.prepare();
      const w0 = BigInt(Date.now()) * 1_000_000n + 1_000_000n;
      const add = (gen: number, seq: number, ts: bigint): void => {
        entries.push({
          ts,
          labels: { gen: String(gen), job: "ingestbench" },
          line: JSON.stringify({
            ts: "2024-11-07T00:00:00.000Z",
            level: "info",
            msg: "m",
            n: 1,
            gen,
            seq,
            sent_at: new Date(Number(ts / 1_000_000n)).toISOString(),
          }),
        });
      };
      for (let s = 0; s < 100; s++) add(256, s, w0 + BigInt(s) * 1000n); // this run
      for (let s = 0; s < 40; s++) add(0, s, w0 + BigInt(s) * 1000n + 500n); // the previous run's collector, late
      await new Promise((res) => setTimeout(res, 60));
      expect((await v.sample()).stored).toBe(100);
      const q = r.got
        .map((g) => new URL(g.url, "http://x").searchParams.get("query"))
        .find((x) => x?.startsWith("sum("));
      expect(q).toBe(
        'sum(count_over_time({job="ingestbench"} | json ib_gen="gen" | ib_gen >= 256 and ib_gen < 512 [' +
          q!.match(/\[(\d+)ms\]/)![1] +
          "ms]))",
      );
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
    const v = lokiVerifier.create({
      host: "127.0.0.1",
      port: r.port,
      params: { tenant: "tenant-1" },
      fields,
    });
    try {
      await v.prepare();
      expect(r.got.map((g) => g.url)).toEqual(["/ready"]);
      const w0 = BigInt(Date.now()) * 1_000_000n + 1_000_000n; // 1 ms into the window
      const line = (gen: number, seq: number, ts: bigint): string =>
        JSON.stringify({
          ts: "2024-11-07T00:00:00.000Z",
          level: "info",
          msg: "m",
          n: 1,
          gen,
          seq,
          sent_at: new Date(Number(ts / 1_000_000n)).toISOString(),
        });
      const add = (gen: number, seq: number, ts: bigint): void => {
        entries.push({ ts, labels: { gen: String(gen), job: "ingestbench" }, line: line(gen, seq, ts) });
      };
      // a previous cell's line, before the window: not this run's
      entries.push({
        ts: w0 - 5_000_000_000n,
        labels: { gen: "0", job: "ingestbench" },
        line: line(0, 0, w0),
      });
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
        sent: 16_000,
        accepted: 15_990,
        rejected: 10,
        stored: 15_985,
        distinct: 15_984,
        duplicated: 1,
        lost: 7,
        overwritten: 0,
        unexpected: 1,
        missingRanges: [
          [0, 3000, 3004],
          [0, 11_999, 11_999],
          [1, 1234, 1234],
        ],
        foreign: 0,
        rejectedStored: 0,
        deduplicated: 0,
      });
      const pages = r.got.filter((g) => g.url.includes("direction=forward"));
      expect(pages.length).toBe(Math.ceil(15_985 / LOKI_PAGE));
    } finally {
      await v.close();
      await r.close();
    }
  });
});

describe("loki verifier's live samples are windowed (query_range with start/end/step per the Loki HTTP API and LogQL range bounds, from an in-process stand-in; no Loki here)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const T0 = Date.UTC(2026, 0, 5, 12, 0, 0, 250); // the window opens 250 ms into a second: a head bucket of 750 ms
  const nsOf = (ms: number): bigint => BigInt(ms) * 1_000_000n;
  const line = (seq: number, sentMs: number): string =>
    JSON.stringify({
      ts: "2024-11-07T00:00:00.000Z",
      level: "info",
      msg: "m",
      n: 1,
      gen: 0,
      seq,
      sent_at: new Date(sentMs).toISOString(),
    });
  /** the query_range parameters of `got` (count and log queries), times in epoch ms */
  const queriesOf = (got: GotRequest[]) =>
    got
      .map((g) => new URL(g.url, "http://x").searchParams)
      .filter((p) => p.get("query") !== null)
      .map((p) => ({
        query: p.get("query")!,
        startMs: Number(BigInt(p.get("start")!) / 1_000_000n),
        endMs: Number(BigInt(p.get("end")!) / 1_000_000n),
        step: p.get("step"),
      }));

  it("over a 400 s run every live sample reads only its horizon (one 1 s-step query_range over at most the last 62 s while lines keep coming, plus the head bucket's own count in its first minute), the stored figure is frozen + recent with a bucket that grows while inside the horizon, and a line delivered after its bucket froze is low in the live figure only: the full sample and the ledger count it (no Loki here)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
    const entries: Entry[] = [];
    const r = await httpReceiver(lokiAnswers(entries));
    const v = lokiVerifier.create({
      host: "127.0.0.1",
      port: r.port,
      params: { tenant: "tenant-1" },
      fields,
    });
    try {
      await v.prepare();
      // a previous cell's line 100 ms before the window, in the head bucket's second: never this run's
      entries.push({
        ts: nsOf(T0 - 100),
        labels: { gen: "0", job: "ingestbench" },
        line: line(99_999, T0 - 100),
      });
      // 5 lines a second for 360 s, delivered 3 s after they are sent; seqs 100..104 (sent at 20.5..21.3 s) 40 s
      // after (their bucket is read without them, then with them, before it freezes); seq 300 (sent at 60.5 s)
      // 150 s after, once its bucket has frozen
      const LATE = 300;
      const sentOf = (s: number): number => T0 + 500 + s * 200;
      const lagOf = (s: number): number => (s === LATE ? 150_000 : s >= 100 && s < 105 ? 40_000 : 3000);
      for (let s = 0; s < 1800; s++)
        entries.push({
          ts: nsOf(sentOf(s)),
          labels: { gen: "0", job: "ingestbench" },
          line: line(s, sentOf(s)),
          visibleAtMs: sentOf(s) + lagOf(s),
        });
      const exact = (t: number): number =>
        entries.filter((e) => e.ts > nsOf(T0) && (e.visibleAtMs ?? 0) <= t).length;
      let seen = r.got.length;
      let checked = 0;
      let newest: number | null = null;
      for (let t = T0 + 1000; t <= T0 + 400_000; t += 1000) {
        vi.setSystemTime(t);
        // the horizon: 60 s while lines keep coming; twice the newest line's age once they stop (after 390 s)
        const horizon = liveHorizonMs(t - (newest ?? T0));
        expect(horizon).toBe(t - T0 <= 390_000 ? LIVE_HORIZON_MS : 2 * (t - newest!));
        const s = await v.sample({ tag: "measure" });
        newest = s.newestSentAtMs;
        // every line but the late one, as it becomes visible: seqs 100..104 join their bucket (20 s, 21 s] at 61 s,
        // while it is live (it freezes at 81 s, with them)
        const late = sentOf(LATE) + lagOf(LATE) <= t ? 1 : 0;
        expect(s.stored, `stored at ${(t - T0) / 1000} s`).toBe(exact(t) - late);
        const qs = queriesOf(r.got.slice(seen));
        seen = r.got.length;
        const counts = qs.filter((q) => q.query.startsWith("sum("));
        const range = counts.filter((q) => q.query.endsWith("[1000ms]))"));
        expect(range.length).toBeLessThanOrEqual(1);
        for (const q of range) {
          expect(q.step).toBe("1");
          expect(q.endMs).toBe(Math.ceil(t / 1000) * 1000); // the bucket end at or after now
          expect(q.startMs % 1000).toBe(0);
          expect(q.startMs).toBeGreaterThanOrEqual(t - horizon - LOKI_BUCKET_MS); // the horizon only, however long the run
          expect(q.endMs - q.startMs).toBeLessThanOrEqual(horizon + 2 * LOKI_BUCKET_MS);
        }
        const head = counts.filter((q) => !q.query.endsWith("[1000ms]))"));
        if (t - T0 <= LIVE_HORIZON_MS + 1000) {
          expect(head.map((q) => [q.query, q.startMs, q.endMs])).toEqual([
            ['sum(count_over_time({job="ingestbench"}[750ms]))', T0 + 750, T0 + 750],
          ]);
        } else {
          expect(head).toEqual([]); // frozen
        }
        const logs = qs.filter((q) => !q.query.startsWith("sum("));
        expect(logs.length).toBe(1);
        expect(logs[0]!.startMs).toBe(Math.max(T0, t - horizon));
        checked++;
      }
      expect(checked).toBe(400);
      vi.setSystemTime(T0 + 401_000);
      const full = await v.sample({ full: true, tag: "drain" });
      expect(full.stored).toBe(1800);
      const [fq] = queriesOf(r.got.slice(seen)).filter((q) => q.query.startsWith("sum("));
      expect(fq).toEqual({
        query: 'sum(count_over_time({job="ingestbench"}[401000ms]))',
        startMs: T0 + 401_000,
        endMs: T0 + 401_000,
        step: "1",
      });
      expect((await v.sample({ tag: "drain" })).stored).toBe(1799); // a live sample after the drain still lacks the late line
      const l = await v.ledger([1800], [[]]);
      expect(l).toMatchObject({ sent: 1800, stored: 1800, lost: 0, duplicated: 0, unexpected: 0 });
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("a delivery stall widens the horizon to twice the newest line's age: the frontier waits, and the lines sent during a 90 s stall count when they arrive (a fixed 60 s horizon would have frozen their buckets empty) (no Loki here)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = T0 - 250; // on the grid: no head bucket
    vi.setSystemTime(t0);
    const entries: Entry[] = [];
    const r = await httpReceiver(lokiAnswers(entries));
    const v = lokiVerifier.create({
      host: "127.0.0.1",
      port: r.port,
      params: { tenant: "tenant-1" },
      fields,
    });
    try {
      await v.prepare();
      // 5 lines a second for 240 s, delivered after 1 s, except that nothing is delivered from 60 s to 150 s: the lines
      // sent then arrive at 150 s
      const sentOf = (s: number): number => t0 + 100 + s * 200;
      const stallFrom = t0 + 60_000;
      const stallTo = t0 + 150_000;
      for (let s = 0; s < 1200; s++) {
        const arrives = sentOf(s) + 1000;
        entries.push({
          ts: nsOf(sentOf(s)),
          labels: { gen: "0", job: "ingestbench" },
          line: line(s, sentOf(s)),
          visibleAtMs: arrives >= stallFrom && arrives < stallTo ? stallTo : arrives,
        });
      }
      const exact = (t: number): number => entries.filter((e) => (e.visibleAtMs ?? 0) <= t).length;
      let seen = r.got.length;
      let highest = 0;
      for (let t = t0 + 1000; t <= t0 + 250_000; t += 1000) {
        vi.setSystemTime(t);
        const s = await v.sample({ tag: "measure" });
        expect(s.stored, `stored at ${(t - t0) / 1000} s`).toBe(exact(t));
        const [q] = queriesOf(r.got.slice(seen)).filter((x) => x.query.endsWith("[1000ms]))"));
        seen = r.got.length;
        if (t > stallFrom && t < stallTo) highest = Math.max(highest, q!.startMs);
      }
      // during the stall the query never started later than 30 s (when the newest line, sent at 59 s, was 30 s old)
      expect(highest).toBeLessThanOrEqual(t0 + 31_000);
      expect(highest).toBeGreaterThan(t0);
    } finally {
      await v.close();
      await r.close();
    }
  });
});
