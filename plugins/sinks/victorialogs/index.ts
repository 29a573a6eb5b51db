/** The victorialogs sink plugin: VictoriaLogs' single-node server, locally from the project's Go module build. */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { victorialogs, victoriaLogsSchema, type VictoriaLogsConfig } from "./component.ts";
import { victoriaLogsVerifier } from "./verifier.ts";

export const plugin = {
  kind: "sink",
  name: "victorialogs",
  about:
    "VictoriaLogs 1.52.2 (single node): built from its Go module by scripts/build-victorialogs.sh, local platform only",
  evidence: { level: "real-ci", version: "1.52.2" },
  schema: victoriaLogsSchema,
  local: victorialogs,
  verifier: victoriaLogsVerifier,
  // no block key travels as a param (container platforms only): the local component hands generators, collectors
  // and the verifier its own params (./component.ts victoriaLogsParams: each protocol's ingestion path with its
  // args, and the _msg_field the verifier reads back from _msg)
  params: [],
  // half the working set observed right after start (docs/decisions/0009-memory-caps-too-small-to-start.md)
  minMemory: {
    bytes: 8 * 2 ** 20,
    why: "its working set after start, one insert and one query is about 18 MB (VmRSS, Intel Xeon, 2026-12-07: docs/measurements.md)",
  },
} satisfies SinkPlugin<VictoriaLogsConfig>;
