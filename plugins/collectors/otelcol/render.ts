/**
 * Collector "otelcol": renders the OpenTelemetry Collector (0.165.0) config YAML from the scenario's
 * `collector.otelcol` block, in the Collector's own names. One renderer for every platform: the container platforms
 * run the contrib distribution (opentelemetry-collector-releases distributions/otelcol-contrib/manifest.yaml lists
 * every component used here: fluentforwardreceiver, batchprocessor, transformprocessor, otlphttpexporter,
 * elasticsearchexporter, opensearchexporter, healthcheckextension, basicauthextension); the local platform runs the
 * project's own build (./distribution/components.go, a subset) and only for the sinks in OTELCOL_LOCAL_SINKS, whose
 * configs use only what that build contains (./render.test.ts checks it against the built binary's `components`).
 * Only the config file's path differs between the platforms (renderOtelcolConfig's `file`).
 *
 * ```yaml
 * collector:
 *   otelcol:
 *     receivers:  { fluentforward: { endpoint: "0.0.0.0:24224" } }
 *     processors: { batch: { send_batch_size: 8192, send_batch_max_size: 0, timeout: 200ms } }
 *     exporters:                      # settings of the exporter the sink selects (one of these keys)
 *       otlphttp:      { timeout: 5s, sending_queue: { queue_size: 1000, num_consumers: 10 }, retry_on_failure: { enabled: true } }
 *       elasticsearch: { timeout: 90s, sending_queue: {...}, retry: { max_retries: 3 } }
 *       opensearch:    { timeout: 5s, sending_queue: {...}, retry_on_failure: {...} }
 *     service: { telemetry: { metrics: { level: normal, readers: [ { pull: { exporter: { prometheus: { host: 0.0.0.0, port: 8888 } } } } ] } } }
 * ```
 *
 * What lands where (the verifiers count `gen`, `seq`, `sent_at` and the scenario's fields):
 * - fluentforwardreceiver (contrib receiver/fluentforwardreceiver/conversion.go): every Forward record key becomes
 *   a log record attribute of the same name and type (msgpack ints → Int, str → Str, float → Double, bool → Bool),
 *   except `message` and `log`, which become the body; the tag becomes the attribute `fluent.tag`. The
 *   fluent-forward generator (core/events/fluent-forward.ts) writes the fields, then gen, seq, sent_at; timestamps
 *   as 24-byte ISO strings. So a field named `message` or `log` cannot be rendered (ConfigurationError).
 * - ClickHouse: clickhouseexporter writes only its own fixed `otel_logs` schema (Timestamp, Body, LogAttributes
 *   Map(String, String), ...), never the verifier's column table (plugins/sinks/clickhouse/verifier.ts: the fields, then
 *   gen, seq, sent_at). Instead the core otlphttp exporter, `encoding: json`, POSTs each OTLP/JSON
 *   ExportLogsServiceRequest (opentelemetry-proto, "OTLP/HTTP" JSON encoding: attributes as
 *   `[{"key", "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue"}}]`, int64 as a decimal string)
 *   to ClickHouse's HTTP interface with `INSERT INTO <table> (cols) SELECT ... FROM input('body String') FORMAT
 *   JSONAsString` in the query string (ClickHouse docs: table function `input`, format JSONAsString, JSON functions):
 *   one body is one String value, unnested to one row per log record, each column read from its attribute; ISO
 *   timestamps become epoch milliseconds (the verifier's UInt64). ClickHouse answers an INSERT with an empty 200
 *   body, which otlphttp accepts (it reads a partial-success answer only from protobuf or JSON content types).
 * - Elasticsearch (elasticsearchexporter `mapping.mode: bodymap`) and OpenSearch (opensearchexporter
 *   `mapping.mode: bodymap`): the document is the log record's body map, as is; a transform processor moves the
 *   attributes (less `fluent.tag`) into the body, so each document is exactly {fields..., gen, seq, sent_at} in the
 *   index `params.index`, as plugins/sinks/elasticsearch/verifier.ts maps it.
 * - VictoriaLogs: the core otlphttp exporter into its OTLP endpoint `/insert/opentelemetry/v1/logs` (protobuf); the
 *   record's attributes become its log fields (the verifier reads gen, seq, sent_at and the fields by name).
 * - Loki: lokiexporter left the contrib distribution in 0.131.0 (opentelemetry-collector-releases CHANGELOG.md,
 *   v0.131.0: "exporter/loki ... removed"), so otlphttp writes to Loki's native OTLP endpoint (`/otlp/v1/logs`),
 *   the body map again (Loki stores a map body as its JSON line). The pairing is refused on deployed stacks
 *   (./image.ts `refuses`): see LOKI_REFUSAL.
 *
 * Metrics: the Collector's own telemetry, a pull reader with the Prometheus exporter on 0.0.0.0:8888 (GET /metrics);
 * `service.telemetry.metrics.address` is no longer read by the binary (deprecated in the Collector's
 * open-telemetry/opentelemetry-collector#11205 for `readers`).
 */
