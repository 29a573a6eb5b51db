import { describe, expect, it } from "vitest";
import { rowSourceOf } from "../../../core/events/encoding.ts";
import {
  GridDbError,
  GridDbRowsEncoder,
  basicAuth,
  gridDbAuthorization,
  gridDbRowsPath,
  parseGridDbResponse,
} from "../../../core/events/griddb-webapi.ts";
import type { EventField } from "../../../core/events/types.ts";

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "host", type: "string" },
  { name: "bytes", type: "int" },
  { name: "ratio", type: "float" },
  { name: "ok", type: "bool" },
];
const TS = new Date(Date.UTC(2024, 10, 7, 0, 0, 1, 234));
const SENT = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));
const source = rowSourceOf(
  fields,
  [
    [TS, "web-1", 4096, 0.25, true],
    [TS, null, 0, 12.5, false],
  ],
  1,
);

function thrown(f: () => unknown): GridDbError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(GridDbError);
    return err as GridDbError;
  }
  throw new Error("did not throw");
}

describe("griddb-webapi encoder and answers (byte-level vectors from the published spec: GridDB Web API Reference)", () => {
  it("writes rows as positional arrays in field order, then gen, seq, sent_at", () => {
    const enc = new GridDbRowsEncoder(source);
    const b = enc.encode(0, 2);
    enc.stamp(b, SENT);
    expect(b.payload.toString()).toBe(
      '[["2024-11-07T00:00:01.234Z","web-1",4096,0.25,true,1,0,"2025-01-02T03:04:05.678Z"],' +
        '["2024-11-07T00:00:01.234Z",null,0,12.5,false,1,1,"2025-01-02T03:04:05.678Z"]]',
    );
    expect(gridDbRowsPath("myCluster", "public", "ib events")).toBe(
      "/griddb/v2/myCluster/dbs/public/containers/ib%20events/rows",
    );
    expect(basicAuth("admin", "admin")).toBe("Basic YWRtaW46YWRtaW4=");
  });

  it("has no default password: the Authorization needs INGESTBENCH_GRIDDB_PASSWORD, else E_GRIDDB_PASSWORD naming it and the config secret", () => {
    expect(gridDbAuthorization({ user: "bench" }, { INGESTBENCH_GRIDDB_PASSWORD: "pw" })).toBe(
      basicAuth("bench", "pw"),
    );
    expect(gridDbAuthorization({}, { INGESTBENCH_GRIDDB_PASSWORD: "pw" })).toBe(basicAuth("admin", "pw"));
    expect(() => gridDbAuthorization({}, {})).toThrow(
      expect.objectContaining({
        code: "E_GRIDDB_PASSWORD",
        message: expect.stringMatching(
          /INGESTBENCH_GRIDDB_PASSWORD .*pulumi config set --secret ingestbench:griddbPassword/,
        ),
      }),
    );
  });

  it("reads the stored count and types the documented error bodies", () => {
    expect(parseGridDbResponse(200, '{"count":2}', 2)).toBe(2);
    expect(thrown(() => parseGridDbResponse(200, '{"count":1}', 2))).toMatchObject({
      kind: "count-mismatch",
      code: "E_GRIDDB_COUNT_MISMATCH",
    });

    const invalid = thrown(() =>
      parseGridDbResponse(400, '{"version":"v2","errorCode":400,"errorMessage":"Row data is invalid"}', 2),
    );
    expect(invalid).toMatchObject({
      kind: "row-invalid",
      status: 400,
      errorCode: 400,
      code: "E_GRIDDB_ROW_INVALID",
    });
    expect(invalid.message).toContain("Row data is invalid");

    const conv = thrown(() =>
      parseGridDbResponse(
        400,
        '{"version":"v2","errorCode":"400","errorMessage":"The specified data cannot be converted to LONG type"}',
        2,
      ),
    );
    expect(conv).toMatchObject({
      kind: "type-conversion",
      targetType: "LONG",
      errorCode: "400",
      code: "E_GRIDDB_TYPE_CONVERSION",
    });

    expect(
      thrown(() =>
        parseGridDbResponse(
          401,
          '{"version":"v2","errorCode":401,"errorMessage":"Authentication failed"}',
          1,
        ),
      ),
    ).toMatchObject({ kind: "auth" });
    expect(
      thrown(() =>
        parseGridDbResponse(404, '{"version":"v2","errorCode":404,"errorMessage":"Container not found"}', 1),
      ),
    ).toMatchObject({ kind: "not-found" });
    expect(thrown(() => parseGridDbResponse(500, "Internal Server Error", 1))).toMatchObject({
      kind: "other",
      errorCode: null,
      message: expect.stringContaining("Internal Server Error"),
    });
  });
});
