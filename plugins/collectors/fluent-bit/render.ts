/**
 * Collector "fluent-bit": renders the classic-format fluent-bit.conf from the scenario's `collector.fluent-bit`
 * block, with Fluent Bit's own key names (docs.fluentbit.io: "Configuration File" [SERVICE]/[INPUT]/[OUTPUT],
 * "Buffering & Storage", "Monitoring", inputs http/forward, outputs http/es/loki/pgsql).
 *
 * ```yaml
 * collector:
 *   fluent-bit:
 *     service: { flush: 1, storage.path: /var/lib/fluent-bit/storage }   # [SERVICE]
 *     input:   { http: { port: 8888, mem_buf_limit: 64MB, storage.type: memory } }   # or { forward: {...} }
 *     output:  { workers: 2, retry_limit: 3 }                            # [OUTPUT] common keys
 * ```
 *
 * 001 fed Fluent Bit through its HTTP input on 8888 and wrote into ClickHouse with a custom Go plugin; here the
 * core http output POSTs each chunk as JSON lines to ClickHouse's HTTP interface (`INSERT ... FORMAT
 * JSONEachRow` in the query string, date key off so the rows carry exactly the generator's fields). Metrics:
 * the built-in HTTP server ([SERVICE] HTTP_Server On, port 2020), Prometheus text at /api/v2/metrics/prometheus.
 *
 * The pgsql output stores every record as JSON in a (tag, time, data) table of its own (out_pgsql), not in the
 * verifier's column table: a verifier has to read seq/gen/sent_at from `data`.
 */
import { z } from "zod";
import { ConfigurationError } from "../../../core/errors.ts";
import {
  param,
  type CollectorRenderer,
  type RenderInput,
  type RenderedConfig,
} from "../../../core/render.ts";
import { collectorAuth } from "../../../core/secrets.ts";
import { copyColumns, quoteIdent } from "../../../core/events/copy-text.ts";

/** The catalog's pin (./image.ts). */
export const FLUENT_BIT_PIN = "4.0.3";
/** Where the fluent/fluent-bit image reads its config by default. */
export const FLUENT_BIT_CONFIG_FILE = "/fluent-bit/etc/fluent-bit.conf";
/** The built-in HTTP server's port (metrics at /api/v2/metrics/prometheus). */
export const FLUENT_BIT_METRICS_PORT = 2020;

/** Fluent Bit's size unit: bytes, or a number with K/M/G (optionally followed by B), e.g. "64MB", "5M". */
const fbSize = z.union([
  z.number().int().positive(),
  z.string().regex(/^\d+(\.\d+)?([kKmMgG][bB]?)?$/, 'a Fluent Bit size such as "64MB", "5M" or 1048576'),
]);
const port = z.number().int().min(1).max(65535);

/** keys every input takes (buffering): mem_buf_limit, storage.type */
const inputCommon = {
  mem_buf_limit: fbSize.optional(),
  "storage.type": z.enum(["memory", "filesystem"]).default("memory"),
};