import { stringify } from "yaml";
import { z } from "zod";
import { ConfigurationError } from "../../../core/errors.ts";
import { quoteIdent } from "../../../core/events/copy-text.ts";
import type { EventField } from "../../../core/events/types.ts";
import {
  compact,
  param,
  type CollectorRenderer,
  type RenderInput,
  type RenderedConfig,
} from "../../../core/render.ts";
import { collectorAuth } from "../../../core/secrets.ts";

/** The pin of every platform: the project's build (./distribution) and the contrib image tag (./image.ts). */
export const OTELCOL_PIN = "0.165.0";
/** Where the rendered config is written in the container; given to the image's entrypoint with --config. */
export const OTELCOL_CONFIG_FILE = "/etc/otelcol-contrib/ingestbench.yaml";
/** The Prometheus pull reader's default port (GET /metrics). */
export const OTELCOL_METRICS_PORT = 8888;
/** The fluentforward receiver's port here (the Forward protocol's usual 24224, as the other collectors'). */
export const OTELCOL_FORWARD_PORT = 24224;
/** The health_check extension's port (its default 13133): GET / answers 200 once every pipeline has started. */
export const OTELCOL_HEALTH_PORT = 13133;

/** Why the Loki pairing is refused on deployed stacks (./image.ts `refuses`). */
export const LOKI_REFUSAL =
  "lokiexporter left the contrib distribution in 0.131.0, and Loki's native OTLP endpoint makes stream labels only from the resource attributes its limits_config.otlp_config promotes (service.name → service_name, not job): the verifier's {job=\"...\"} selector would find no line. Needs a sink-side change: Loki's otlp_config indexing `job`, or a selector sink param";

/** The sinks written into on the container platforms (plugins/registry.ts names). */
const OTELCOL_SINKS = ["clickhouse", "elasticsearch", "opensearch", "loki", "victorialogs"] as const;
/**
 * The sinks the local platform's collector writes into: those whose exporter the project's build contains and whose
 * local sink can take what it sends. Not ClickHouse: the local sink is ClickHouse 18.16, whose SQL lacks the
 * functions of clickhouseInsert (mapFromArrays, parseDateTime64BestEffort, toUnixTimestamp64Milli); nor
 * Elasticsearch/OpenSearch: their exporters are not served by the Go module proxy at 0.165.0 (nor is the transform
 * processor in the build); nor Loki (no local sink).
 */
export const OTELCOL_LOCAL_SINKS: readonly string[] = ["victorialogs"];

/** A Go duration as the Collector parses it (time.ParseDuration), e.g. "200ms", "5s", "1m30s". */
const duration = z
  .string()
  .regex(/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/, 'a Go duration such as "200ms", "5s" or "1m"');
const port = z.number().int().min(1).max(65535);

