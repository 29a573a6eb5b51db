import { LIVE_HORIZON_MS, liveHorizonMs } from "../../../core/verifier.ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { columnMismatches, GRIDDB_PAGE, gridDbColumns, griddbVerifier } from "./verifier.ts";
import { sinks } from "../../registry.ts";
import { genBaseOf } from "../../../core/ledger.ts";
import { fields, httpReceiver, type GotRequest } from "../../../test/harness/generators/run-generator.ts";

// GridDB has no default password (core/events/griddb-webapi.ts gridDbAuthorization): these vectors use "admin" from the environment
process.env.INGESTBENCH_GRIDDB_PASSWORD = "admin";

const BASE = "/griddb/v2/myCluster/dbs/public";
const gridError = (status: number, errorCode: number, errorMessage: string) => ({
  status,
  body: JSON.stringify({ version: "v2", errorCode, errorMessage }),
});

/**
 * An in-process stand-in for the GridDB Web API ("GridDB Web API Reference"): container info / delete / create, and
 * `POST …/sql/select` for the verifier's statements over `rows` (positional: fields…, gen, seq, sent_at), answering
 * `[{"columns":[…],"results":[[…]]}]`. `visibleAtMs(i)`: when row i becomes visible (Date.now(); default at once).
 */
function gridAnswers(
  rows: unknown[][],
  existing: { container_type: string; columns: Array<{ name: string; type: string }> } | null,
  visibleAtMs?: (i: number) => number,
) {
  const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) });
  const g = fields.length;
  return (req: GotRequest) => {
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from("admin:admin").toString("base64")}`);
    expect(req.headers["content-type"]).toBe("application/json; charset=UTF-8");
    if (req.method === "GET" && req.url === `${BASE}/containers/ib_events/info`) {
      if (!existing) return gridError(404, 140501, "Container not found");
      return json(200, {
        container_name: "ib_events",
        container_type: existing.container_type,
        rowkey: existing.container_type === "TIME_SERIES",
        columns: existing.columns.map((c) => ({ ...c, index: [] })),
      });
    }
    if (req.method === "DELETE" && req.url === `${BASE}/containers`) return { status: 204 };
    if (req.method === "POST" && req.url === `${BASE}/containers`) return { status: 201 };
    if (req.method === "POST" && req.url === `${BASE}/sql/select`) {
      const [{ stmt }] = JSON.parse(req.body.toString()) as [{ stmt: string }];
      const seen = rows.filter((_, i) => (visibleAtMs?.(i) ?? 0) <= Date.now());
      const genIn = (r: unknown[], from: string, to: string): boolean =>
        typeof r[g] === "number" && (r[g] as number) >= Number(from) && (r[g] as number) < Number(to);
      const sentAt = (r: unknown[]): number | null =>
        typeof r[g + 2] === "string" ? Date.parse(r[g + 2] as string) : null;
      const newest = (rs: unknown[][]): string | null =>
        rs
          .map((r) => r[g + 2] as string)
          .sort()
          .at(-1) ?? null;
      // a `full` sample: this run's rows of the whole container
      const full =
        /^SELECT COUNT\(\*\), MAX\(sent_at\) FROM "ib_events" WHERE gen >= (\d+) AND gen < (\d+)$/.exec(stmt);
      if (full) {
        const ours = seen.filter((r) => genIn(r, full[1]!, full[2]!));
        return json(200, [
          {
            columns: [
              { name: "", type: "LONG" },
              { name: "", type: "TIMESTAMP" },
            ],
            results: [[ours.length, newest(ours)]],
          },
        ]);
      }
      // a live sample: this run's rows sent after the frontier, with those sent up to the cut summed apart
      const live =
        /^SELECT COUNT\(\*\), MAX\(sent_at\), SUM\(CASE WHEN sent_at <= TIMESTAMP\('([^']+)'\) THEN 1 ELSE 0 END\) FROM "ib_events" WHERE (?:sent_at IS NOT NULL|sent_at > TIMESTAMP\('([^']+)'\)) AND gen >= (\d+) AND gen < (\d+)$/.exec(
          stmt,
        );
      if (live) {
        const cut = Date.parse(live[1]!);
        const after = live[2] === undefined ? null : Date.parse(live[2]);
        const ours = seen.filter(
          (r) => genIn(r, live[3]!, live[4]!) && sentAt(r) !== null && (after === null || sentAt(r)! > after),
        );
        const frozen = ours.filter((r) => sentAt(r)! <= cut).length;
        return json(200, [
          {
            columns: [
              { name: "", type: "LONG" },
              { name: "", type: "TIMESTAMP" },
              { name: "", type: "LONG" },
            ],
            results: [[ours.length, newest(ours), ours.length ? frozen : null]],
          },
        ]);
      }
      if (stmt === 'SELECT COUNT(*) FROM "ib_events"')
        return json(200, [{ columns: [{ name: "", type: "LONG" }], results: [[seen.length]] }]);
      const m =
        /^SELECT gen, seq, COUNT\(\*\) FROM "ib_events" WHERE (?:gen IS NOT NULL AND seq IS NOT NULL|gen > (\d+) OR \(gen = (\d+) AND seq > (\d+)\)) GROUP BY gen, seq ORDER BY gen, seq LIMIT (\d+)$/.exec(
          stmt,
        );
      if (!m) return gridError(400, 240001, `[240001:SQL_COMPILE_SYNTAX_ERROR] unexpected statement ${stmt}`);
      const counts = new Map<string, [number, number, number]>();
      for (const r of seen) {
        const gen = r[g] as number | null;
        const seq = r[g + 1] as number | null;
        if (gen === null || seq === null) continue;
        if (m[1] !== undefined && !(gen > Number(m[1]) || (gen === Number(m[2]) && seq > Number(m[3]))))
          continue;
        const k = `${gen}:${seq}`;
        const e = counts.get(k);
        if (e) e[2]++;
        else counts.set(k, [gen, seq, 1]);
      }
      const results = [...counts.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]).slice(0, Number(m[4]));
      return json(200, [
        {
          columns: [
            { name: "gen", type: "INTEGER" },
            { name: "seq", type: "LONG" },
            { name: "", type: "LONG" },
          ],
          results,
        },
      ]);
    }
    return gridError(404, 0, `unexpected ${req.method} ${req.url}`);
  };
}

describe("griddb verifier (GridDB Web API answers of the documented shapes from an in-process stand-in; no GridDB here)", () => {
  it("creates a missing container from the event fields in order with GridDB types and a TREE index on sent_at (no GridDB here)", async () => {
    expect(sinks.griddb.verifier).toBe(griddbVerifier);
    const r = await httpReceiver(gridAnswers([], null));
    const v = griddbVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      await v.prepare();
      expect(r.got.map((g) => `${g.method} ${g.url}`)).toEqual([
        `GET ${BASE}/containers/ib_events/info`,
        `POST ${BASE}/containers`,
      ]);
      expect(JSON.parse(r.got[1]!.body.toString())).toEqual({
        container_name: "ib_events",
        container_type: "COLLECTION",
        rowkey: false,
        columns: [
          { name: "ts", type: "TIMESTAMP" },
          { name: "level", type: "STRING" },
          { name: "msg", type: "STRING" },
          { name: "n", type: "LONG" },
          { name: "gen", type: "INTEGER" },
          { name: "seq", type: "LONG" },
          { name: "sent_at", type: "TIMESTAMP", index: ["TREE"] },
        ],
      });
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("an existing container whose column count or types differ fails prepare before the run, naming both column lists, and is left alone (no GridDB here)", async () => {
    const cols = gridDbColumns(fields);
    const wrongType = cols.map((c, i) => (i === 3 ? { name: "n", type: "STRING" } : c));
    const short = cols.slice(0, -1);
    for (const columns of [wrongType, short]) {
      const r = await httpReceiver(gridAnswers([], { container_type: "COLLECTION", columns }));
      const v = griddbVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
      try {
        const err = await v.prepare().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ConfigurationError);
        expect((err as ConfigurationError).code).toBe("E_GRIDDB_SCHEMA");
        const msg = (err as Error).message;
        expect(msg).toContain('GridDB container "ib_events" does not match');
        if (columns === wrongType) expect(msg).toContain('column 4 "n" is STRING, value 4 ("n") needs LONG');
        else expect(msg).toContain("it has 6 columns, the events have 7 values per row");
        expect(msg).toContain(
          "events: (ts TIMESTAMP, level STRING, msg STRING, n LONG, gen INTEGER, seq LONG, sent_at TIMESTAMP)",
        );
        expect(r.got.map((g) => g.method)).toEqual(["GET"]); // nothing dropped or created
      } finally {
        await v.close();
        await r.close();
      }
    }
    expect(
      columnMismatches(
        cols.map((c) => ({ ...c, name: `x${c.name}` })),
        cols,
      ),
    ).toEqual([]); // names do not matter
  });

  it("a matching TIME_SERIES container is dropped and recreated as TIME_SERIES with its row key (no GridDB here)", async () => {
    const r = await httpReceiver(
      gridAnswers([], { container_type: "TIME_SERIES", columns: gridDbColumns(fields) }),
    );
    const v = griddbVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      await v.prepare();
      expect(r.got.map((g) => g.method)).toEqual(["GET", "DELETE", "POST"]);
      expect(JSON.parse(r.got[1]!.body.toString())).toEqual(["ib_events"]);
      expect(JSON.parse(r.got[2]!.body.toString())).toMatchObject({
        container_type: "TIME_SERIES",
        rowkey: true,
      });
      expect((JSON.parse(r.got[2]!.body.toString()) as { columns: unknown[] }).columns.at(-1)).toEqual({
        name: "sent_at",
        type: "TIMESTAMP",
        index: ["TREE"],
      });
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("sample is a SQL count; the ledger pages GROUP BY gen, seq results and counts lost, duplicated and unexpected rows exactly (no GridDB here)", async () => {
    const rows: unknown[][] = [];
    const row = (gen: number | null, seq: number | null, sentAt = "2026-11-29T22:00:00.000Z"): unknown[] => [
      "2024-11-07T00:00:00.000Z",
      "info",
      "m",
      1,
      gen,
      seq,
      sentAt,
    ];
    for (let s = 0; s < 23_000; s++) if (s < 17_000 || s >= 17_100) rows.push(row(0, s));
    rows.push(row(0, 5, "2026-11-29T22:00:01.250Z")); // stored twice
    rows.push(row(0, null)); // a row without seq
    const r = await httpReceiver(gridAnswers(rows, null));
    const v = griddbVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields });
    try {
      const s = await v.sample();
      expect(s.stored).toBe(22_902);
      expect(s.newestSentAtMs).toBe(Date.UTC(2026, 10, 29, 22, 0, 1, 250));
      const l = await v.ledger([23_000], [[]]);
      expect(l).toEqual({
        sent: 23_000,
        accepted: 23_000,
        rejected: 0,
        stored: 22_902,
        distinct: 22_901,
        duplicated: 1,
        lost: 100,
        overwritten: 0,
        unexpected: 1,
        missingRanges: [[0, 17_000, 17_099]],
        foreign: 0,
        rejectedStored: 0,
        deduplicated: 0,
      });
      expect(r.got.filter((g) => g.body.toString().includes("GROUP BY")).length).toBe(
        Math.ceil(22_900 / GRIDDB_PAGE),
      );
    } finally {
      await v.close();
      await r.close();
    }
  });

  it("a TIME_SERIES container keeps one row per timestamp: seqs of two generators that share a row key are overwritten, not lost, computed from what was sent (no GridDB here)", async () => {
    // the seeded source gives seq s the timestamp 2024-11-07T00:00:00Z + s ms in every generator, so gen 0 and gen 1
    // collide on every seq (as two generators into one TIME_SERIES container do); the stand-in keeps the last writer
    const base = genBaseOf("20261201T100000Z-griddb");
    const rows: unknown[][] = [];
    const row = (gen: number, seq: number): unknown[] => [
      new Date(Date.UTC(2024, 10, 7) + seq).toISOString(),
      "info",
      "m",
      1,
      gen,
      seq,
      "2026-11-29T22:00:00.000Z",
    ];
    for (let s = 0; s < 1000; s++) if (s < 500 || s >= 510) rows.push(row(base + (s % 2), s)); // 500..509: no row at all
    rows.push(row(genBaseOf("20261201T090000Z-griddb"), 3)); // another run's row: foreign, in no sample
    for (const containerType of ["TIME_SERIES", "COLLECTION"]) {
      const r = await httpReceiver(
        gridAnswers(rows, { container_type: containerType, columns: gridDbColumns(fields) }),
      );
      const v = griddbVerifier.create({
        host: "127.0.0.1",
        port: r.port,
        params: {},
        fields,
        genBase: base,
        seed: 7,
      });
      try {
        await v.prepare();
        expect((await v.sample()).stored).toBe(990);
        const l = await v.ledger([1000, 1000], [[], []]);
        if (containerType === "TIME_SERIES") {
          expect(l).toMatchObject({
            stored: 990,
            distinct: 990,
            lost: 20,
            overwritten: 990,
            deduplicated: 0,
            foreign: 1,
            missingRanges: [
              [0, 500, 509],
              [1, 500, 509],
            ],
          });
        } else {
          expect(l).toMatchObject({ stored: 990, lost: 1010, overwritten: 0 });
        }
      } finally {
        await v.close();
        await r.close();
      }
    }
  });
});

describe("griddb verifier's live samples are windowed on the sent_at index (SQL per the GridDB SQL reference, Web API answers of the documented shapes from an in-process stand-in; no GridDB here)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("over a 400 s run every live sample's WHERE reads only rows sent after the frontier (now − 60 s a sample ago), stored = frozen + recent with rows that join while inside the horizon, and a row delivered after the frontier passed it is low in the live figure only: the full sample and the ledger count it (no GridDB here)", async () => {
    const T0 = Date.UTC(2026, 0, 5, 12, 0, 0, 250);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
    const base = genBaseOf("20260105T120000Z-griddb");
    // 5 rows a second for 360 s, delivered 3 s after they are sent; seqs 100..104 40 s after (inside the horizon), seq
    // 300 (sent at 60.5 s) 150 s after (its sent_at is behind the frontier by then); another run's rows, in no sample
    const LATE = 300;
    const sentOf = (s: number): number => T0 + 500 + s * 200;
    const lagOf = (s: number): number => (s === LATE ? 150_000 : s >= 100 && s < 105 ? 40_000 : 3000);
    const rows: unknown[][] = [];
    const visible: number[] = [];
    for (let s = 0; s < 1800; s++) {
      rows.push(["2024-11-07T00:00:00.000Z", "info", "m", 1, base, s, new Date(sentOf(s)).toISOString()]);
      visible.push(sentOf(s) + lagOf(s));
    }
    for (let s = 0; s < 50; s++) {
      rows.push([
        "2024-11-07T00:00:00.000Z",
        "info",
        "m",
        1,
        genBaseOf("20260105T110000Z-griddb"),
        s,
        new Date(sentOf(s)).toISOString(),
      ]);
      visible.push(sentOf(s) + 1000);
    }
    const r = await httpReceiver(gridAnswers(rows, null, (i) => visible[i]!));
    const v = griddbVerifier.create({ host: "127.0.0.1", port: r.port, params: {}, fields, genBase: base });
    try {
      await v.prepare();
      const exact = (t: number): number => visible.slice(0, 1800).filter((at) => at <= t).length;
      const stmts = (from: number): string[] =>
        r.got.slice(from).map((g) => (JSON.parse(g.body.toString()) as [{ stmt: string }])[0].stmt);
      const iso = (ms: number): string => new Date(ms).toISOString();
      let seen = r.got.length;
      let newest: number | null = null;
      let frontier: number | null = null;
      for (let t = T0 + 1000; t <= T0 + 400_000; t += 1000) {
        vi.setSystemTime(t);
        const horizon = liveHorizonMs(t - (newest ?? T0));
        expect(horizon).toBe(t - T0 <= 390_000 ? LIVE_HORIZON_MS : 2 * (t - newest!));
        const s = await v.sample({ tag: "measure" });
        newest = s.newestSentAtMs;
        const late = sentOf(LATE) + lagOf(LATE) <= t ? 1 : 0;
        expect(s.stored, `stored at ${(t - T0) / 1000} s`).toBe(exact(t) - late);
        const [stmt, ...more] = stmts(seen);
        seen = r.got.length;
        expect(more).toEqual([]);
        const cut = Math.max(t - horizon, frontier ?? -Infinity);
        const after = frontier === null ? "sent_at IS NOT NULL" : `sent_at > TIMESTAMP('${iso(frontier)}')`;
        expect(stmt).toBe(
          `SELECT COUNT(*), MAX(sent_at), SUM(CASE WHEN sent_at <= TIMESTAMP('${iso(cut)}') THEN 1 ELSE 0 END) FROM "ib_events" WHERE ${after} AND gen >= ${base} AND gen < ${base + 256}`,
        );
        if (frontier !== null) expect(frontier).toBeGreaterThanOrEqual(t - 1000 - horizon); // the rows of the horizon only, however long the run
        frontier = cut;
      }
      vi.setSystemTime(T0 + 401_000);
      const full = await v.sample({ full: true, tag: "drain" });
      expect(full.stored).toBe(1800);
      expect(stmts(seen)).toEqual([
        `SELECT COUNT(*), MAX(sent_at) FROM "ib_events" WHERE gen >= ${base} AND gen < ${base + 256}`,
      ]);
      expect((await v.sample({ tag: "drain" })).stored).toBe(1799); // a live sample after it still lacks the late row
      const l = await v.ledger([1800], [[]]);
      expect(l).toMatchObject({
        sent: 1800,
        stored: 1800,
        lost: 0,
        duplicated: 0,
        unexpected: 0,
        foreign: 50,
      });
    } finally {
      await v.close();
      await r.close();
    }
  });
});
