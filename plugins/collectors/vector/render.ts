/**
 * Collector "vector": renders vector.yaml (Vector reads YAML, TOML or JSON; YAML here, parsed back by `yaml` in
 * the tests) from the scenario's `collector.vector` block, with Vector's own option names (vector.dev reference:
 * sources http_server / fluent / socket, sinks clickhouse / elasticsearch / loki, and the sink options
 * batch.max_events, batch.timeout_secs, request.concurrency, buffer.type, buffer.max_events, buffer.when_full).
 *
 * ```yaml
 * collector:
 *   vector:
 *     source: { http_server: { port: 8080 } }            # or { fluent: {port} } or { socket: {port} }
 *     sink:
 *       batch:   { max_events: 1000, timeout_secs: 1 }
 *       request: { concurrency: 4 }                      # a number, "adaptive" or "none"
 *       buffer:  { type: memory, max_events: 10000, when_full: block }
 * ```
 *
 * Metrics: an internal_metrics source into a prometheus_exporter sink on 0.0.0.0:9598 (GET /metrics), e.g.
 * vector_buffer_events, vector_component_sent_events_total.
 */
import { stringify } from "yaml";
import { z } from "zod";
import { ConfigurationError } from "../../../core/errors.ts";
import {
  compact,
  param,
  type CollectorRenderer,
  type RenderInput,
  type RenderedConfig,
} from "../../../core/render.ts";
import { collectorAuth } from "../../../core/secrets.ts";

/** The catalog's pin (./image.ts). */
export const VECTOR_PIN = "0.49.0";
/** Config path given to the container's `vector` entrypoint with --config. */
export const VECTOR_CONFIG_FILE = "/etc/vector/ingestbench.yaml";
/** prometheus_exporter port. */
export const VECTOR_METRICS_PORT = 9598;

const port = z.number().int().min(1).max(65535);

const sourceSchema = z
  .object({
    /** NDJSON or JSON bodies over HTTP (the http-json generator) */
    http_server: z
      .object({
        port: port.default(8080),
        framing: z.enum(["newline_delimited", "bytes"]).default("newline_delimited"),
      })
      .strict()
      .optional(),
    /** the Fluentd forward protocol */
    fluent: z
      .object({ port: port.default(24224) })
      .strict()
      .optional(),
    /** newline-delimited JSON over TCP */
    socket: z
      .object({ port: port.default(9000) })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const given = Object.keys(s).filter((k) => s[k as keyof typeof s] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `give exactly one source: http_server, fluent or socket (got ${given.length === 0 ? "none" : given.join(", ")})`,
      });
  });

/** Scenario block `collector.vector`. */
export const vectorSchema = z
  .object({
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'a version like "0.49.0"')
      .default(VECTOR_PIN),
    source: sourceSchema.default({ http_server: {} }),
    sink: z
      .object({
        batch: z
          .object({
            max_events: z.number().int().positive().optional(),
            max_bytes: z.number().int().positive().optional(),
            timeout_secs: z.number().positive().optional(),
          })
          .strict()
          .default({}),
        request: z
          .object({
            concurrency: z
              .union([z.number().int().positive(), z.literal("adaptive"), z.literal("none")])
              .optional(),
            timeout_secs: z.number().int().positive().optional(),
          })
          .strict()
          .default({}),
        buffer: z
          .object({
            type: z.enum(["memory", "disk"]).default("memory"),
            /** memory buffers: events held */
            max_events: z.number().int().positive().optional(),
            /** disk buffers: bytes (Vector's minimum is 268435488) */
            max_size: z.number().int().min(268_435_488).optional(),
            when_full: z.enum(["block", "drop_newest"]).default("block"),
          })
          .strict()
          .superRefine((b, ctx) => {
            if (b.type === "disk" && b.max_size === undefined)
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                path: ["max_size"],
                message: "a disk buffer needs max_size (bytes, at least 268435488)",
              });
            if (b.type === "disk" && b.max_events !== undefined)
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                path: ["max_events"],
                message: "max_events applies to memory buffers; a disk buffer takes max_size",
              });
            if (b.type === "memory" && b.max_size !== undefined)
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                path: ["max_size"],
                message: "max_size applies to disk buffers; a memory buffer takes max_events",
              });
          })
          .default({}),
        compression: z.enum(["none", "gzip"]).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