const inputSchema = z
  .object({
    http: z
      .object({
        port: port.default(8888),
        ...inputCommon,
        buffer_max_size: fbSize.optional(),
        buffer_chunk_size: fbSize.optional(),
      })
      .strict()
      .optional(),
    forward: z
      .object({
        port: port.default(24224),
        ...inputCommon,
        buffer_max_size: fbSize.optional(),
        buffer_chunk_size: fbSize.optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const given = Object.keys(s).filter((k) => s[k as keyof typeof s] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `give exactly one input: http or forward (got ${given.length === 0 ? "none" : given.join(", ")})`,
      });
  });

/** Scenario block `collector.fluent-bit`. */
export const fluentBitSchema = z
  .object({
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'a version like "4.0.3"')
      .default(FLUENT_BIT_PIN),
    service: z
      .object({
        /** seconds between flushes of the engine */
        flush: z.number().positive().default(1),
        "storage.path": z.string().startsWith("/").optional(),
        "storage.sync": z.enum(["normal", "full"]).optional(),
        "storage.max_chunks_up": z.number().int().positive().optional(),
        "storage.backlog.mem_limit": fbSize.optional(),
      })
      .strict()
      .default({}),
    input: inputSchema.default({ http: {} }),
    output: z
      .object({
        /** threads of the output plugin */
        workers: z.number().int().min(0).max(64).optional(),
        /** retries per chunk: a number, "no_limits", or false (no retry) */
        retry_limit: z
          .union([z.number().int().positive(), z.literal("no_limits"), z.literal(false)])
          .optional(),
        "storage.total_limit_size": fbSize.optional(),
        /** es output: max HTTP response size read (e.g. "512KB", or false for unlimited) */
        buffer_size: z.union([fbSize, z.literal(false)]).optional(),
        compress: z.enum(["gzip"]).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

export type FluentBitConfig = z.infer<typeof fluentBitSchema>;

const FLUENT_BIT_SINKS: readonly string[] = ["clickhouse", "elasticsearch", "loki", "postgres"];

/** One [SECTION] with aligned `key value` lines (Fluent Bit's classic format: 4-space indent). */
function section(name: string, entries: Array<[string, string | number | boolean | undefined]>): string[] {
  const kept = entries.filter((e): e is [string, string | number | boolean] => e[1] !== undefined);
  const width = Math.max(...kept.map(([k]) => k.length));
  return [
    `[${name}]`,
    ...kept.map(([k, v]) => `    ${k.padEnd(width)} ${typeof v === "boolean" ? (v ? "On" : "Off") : v}`),
    "",
  ];
}

function value(v: string, field: string): string {
  if (/[\r\n]/.test(v) || v.trim() !== v || v === "") {
    throw new ConfigurationError(
      "E_COLLECTOR_CONFIG",
      `${field}: ${JSON.stringify(v)} cannot be a Fluent Bit value (empty, newline or edge spaces)`,
      { field },
    );
  }
  return v;
}

function outputEntries(
  input: RenderInput<FluentBitConfig>,
): Array<[string, string | number | boolean | undefined]> {
  const { sink, config } = input;
  const o = config.output;
  const common: Array<[string, string | number | boolean | undefined]> = [
    ["Match", "*"],
    ["Host", value(sink.host, "sink.host")],
    ["Port", sink.port],
  ];
  // with a sink password: the user, and the password as Fluent Bit's reference to the container's variable (`${NAME}`:
  // "environment variables in any value associated to a key", Fluent Bit manual, "Configuration File → Variables"),
  // never its value. es, loki and http name them HTTP_User / HTTP_Passwd (Basic auth), pgsql User / Password.
  const auth = collectorAuth(sink.name, sink.params);
  const basic: Array<[string, string | number | boolean | undefined]> = auth
    ? [
        ["HTTP_User", value(auth.user, "sink.user")],
        ["HTTP_Passwd", `\${${auth.variable}}`],
      ]
    : [];
  const tail: Array<[string, string | number | boolean | undefined]> = [
    ["Workers", o.workers],
    ["Retry_Limit", o.retry_limit === false ? "False" : o.retry_limit],
    ["storage.total_limit_size", o["storage.total_limit_size"]],
  ];
  switch (sink.name) {
    case "clickhouse": {
      const table = `${param(sink, "database", "default")}.${param(sink, "table", "ib_events")}`;
      return [
        ["Name", "http"],
        ...common,
        // the columns named: ClickHouse 18.16 fills a column left out of the INSERT's list with its type's zero, not
        // its DEFAULT (plugins/sinks/clickhouse/verifier.ts), so stored_at stays right only when the list is given
        [
          "URI",
          `/?query=${encodeURIComponent(`INSERT INTO ${table} (${copyColumns(input.fields).map(quoteIdent).join(", ")}) FORMAT JSONEachRow`)}`,
        ],
        ["Format", "json_lines"],
        // without this Fluent Bit adds a "date" key, a column the table does not have
        ["Json_date_key", "false"],
        ["Compress", o.compress],
        ...basic,
        ...tail,
      ];
    }
    case "elasticsearch":
      return [
        ["Name", "es"],
        ...common,
        ["Index", value(param(sink, "index", "ib_events"), "sink.index")],
        // Elasticsearch 8 has no mapping types
        ["Suppress_Type_Name", true],
        ["Buffer_Size", o.buffer_size === false ? "False" : o.buffer_size],
        ["Compress", o.compress],
        ...basic,
        ...tail,
      ];
    case "loki":
      return [
        ["Name", "loki"],
        ...common,
        ["Labels", `job=${value(param(sink, "job", "ingestbench"), "sink.job")}`],
        ["Line_Format", "json"],
        ...basic,
        ...tail,
      ];
    case "postgres":
      return [
        ["Name", "pgsql"],
        ...common,
        ["User", value(param(sink, "user", "postgres"), "sink.user")],
        ["Password", auth ? `\${${auth.variable}}` : undefined],
        ["Database", value(param(sink, "database", "postgres"), "sink.database")],
        ["Table", value(param(sink, "table", "ib_events"), "sink.table")],
        ...tail,
      ];
    default:
      throw new ConfigurationError(
        "E_COLLECTOR_SINK",
        `collector fluent-bit cannot write into sink "${sink.name}" (supported: ${FLUENT_BIT_SINKS.join(", ")})`,
        { field: "sink" },
      );
  }
}

/**
 * Render fluent-bit.conf, for the container platforms (at FLUENT_BIT_CONFIG_FILE, the image's default) or a local
 * host (`file` under its data directory, ./component.ts): only where the file lives differs.
 * @throws ConfigurationError for a sink it cannot write into or an unwritable value.
 */
export function renderFluentBitConfig(
  input: RenderInput<FluentBitConfig>,
  file: string = FLUENT_BIT_CONFIG_FILE,
): RenderedConfig {
  const { config } = input;
  const s = config.service;
  const [inputName, inp] = config.input.http
    ? (["http", config.input.http] as const)
    : (["forward", config.input.forward!] as const);
  const text = [
    `# Rendered by ingestbench (plugins/collectors/fluent-bit/render.ts) for Fluent Bit ${config.version}.`,
    ...section("SERVICE", [
      ["Flush", s.flush],
      ["Log_Level", "info"],
      ["HTTP_Server", true],
      ["HTTP_Listen", "0.0.0.0"],
      ["HTTP_Port", FLUENT_BIT_METRICS_PORT],
      ["storage.path", s["storage.path"]],
      ["storage.sync", s["storage.sync"]],
      ["storage.max_chunks_up", s["storage.max_chunks_up"]],
      ["storage.backlog.mem_limit", s["storage.backlog.mem_limit"]],
      ["storage.metrics", true],
    ]),
    ...section("INPUT", [
      ["Name", inputName],
      ["Listen", "0.0.0.0"],
      ["Port", inp.port],
      ["Mem_Buf_Limit", inp.mem_buf_limit],
      ["storage.type", inp["storage.type"]],
      ["Buffer_Max_Size", inp.buffer_max_size],
      ["Buffer_Chunk_Size", inp.buffer_chunk_size],
    ]),
    ...section("OUTPUT", outputEntries(input)),
  ].join("\n");
  if (inp["storage.type"] === "filesystem" && s["storage.path"] === undefined) {
    throw new ConfigurationError(
      "E_COLLECTOR_CONFIG",
      `collector.fluent-bit.input.${inputName}.storage.type: filesystem needs service.storage.path (where Fluent Bit keeps the chunks)`,
      { field: `collector.fluent-bit.input.${inputName}.storage.type` },
    );
  }
  return {
    file,
    text,
    listens: { data: inp.port, metrics: FLUENT_BIT_METRICS_PORT },
  };
}

export const fluentBitRenderer: CollectorRenderer<FluentBitConfig> = {
  writesTo: FLUENT_BIT_SINKS,
  accepts: (c) => (c.input.forward ? ["fluent-forward"] : ["http-json"]),
  render: (input) => renderFluentBitConfig(input),
};
