import { describe, expect, it } from "vitest";
import { griddbWebapi, griddbWebapiSchema } from "../../../harness/generators/griddb-webapi.ts";
import { generators } from "../../../harness/generators/index.ts";
import { fields, httpReceiver, seqsOf, startGenerator } from "./run-generator.ts";

// GridDB has no default password (core/events/griddb-webapi.ts gridDbAuthorization): these vectors use "admin" from the environment
process.env.INGESTBENCH_GRIDDB_PASSWORD = "admin";

/** An error body of the GridDB Web API ("Response body" on failure). */
const gridError = (errorCode: number, errorMessage: string): string =>
  JSON.stringify({ version: "v2", errorCode, errorMessage });

describe("griddb-webapi generator (row registration and error bodies from the GridDB Web API Reference; no GridDB here)", () => {
  it("validates its config strictly and is registered", () => {
    expect(griddbWebapiSchema.parse({})).toMatchObject({ batch: 1000, connections: 1, rate: "max" });
    expect(() => griddbWebapiSchema.parse({ container: "x" })).toThrow();
    expect(generators["griddb-webapi"]).toBe(griddbWebapi);
  });

  it("PUTs positional rows with Basic auth; 'Row data is invalid' and a type-conversion error reject exactly their batches with GridDB's message (documented shapes; no GridDB here)", async () => {
    const r = await httpReceiver((req) => {
      const rows = JSON.parse(req.body.toString("utf8")) as unknown[][];
      if (req.k === 2) return { status: 400, body: gridError(145001, "Row data is invalid") };
      if (req.k === 3)
        return {
          status: 400,
          body: gridError(145002, "The specified data cannot be converted to LONG type"),
        };
      return { status: 200, body: JSON.stringify({ count: rows.length }) };
    });
    try {
      // the password from the environment only (params are recorded in run.json and never carry one)
      process.env.INGESTBENCH_GRIDDB_PASSWORD = "pw";
      const run = startGenerator(griddbWebapi, { batch: 25 }, r.port, {
        cluster: "benchCluster",
        container: "logs01",
        user: "bench",
        password: "not-read",
      });
      process.env.INGESTBENCH_GRIDDB_PASSWORD = "admin";
      r.onRequest((k) => {
        if (k >= 5) run.stop();
      });
      const final = await run.done;
      const seqs: number[] = [];
      for (const req of r.got) {
        expect(req.method).toBe("PUT");
        expect(req.url).toBe("/griddb/v2/benchCluster/dbs/public/containers/logs01/rows");
        expect(req.headers["content-type"]).toBe("application/json; charset=UTF-8");
        expect(req.headers.authorization).toBe(`Basic ${Buffer.from("bench:pw").toString("base64")}`);
        for (const row of JSON.parse(req.body.toString("utf8")) as unknown[][]) {
          expect(row).toHaveLength(fields.length + 3); // positional: the fields in order, then gen, seq, sent_at
          expect(row[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/); // TIMESTAMP: YYYY-MM-DDThh:mm:ss.SSSZ
          expect(typeof row[3]).toBe("number");
          expect(row[fields.length]).toBe(0);
          expect(row[fields.length + 2]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
          seqs.push(row[fields.length + 1] as number);
        }
      }
      expect(seqs).toEqual(Array.from({ length: final.sent }, (_, i) => i));
      expect(seqsOf(final.rejectedRanges)).toEqual(Array.from({ length: 50 }, (_, i) => 25 + i));
      expect(final.accepted).toBe(final.sent - 50);
      const errs = final.errors.join("\n");
      expect(errs).toContain("GridDB answered 400 (errorCode 145001): Row data is invalid");
      expect(errs).toContain(
        "GridDB answered 400 (errorCode 145002): The specified data cannot be converted to LONG type",
      );
    } finally {
      await r.close();
    }
  });

  it("defaults: cluster myCluster, database public, container ib_events, user admin (the password from INGESTBENCH_GRIDDB_PASSWORD); a 200 with a short count rejects the batch (no GridDB here)", async () => {
    const r = await httpReceiver((req) => {
      const rows = JSON.parse(req.body.toString("utf8")) as unknown[][];
      return { status: 200, body: JSON.stringify({ count: req.k === 1 ? rows.length - 2 : rows.length }) };
    });
    try {
      const run = startGenerator(griddbWebapi, { batch: 10 }, r.port, {});
      r.onRequest((k) => {
        if (k >= 2) run.stop();
      });
      const final = await run.done;
      expect(r.got[0]!.url).toBe("/griddb/v2/myCluster/dbs/public/containers/ib_events/rows");
      expect(r.got[0]!.headers.authorization).toBe(`Basic ${Buffer.from("admin:admin").toString("base64")}`);
      expect(seqsOf(final.rejectedRanges)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(final.errors[0]).toMatch(/GridDB stored 8 rows of 10/);
    } finally {
      await r.close();
    }
  });
});
