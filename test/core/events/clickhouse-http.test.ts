import { describe, expect, it } from "vitest";
import {
  CLICKHOUSE_TOO_MANY_PARTS,
  ClickHouseJsonEachRowEncoder,
  clickHouseInsertQuery,
  parseClickHouseError,
} from "../../../core/events/clickhouse-http.ts";
import { rowSourceOf } from "../../../core/events/encoding.ts";
import type { EventField } from "../../../core/events/types.ts";

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string" },
  { name: "n", type: "int" },
];
const TS = new Date(Date.UTC(2024, 10, 7, 0, 0, 1, 234));
const SENT = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));
const source = rowSourceOf(
  fields,
  [
    [TS, 'a "b"\n', 42],
    [TS, "c", 1],
  ],
  3,
  10,
);

describe("clickhouse-http encoder (byte-level vectors from the published spec: ClickHouse JSONEachRow, HTTP interface)", () => {
  it("writes one JSON object per line, times as epoch milliseconds by default", () => {
    const enc = new ClickHouseJsonEachRowEncoder(source);
    const b = enc.encode(10, 2);
    enc.stamp(b, SENT);
    expect(b.payload.toString()).toBe(
      String.raw`{"ts":1730937601234,"msg":"a \"b\"\n","n":42,"gen":3,"seq":10,"sent_at":1735787045678}` +
        "\n" +
        `{"ts":1730937601234,"msg":"c","n":1,"gen":3,"seq":11,"sent_at":1735787045678}\n`,
    );
  });

  it("writes DateTime text (UTC, seconds) for DateTime columns", () => {
    const enc = new ClickHouseJsonEachRowEncoder(source, "datetime");
    const b = enc.encode(11, 1);
    enc.stamp(b, SENT);
    expect(b.payload.toString()).toBe(
      '{"ts":"2024-11-07 00:00:01","msg":"c","n":1,"gen":3,"seq":11,"sent_at":"2025-01-02 03:04:05"}\n',
    );
  });

  it("names the columns in the INSERT query and reads error codes such as 252 TOO_MANY_PARTS", () => {
    expect(clickHouseInsertQuery("ib_events", fields)).toBe(
      'INSERT INTO "ib_events" ("ts", "msg", "n", "gen", "seq", "sent_at") FORMAT JSONEachRow',
    );
    expect(parseClickHouseError(200, "")).toBeNull();
    const e = parseClickHouseError(
      500,
      "Code: 252, e.displayText() = DB::Exception: Too many parts (300). Merges are processing significantly slower than inserts., e.what() = DB::Exception\n",
    );
    expect(e).toMatchObject({ status: 500, code: CLICKHOUSE_TOO_MANY_PARTS, retryable: true });
    expect(
      parseClickHouseError(
        400,
        "Code: 27. DB::Exception: Cannot parse input: expected '\"' before: 'x': (at row 1)\n. (CANNOT_PARSE_INPUT_ASSERTION_FAILED)",
      ),
    ).toMatchObject({ code: 27, retryable: false });
    expect(parseClickHouseError(502, "bad gateway")).toMatchObject({ code: null, retryable: false });
  });
});
