// The GridDB row reader (./rows.ts) against byte-level vectors: the rows are the griddb-webapi encoder's own bytes
// (what `PUT …/containers/<c>/rows` stores, positional), answered by an in-process stand-in for `POST …/sql/select`
// in the documented shape `[{"columns":[…],"results":[[…]]}]` ("GridDB Web API Reference"); no GridDB here.
import { describe, expect, it } from "vitest";
import { checkFidelity } from "../../../core/fidelity.ts";
import { GridDbRowsEncoder } from "../../../core/events/griddb-webapi.ts";
import { createEventSource } from "../../../core/events/source.ts";
import { fields, httpReceiver, type GotRequest } from "../../../test/harness/generators/run-generator.ts";
import { griddbVerifier } from "./verifier.ts";
import { GRIDDB_ROWS_PAGE } from "./rows.ts";

// GridDB has no default password (core/events/griddb-webapi.ts gridDbAuthorization): these vectors use "admin" from the environment
process.env.INGESTBENCH_GRIDDB_PASSWORD = "admin";

const BASE = "/griddb/v2/myCluster/dbs/public";
const PARAMS = {
  cluster: "myCluster",
  database: "public",
  container: "ib_events",
  user: "admin",
  password: "admin",
};

/** `SELECT "gen", "seq", <fields> FROM "ib_events" WHERE gen = g AND (seq >= a AND seq < b | seq IN (…)) ORDER BY seq LIMIT n` */
function sqlAnswers(rows: unknown[][], statements: string[]) {
  const n = fields.length;
  return (req: GotRequest) => {
    expect(`${req.method} ${req.url}`).toBe(`POST ${BASE}/sql/select`);
    const [{ stmt }] = JSON.parse(req.body.toString("utf8")) as [{ stmt: string }];
    statements.push(stmt);
    const m =
      /^SELECT "gen", "seq", "ts", "level", "msg", "n" FROM "ib_events" WHERE gen = (\d+) AND (?:seq >= (\d+) AND seq < (\d+)|seq IN \(([\d, ]+)\)) ORDER BY seq LIMIT (\d+)$/.exec(
        stmt,
      );
    if (!m)
      return {
        status: 400,
        body: JSON.stringify({ version: "v2", errorCode: 151001, errorMessage: `unexpected ${stmt}` }),
      };
    const inList = m[4] ? new Set(m[4].split(", ").map(Number)) : null;
    const match = rows
      .filter(
        (r) =>
          r[n] === Number(m[1]) &&
          (inList
            ? inList.has(r[n + 1] as number)
            : (r[n + 1] as number) >= Number(m[2]) && (r[n + 1] as number) < Number(m[3])),
      )
      .sort((a, b) => (a[n + 1] as number) - (b[n + 1] as number))
      .slice(0, Number(m[5]));
    const columns = [
      { name: "gen", type: "INTEGER" },
      { name: "seq", type: "LONG" },
      { name: "ts", type: "TIMESTAMP" },
      { name: "level", type: "STRING" },
      { name: "msg", type: "STRING" },
      { name: "n", type: "LONG" },
    ];
    return {
      status: 200,
      body: JSON.stringify([{ columns, results: match.map((r) => [r[n], r[n + 1], ...r.slice(0, n)]) }]),
    };
  };
}

describe("griddb row reader (byte-level vectors: the griddb-webapi encoder's rows in documented SQL answers; no GridDB here)", () => {
  it("reads rows back; the content check finds exactly the altered ones; a range beyond one answer is split (no GridDB here)", async () => {
    const rows = JSON.parse(
      new GridDbRowsEncoder(createEventSource({ fields, seed: 42, genId: 0 }))
        .encode(0, 10_000)
        .payload.toString("utf8"),
    ) as unknown[][];
    rows.push([...rows[9000]!]); // a duplicate: 10 001 rows
    rows[5]![2] = (rows[5]![2] as string).replace("a", "A"); // msg re-cased at one byte
    rows[6]![0] = "2024-11-07T00:00:06.006Z"; // ts moved 6 s
    const statements: string[] = [];
    const r = await httpReceiver(sqlAnswers(rows, statements));
    const v = griddbVerifier.create({ host: "127.0.0.1", port: r.port, params: PARAMS, fields });
    try {
      const res = await checkFidelity(v.rows!, {
        fields,
        seed: 42,
        sent: [10_000],
        stored: 10_001,
        limits: { all: 20_000, sample: 10 },
      });
      expect(res).toMatchObject({
        mode: "all",
        rowsCompared: 10_001,
        seqsCompared: 10_000,
        altered: 2,
        alteredByField: { msg: 1, ts: 1 },
      });
      expect(res.examples[1]).toMatchObject({
        seq: 6,
        field: "ts",
        expected: "2024-11-07T00:00:00.006Z",
        stored: "2024-11-07T00:00:06.006Z",
      });
      expect(statements.map((s) => /seq >= (\d+) AND seq < (\d+)/.exec(s)!.slice(1).join(".."))).toEqual([
        "0..10000",
        "0..5000",
        "5000..10000",
      ]);
      expect(statements[0]).toContain(`LIMIT ${GRIDDB_ROWS_PAGE + 1}`);
      const sample = await checkFidelity(v.rows!, {
        fields,
        seed: 42,
        sent: [10_000],
        stored: 10_001,
        limits: { all: 0, sample: 100 },
      });
      expect(sample).toMatchObject({ mode: "sample", sampleSize: 100, seqsCompared: 100 });
      expect(statements.at(-1)).toMatch(/seq IN \(/);
    } finally {
      await v.close();
      await r.close();
    }
  });
});