export type VectorConfig = z.infer<typeof vectorSchema>;

const VECTOR_SINKS: readonly string[] = ["clickhouse", "elasticsearch", "loki"];

function sinkOptions(input: RenderInput<VectorConfig>): Record<string, unknown> {
  const { sink } = input;
  // with a sink password: `auth: { strategy: basic, user, password }` (the clickhouse, elasticsearch and loki sinks'
  // own option, Vector reference "Sinks"), the password as Vector's reference to the container's variable (`${NAME}`,
  // Vector reference "Environment variables"), never its value
  const a = collectorAuth(sink.name, sink.params);
  return {
    ...sinkOptionsOf(input),
    ...(a ? { auth: { strategy: "basic", user: a.user, password: `\${${a.variable}}` } } : {}),
  };
}

function sinkOptionsOf(input: RenderInput<VectorConfig>): Record<string, unknown> {
  const { sink } = input;
  const base = `http://${sink.host}:${sink.port}`;
  switch (sink.name) {
    case "clickhouse":
      return {
        type: "clickhouse",
        endpoint: base,
        database: param(sink, "database", "default"),
        table: param(sink, "table", "ib_events"),
        // the http_server source adds path, source_type and timestamp, which the table does not have
        skip_unknown_fields: true,
      };
    case "elasticsearch":
      return {
        type: "elasticsearch",
        endpoints: [base],
        api_version: "v8",
        mode: "bulk",
        bulk: { action: "index", index: param(sink, "index", "ib_events") },
      };
    case "loki":
      return {
        type: "loki",
        endpoint: base,
        encoding: { codec: "json" },
        labels: { job: param(sink, "job", "ingestbench") },
      };
    default:
      throw new ConfigurationError(
        "E_COLLECTOR_SINK",
        `collector vector cannot write into sink "${sink.name}" (supported: ${VECTOR_SINKS.join(", ")})`,
        { field: "sink" },
      );
  }
}

/** Render vector.yaml. @throws ConfigurationError for a sink Vector cannot write into. */
export function renderVectorConfig(input: RenderInput<VectorConfig>): RenderedConfig {
  const { config } = input;
  const src = config.source;
  let source: Record<string, unknown>;
  let dataPort: number;
  if (src.http_server) {
    dataPort = src.http_server.port;
    source = {
      type: "http_server",
      address: `0.0.0.0:${dataPort}`,
      decoding: { codec: "json" },
      framing: { method: src.http_server.framing },
    };
  } else if (src.fluent) {
    dataPort = src.fluent.port;
    source = { type: "fluent", address: `0.0.0.0:${dataPort}`, mode: "tcp" };
  } else {
    dataPort = src.socket!.port;
    source = {
      type: "socket",
      mode: "tcp",
      address: `0.0.0.0:${dataPort}`,
      decoding: { codec: "json" },
      framing: { method: "newline_delimited" },
    };
  }
  const s = config.sink;
  const doc = compact({
    data_dir: "/var/lib/vector",
    sources: {
      ib_in: source,
      ib_internal_metrics: { type: "internal_metrics" },
    },
    sinks: {
      ib_out: {
        ...sinkOptions(input),
        inputs: ["ib_in"],
        compression: s.compression,
        batch: s.batch,
        request: s.request,
        buffer: s.buffer,
      },
      ib_metrics: {
        type: "prometheus_exporter",
        inputs: ["ib_internal_metrics"],
        address: `0.0.0.0:${VECTOR_METRICS_PORT}`,
      },
    },
  });
  const text =
    `# Rendered by ingestbench (plugins/collectors/vector/render.ts) for Vector ${config.version}.\n` +
    stringify(doc, { lineWidth: 0 });
  return {
    file: VECTOR_CONFIG_FILE,
    text,
    command: ["--config", VECTOR_CONFIG_FILE],
    listens: { data: dataPort, metrics: VECTOR_METRICS_PORT },
  };
}

export const vectorRenderer: CollectorRenderer<VectorConfig> = {
  writesTo: VECTOR_SINKS,
  // socket (NDJSON over TCP) is spoken by no generator of harness/generators/
  accepts: (c) => (c.source.fluent ? ["fluent-forward"] : c.source.http_server ? ["http-json"] : []),
  render: renderVectorConfig,
};
