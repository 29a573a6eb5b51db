/** The clickhouse sink plugin: ClickHouse over its HTTP interface. */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { clickhouse, clickhouseSchema, type ClickHouseConfig } from "./component.ts";
import { image } from "./image.ts";
import { clickhouseVerifier } from "./verifier.ts";

export const plugin = {
  kind: "sink",
  name: "clickhouse",
  about:
    "ClickHouse: the installed clickhouse-server locally, clickhouse/clickhouse-server:25.8 on docker and azure",
  evidence: { level: "real-ci", version: "18.16" },
  schema: clickhouseSchema,
  local: clickhouse,
  image,
  verifier: clickhouseVerifier,
  // connection params the renderers and the verifier read (default: the verifier's): database ("default"), table
  // ("ib_events"), user ("default")
  params: ["database", "table", "user"],
  // half the working set observed right after start (docs/decisions/0009-memory-caps-too-small-to-start.md)
  minMemory: {
    bytes: 16 * 2 ** 20,
    why: "its working set after start and the schema is about 36 MB (docs/decisions/0009-memory-caps-too-small-to-start.md)",
  },
} satisfies SinkPlugin<ClickHouseConfig>;