/** exporterhelper `sending_queue` (opentelemetry-collector exporter/exporterhelper README). */
const sendingQueue = z
  .object({
    enabled: z.boolean().optional(),
    queue_size: z.number().int().positive().optional(),
    num_consumers: z.number().int().positive().optional(),
    /** what queue_size counts: requests (default), items (log records) or bytes */
    sizer: z.enum(["requests", "items", "bytes"]).optional(),
    /** true: a full queue blocks the receiver instead of refusing the data */
    block_on_overflow: z.boolean().optional(),
  })
  .strict();

/** exporterhelper / configretry `retry_on_failure`. */
const retryOnFailure = z
  .object({
    enabled: z.boolean().optional(),
    initial_interval: duration.optional(),
    max_interval: duration.optional(),
    /** 0 = retry forever */
    max_elapsed_time: duration.optional(),
  })
  .strict();

/** Scenario block `collector.otelcol`. */
export const otelcolSchema = z
  .object({
    /** the version the Collector must report (`--version`); the pin by default. Another version is refused with both */
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'a Collector release such as "0.165.0"')
      .default(OTELCOL_PIN),
    extensions: z
      .object({
        /** healthcheckextension: readiness (GET / → 200 once the pipelines run) */
        health_check: z
          .object({
            endpoint: z
              .string()
              .regex(/^[^\s:]*:\d{1,5}$/, 'host:port, e.g. "0.0.0.0:13133"')
              .default(`0.0.0.0:${OTELCOL_HEALTH_PORT}`),
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({}),
    receivers: z
      .object({
        fluentforward: z
          .object({
            endpoint: z
              .string()
              .regex(/^[^\s:]*:\d{1,5}$/, 'host:port, e.g. "0.0.0.0:24224"')
              .default(`0.0.0.0:${OTELCOL_FORWARD_PORT}`),
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({}),
    processors: z
      .object({
        batch: z
          .object({
            /** records that trigger a send (the processor's default 8192) */
            send_batch_size: z.number().int().nonnegative().optional(),
            /** upper bound of a batch; 0 = none (must be ≥ send_batch_size when set) */
            send_batch_max_size: z.number().int().nonnegative().optional(),
            /** time after which a batch is sent regardless of size (default 200ms) */
            timeout: duration.optional(),
          })
          .strict()
          .superRefine((b, ctx) => {
            if (
              b.send_batch_max_size !== undefined &&
              b.send_batch_max_size > 0 &&
              b.send_batch_size !== undefined &&
              b.send_batch_max_size < b.send_batch_size
            ) {
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                path: ["send_batch_max_size"],
                message: "must be 0 or at least send_batch_size (the batch processor refuses it otherwise)",
              });
            }
          })
          .default({}),
      })
      .strict()
      .default({}),
    exporters: z
      .object({
        /** the core otlphttp exporter (sinks clickhouse, loki and victorialogs) */
        otlphttp: z
          .object({
            timeout: duration.optional(),
            sending_queue: sendingQueue.optional(),
            retry_on_failure: retryOnFailure.optional(),
            compression: z.enum(["gzip", "zstd", "none"]).optional(),
          })
          .strict()
          .optional(),
        /** elasticsearchexporter (sink elasticsearch): its own `retry` block, not retry_on_failure */
        elasticsearch: z
          .object({
            timeout: duration.optional(),
            sending_queue: sendingQueue.optional(),
            retry: z
              .object({
                enabled: z.boolean().optional(),
                max_retries: z.number().int().nonnegative().optional(),
                initial_interval: duration.optional(),
                max_interval: duration.optional(),
              })
              .strict()
              .optional(),
          })
          .strict()
          .optional(),
        /** opensearchexporter (sink opensearch) */
        opensearch: z
          .object({
            timeout: duration.optional(),
            sending_queue: sendingQueue.optional(),
            retry_on_failure: retryOnFailure.optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    service: z
      .object({
        telemetry: z
          .object({
            metrics: z
              .object({
                level: z.enum(["none", "basic", "normal", "detailed"]).optional(),
                readers: z
                  .array(
                    z
                      .object({
                        pull: z
                          .object({
                            exporter: z
                              .object({
                                prometheus: z
                                  .object({
                                    host: z.string().min(1).default("0.0.0.0"),
                                    port: port.default(OTELCOL_METRICS_PORT),
                                  })
                                  .strict(),
                              })
                              .strict(),
                          })
                          .strict(),
                      })
                      .strict(),
                  )
                  .length(1, "exactly one reader: the pull Prometheus reader the claims are read from")
                  .default([
                    { pull: { exporter: { prometheus: { host: "0.0.0.0", port: OTELCOL_METRICS_PORT } } } },
                  ]),
              })
              .strict()
              .default({}),
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({}),
  })
  .strict();

export type OtelcolConfig = z.infer<typeof otelcolSchema>;

/** Which exporter writes into each sink (its `exporters.<key>` block), and the component id in the config. */
/** The id of the basicauth extension instance that authenticates the exporter to the sink. */
const BASICAUTH_ID = "basicauth/ib_sink";

const EXPORTER_OF: Readonly<
  Record<string, { key: "otlphttp" | "elasticsearch" | "opensearch"; id: string }>
> = {
  clickhouse: { key: "otlphttp", id: "otlphttp/ib_clickhouse" },
  loki: { key: "otlphttp", id: "otlphttp/ib_loki" },
  victorialogs: { key: "otlphttp", id: "otlphttp/ib_victorialogs" },
  elasticsearch: { key: "elasticsearch", id: "elasticsearch/ib_out" },
  opensearch: { key: "opensearch", id: "opensearch/ib_out" },
};

/** A ClickHouse string literal. */
function sqlString(s: string): string {
  return `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** The AnyValue JSON (raw) of attribute `name` in the unnested map `m`. */
const attr = (name: string): string => `m[${sqlString(name)}]`;
/** An OTLP/JSON intValue, a decimal string (or a bare number) → its digits. */
const intText = (name: string): string => `trim(BOTH '"' FROM JSONExtractRaw(${attr(name)}, 'intValue'))`;
/** An ISO time string attribute → epoch milliseconds (the verifier's UInt64). */
const isoMs = (name: string): string =>
  `toUnixTimestamp64Milli(parseDateTime64BestEffort(JSONExtractString(${attr(name)}, 'stringValue'), 3, 'UTC'))`;

/** The SELECT expression of one verifier column from its attribute (types as plugins/sinks/clickhouse/verifier.ts). */
function columnExpr(f: EventField): string {
  switch (f.type) {
    case "string":
      return `JSONExtractString(${attr(f.name)}, 'stringValue')`;
    case "timestamp":
      return isoMs(f.name);
    case "int":
      return `toInt64(${intText(f.name)})`;
    case "float":
      return `JSONExtractFloat(${attr(f.name)}, 'doubleValue')`;
    case "bool":
      return `toUInt8(JSONExtractBool(${attr(f.name)}, 'boolValue'))`;
  }
}

/**
 * The INSERT that ClickHouse runs on each OTLP/JSON body: one row per log record, columns read from its attributes.
 * A record without gen or seq fails the whole insert (toUInt64 of ''), which the exporter counts as send_failed.
 */
export function clickhouseInsert(table: string, fields: readonly EventField[]): string {
  const cols = [...fields.map((f) => f.name), "gen", "seq", "sent_at"];
  const exprs = [
    ...fields.map(columnExpr),
    `toUInt32(${intText("gen")})`,
    `toUInt64(${intText("seq")})`,
    isoMs("sent_at"),
  ];
  const records =
    "SELECT arrayJoin(JSONExtractArrayRaw(sl, 'logRecords')) AS r FROM " +
    "(SELECT arrayJoin(JSONExtractArrayRaw(rl, 'scopeLogs')) AS sl FROM " +
    "(SELECT arrayJoin(JSONExtractArrayRaw(body, 'resourceLogs')) AS rl FROM input('body String')))";
  const maps = `SELECT mapFromArrays(arrayMap(a -> JSONExtractString(a, 'key'), kv), arrayMap(a -> JSONExtractRaw(a, 'value'), kv)) AS m FROM (SELECT JSONExtractArrayRaw(r, 'attributes') AS kv FROM (${records}))`;
  const target = table.split(".").map(quoteIdent).join(".");
  return `INSERT INTO ${target} (${cols.map(quoteIdent).join(", ")}) SELECT ${exprs.join(", ")} FROM (${maps}) FORMAT JSONAsString`;
}

/** The transform processor that makes the body the record map {fields..., gen, seq, sent_at} (OTTL, log context). */
const BODY_FROM_ATTRIBUTES = {
  error_mode: "propagate",
  log_statements: [
    {
      context: "log",
      statements: [
        'delete_key(log.attributes, "fluent.tag")',
        "set(log.body, log.attributes)",
        'delete_matching_keys(log.attributes, ".*")',
      ],
    },
  ],
};

function exporterConfig(input: RenderInput<OtelcolConfig>): {
  id: string;
  settings: Record<string, unknown>;
  bodyMap: boolean;
} {
  const { sink, config, fields } = input;
  const host = sink.host.includes(":") ? `[${sink.host}]` : sink.host;
  const base = `http://${host}:${sink.port}`;
  const e = config.exporters;
  const which = EXPORTER_OF[sink.name];
  if (!which) {
    throw new ConfigurationError(
      "E_COLLECTOR_SINK",
      `collector otelcol cannot write into sink "${sink.name}" (supported: ${OTELCOL_SINKS.join(", ")})`,
      { field: "sink" },
    );
  }
  for (const k of Object.keys(e) as Array<keyof typeof e>) {
    if (e[k] !== undefined && k !== which.key) {
      throw new ConfigurationError(
        "E_COLLECTOR_CONFIG",
        `collector.otelcol.exporters.${k}: sink ${sink.name} is written by the ${which.key} exporter; give its settings under exporters.${which.key}`,
        { field: `collector.otelcol.exporters.${k}` },
      );
    }
  }
  switch (sink.name) {
    case "clickhouse": {
      const table = `${param(sink, "database", "default")}.${param(sink, "table", "ib_events")}`;
      return {
        id: which.id,
        bodyMap: false,
        settings: {
          logs_endpoint: `${base}/?query=${encodeURIComponent(clickhouseInsert(table, fields))}`,
          encoding: "json",
          ...e.otlphttp,
        },
      };
    }
    case "victorialogs":
      // VictoriaLogs' OTLP endpoint (its docs, "OpenTelemetry setup"): each log record attribute (the Forward record's
      // keys: the fields, gen, seq, sent_at, fluent.tag) becomes a log field of the same name, the body `_msg`; the
      // sink's `otlpLogsPath` param carries its ingestion args (_msg_field, _stream_fields:
      // plugins/sinks/victorialogs/component.ts victoriaLogsParams)
      return {
        id: which.id,
        bodyMap: false,
        settings: {
          logs_endpoint: `${base}${param(sink, "otlpLogsPath", "/insert/opentelemetry/v1/logs")}`,
          encoding: "proto",
          ...e.otlphttp,
        },
      };
    case "loki":
      return {
        id: which.id,
        bodyMap: true,
        settings: { endpoint: `${base}/otlp`, encoding: "proto", ...e.otlphttp },
      };
    case "elasticsearch":
      return {
        id: which.id,
        bodyMap: true,
        settings: {
          endpoints: [base],
          logs_index: param(sink, "index", "ib_events"),
          mapping: { mode: "bodymap" },
          ...e.elasticsearch,
        },
      };
    default:
      // opensearch
      return {
        id: which.id,
        bodyMap: true,
        settings: {
          http: { endpoint: base },
          logs_index: param(sink, "index", "ib_events"),
          mapping: { mode: "bodymap" },
          ...e.opensearch,
        },
      };
  }
}

/**
 * Render the Collector's config; `file` is where it is written (default the container's OTELCOL_CONFIG_FILE; the
 * local component passes a path under the host's data directory).
 * @throws ConfigurationError for a sink it cannot write into, a misplaced exporter block, or a field the receiver makes the body
 */
export function renderOtelcolConfig(
  input: RenderInput<OtelcolConfig>,
  file: string = OTELCOL_CONFIG_FILE,
): RenderedConfig {
  const { config, fields } = input;
  for (const f of fields) {
    if (f.name === "message" || f.name === "log") {
      throw new ConfigurationError(
        "E_COLLECTOR_CONFIG",
        `event field "${f.name}": the fluentforward receiver makes a "${f.name}" record key the log body, not an attribute; rename the field`,
        { field: "event" },
      );
    }
  }
  const out = exporterConfig(input);
  // with a sink password: the basicauth extension's client_auth (opentelemetry-collector-contrib
  // extension/basicauthextension README: username, password), the password as the Collector's reference to the
  // container's variable (`${env:NAME}`, the Collector docs "Configuration → Environment variables"), never its value;
  // the exporter names it as its `auth.authenticator` (confighttp: top level for otlphttp and elasticsearch, under
  // `http` for opensearch)
  const a = collectorAuth(input.sink.name, input.sink.params);
  const authenticator = { auth: { authenticator: BASICAUTH_ID } };
  if (a) {
    if (input.sink.name === "opensearch")
      out.settings.http = { ...(out.settings.http as Record<string, unknown>), ...authenticator };
    else Object.assign(out.settings, authenticator);
  }
  const endpoint = config.receivers.fluentforward.endpoint;
  const dataPort = Number(endpoint.slice(endpoint.lastIndexOf(":") + 1));
  const metrics = config.service.telemetry.metrics;
  const prom = metrics.readers[0]!.pull.exporter.prometheus;
  const processors = out.bodyMap ? ["transform/ib_record", "batch"] : ["batch"];
  const doc = compact({
    extensions: {
      health_check: { endpoint: config.extensions.health_check.endpoint },
      ...(a
        ? { [BASICAUTH_ID]: { client_auth: { username: a.user, password: `\${env:${a.variable}}` } } }
        : {}),
    },
    receivers: { fluentforward: { endpoint } },
    processors: {
      ...(out.bodyMap ? { "transform/ib_record": BODY_FROM_ATTRIBUTES } : {}),
      batch: config.processors.batch,
    },
    exporters: { [out.id]: out.settings },
    service: {
      extensions: ["health_check", ...(a ? [BASICAUTH_ID] : [])],
      telemetry: {
        metrics: {
          level: metrics.level,
          readers: [{ pull: { exporter: { prometheus: { host: prom.host, port: prom.port } } } }],
        },
      },
      pipelines: { logs: { receivers: ["fluentforward"], processors, exporters: [out.id] } },
    },
  });
  // an empty `batch:` still has to name the processor the pipeline lists
  ((doc.processors ??= {}) as Record<string, unknown>).batch ??= {};
  const text =
    `# Rendered by ingestbench (plugins/collectors/otelcol/render.ts) for the OpenTelemetry Collector ${config.version}.\n` +
    stringify(doc, { lineWidth: 0 });
  return {
    file,
    text,
    command: ["--config", file],
    listens: { data: dataPort, metrics: prom.port },
  };
}

export const otelcolRenderer: CollectorRenderer<OtelcolConfig> = {
  writesTo: OTELCOL_SINKS,
  // fluentforwardreceiver speaks the Forward protocol (the fluent-forward generator)
  accepts: () => ["fluent-forward"],
  render: renderOtelcolConfig,
};
