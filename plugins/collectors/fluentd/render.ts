/**
 * Collector "fluentd" (Fluentd 1.12.0, the version of write-up 000): renders fluent.conf from the scenario's
 * `collector.fluentd` block, spelled with Fluentd's own directive and parameter names (docs.fluentd.org,
 * "Config File Syntax", "Buffer Section", "Multi Process Workers").
 *
 * ```yaml
 * collector:
 *   fluentd:
 *     system: { workers: 2 }                            # <system> workers
 *     source: { sample: { events_per_second: 150000, size: 250 } }   # or { forward: {port} } or { http: {port} }
 *     buffer: { chunk_limit_records: 50000, chunk_limit_size: 64MB, flush_thread_count: 8, flush_interval: 1s,
 *               overflow_action: throw_exception }      # <buffer> parameters, as written
 *     match: { slow_flush_log_threshold: 20.0 }         # common output parameters
 *     monitor_agent: { port: 24220 }                    # metrics: GET /api/plugins.json
 * ```
 *
 * The sample input (in_sample, fluent/fluentd lib/fluent/plugin/in_sample.rb): every second it emits `rate` times,
 * in ten bins of rate/10 plus the remainder, and each emit carries `size` events, so one worker sends
 * rate × size events/s; every worker of `<system> workers N` runs its own copy (multi_workers_ready), so the
 * collector sends N × rate × size. The renderer derives `rate` from the scenario's total `events_per_second`:
 * rate = events_per_second / (workers × size), and refuses a combination that does not divide exactly (a
 * rounded rate would send a different load than the scenario says). It is a nominal rate: when an emit second
 * overruns, in_sample skips the remaining bins, which the sink's count shows.
 *
 * Rows written by the sample input carry the scenario's fields (one fixed sample record: only seq and sent_at
 * vary), then `gen` (this host's genBase + the worker id, evaluated once per worker by Fluentd's embedded Ruby
 * `#{worker_id}`), then `seq` (auto_increment_key: each worker counts from 0 on its own, hence the per-worker gen),
 * then `sent_at` (the event time, added by record_transformer): the column order GridDB's positional rows need.
 *
 * Sinks: griddb (fluent-plugin-griddb 1.0.2 with write-up 000's fix, images/fluentd-griddb), clickhouse (the core
 * out_http plugin POSTing each chunk as JSONEachRow), elasticsearch (fluent-plugin-elasticsearch: not in the
 * pinned image, see ./image.ts).
 */
import { collectorAuth, passwordEnvName } from "../../../core/secrets.ts";
import { z } from "zod";
import { ConfigurationError } from "../../../core/errors.ts";
import type { EventField } from "../../../core/events/types.ts";
import { copyColumns, quoteIdent } from "../../../core/events/copy-text.ts";
import {
  param,
  type CollectorRenderer,
  type RenderInput,
  type RenderedConfig,
} from "../../../core/render.ts";

/** The catalog's pin (./image.ts). */
export const FLUENTD_PIN = "1.12.0";
/** Where the fluent/fluentd image reads its config (its default `-c /fluentd/etc/fluent.conf`). */
export const FLUENTD_CONFIG_FILE = "/fluentd/etc/fluent.conf";
/**
 * Where fluent.conf and the file buffer live: the only things that differ between the container platforms (the
 * fluent/fluentd image's paths) and the local platform (the host's data directory, ./component.ts). One renderer
 * makes both configs.
 */
export interface FluentdPaths {
  /** the config file Fluentd reads (`-c`) */
  file: string;
  /** the `<buffer> @type file` path (a directory prefix Fluentd creates) */
  buffer: string;
  /** `<system> root_dir`: Fluentd's own files (the backup of chunks an output refuses as unrecoverable) */
  root: string;
}
/** The container platforms' paths (the fluent/fluentd image: /fluentd/etc, the /fluentd/buffer volume). */
export const CONTAINER_PATHS: FluentdPaths = {
  file: FLUENTD_CONFIG_FILE,
  buffer: "/fluentd/buffer/ib",
  root: "/fluentd/buffer/root",
};
/**
 * The `@id` of the one output: monitor_agent lists it as plugin_id, the same in every worker and every run (without
 * it Fluentd names the plugin `object:<hex>`, a new name per process), so the series' signals keep one name.
 */
export const OUTPUT_ID = "ib_sink";
/** The `@id` of the null output that takes Fluentd's own log events (`<label @FLUENT_LOG>`); ./claims.ts leaves it out. */
export const LOG_OUTPUT_ID = "ib_fluent_log";
/**
 * The column list of out_http's INSERT: the scenario's fields, then gen, seq, sent_at. ClickHouse 18.16 fills a
 * column a JSONEachRow object leaves out with its type's zero, not its DEFAULT, unless the INSERT names its columns
 * (plugins/sinks/clickhouse/verifier.ts): without the list stored_at was 0 in every row of a real run here, and the
 * delivery latency had no row to read.
 */
export function clickhouseColumns(fields: readonly EventField[]): string {
  return `(${copyColumns(fields).map(quoteIdent).join(", ")})`;
}
/** Tag of the events the sample input generates. */
export const SAMPLE_TAG = "ib.sample";

/** Fluentd's size type: bytes, or a number with k/m/g/t (1024-based) and an optional b, e.g. "64MB", "8m". */
const fluentdSize = z.union([
  z.number().int().positive(),
  z
    .string()
    .regex(
      /^\d+(\.\d+)?[kmgt]?b?$/i,
      'a Fluentd size such as "64MB", "8m" or 1048576 (k/m/g/t are powers of 1024)',
    ),
]);
/** Fluentd's time type: seconds, or a number with s/m/h/d, e.g. "1s", "0.1", "10m". */
const fluentdTime = z.union([
  z.number().nonnegative(),
  z.string().regex(/^\d+(\.\d+)?[smhd]?$/, 'a Fluentd time such as "1s", "0.1" or "10m"'),
]);
const port = z.number().int().min(1).max(65535);

/** `<buffer>` parameters (docs.fluentd.org "Buffer Section"), rendered in this order when given. */
const bufferSchema = z
  .object({
    "@type": z.enum(["memory", "file"]).default("memory"),
    chunk_limit_records: z.number().int().positive().optional(),
    chunk_limit_size: fluentdSize.optional(),
    total_limit_size: fluentdSize.optional(),
    queued_chunks_limit_size: z.number().int().positive().optional(),
    flush_mode: z.enum(["default", "lazy", "interval", "immediate"]).optional(),
    flush_interval: fluentdTime.optional(),
    flush_thread_count: z.number().int().min(1).max(256).optional(),
    flush_thread_interval: fluentdTime.optional(),
    flush_at_shutdown: z.boolean().optional(),
    overflow_action: z.enum(["throw_exception", "block", "drop_oldest_chunk"]).optional(),
    retry_type: z.enum(["exponential_backoff", "periodic"]).optional(),
    retry_wait: fluentdTime.optional(),
    retry_max_times: z.number().int().nonnegative().optional(),
    retry_forever: z.boolean().optional(),
  })
  .strict();

const sourceSchema = z
  .object({
    /** the forward protocol (in_forward), e.g. from the fluent-forward generator */
    forward: z
      .object({ port: port.default(24224) })
      .strict()
      .optional(),
    /** HTTP (in_http): POST /<tag> with a JSON object or a JSON array of objects (http-json framing "array") */
    http: z
      .object({ port: port.default(9880) })
      .strict()
      .optional(),
    /** in-process load (in_sample): the total events/s across workers, and `size` events per emit */
    sample: z
      .object({
        events_per_second: z.number().int().positive().max(100_000_000),
        size: z.number().int().positive().max(1_000_000).default(1),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const given = Object.keys(s).filter((k) => s[k as keyof typeof s] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `give exactly one source: forward, http or sample (got ${given.length === 0 ? "none" : given.join(", ")})`,
      });
    }
  });

/** Scenario block `collector.fluentd`. */
export const fluentdSchema = z
  .object({
    /** the version the running Fluentd must report; default the catalog's pin */
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'a version like "1.12.0"')
      .default(FLUENTD_PIN),
    /** `<system>`: workers (processes) */
    system: z
      .object({ workers: z.number().int().min(1).max(64).default(1) })
      .strict()
      .default({}),
    source: sourceSchema.default({ forward: {} }),
    buffer: bufferSchema.default({}),
    /** common output parameters of the `<match>` */
    match: z.object({ slow_flush_log_threshold: z.number().positive().optional() }).strict().default({}),
    /** the monitor_agent input (metrics: /api/plugins.json); with several workers each serves its own on port +
     *  worker id (in_monitor_agent.rb; seen on a real 1.12.0 with 2 workers), all published (RenderedConfig.listens) */
    monitor_agent: z
      .object({ port: port.default(24220) })
      .strict()
      .default({}),
  })
  .strict();

export type FluentdConfig = z.infer<typeof fluentdSchema>;

const GEN_SLOT = "__ingestbench_gen__";

/** Escape text for the inside of a Fluentd double-quoted string. */
function escapeDq(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
}

/** A Fluentd double-quoted string; refuses text Fluentd would evaluate (`#{`) or that cannot sit on one line. */
function q(s: string, field: string): string {
  if (/[\r\n]/.test(s) || s.includes("#{")) {
    throw new ConfigurationError(
      "E_COLLECTOR_CONFIG",
      `${field}: ${JSON.stringify(s)} cannot be written into fluent.conf (newline or "#{")`,
      { field },
    );
  }
  return `"${escapeDq(s)}"`;
}

/** A fixed value for one field of the sample record (in_sample repeats it; seq and sent_at carry the identity). */
function sampleValue(f: EventField): string | number | boolean {
  switch (f.type) {
    case "timestamp":
      return "2026-01-01T00:00:00.000Z";
    case "int":
      return 200;
    case "float":
      return 0.5;
    case "bool":
      return true;
    case "string": {
      const size = f.size ?? 16;
      return "ingestbench-sample-".repeat(Math.ceil(size / 19)).slice(0, size);
    }
  }
}

/**
 * in_sample's `rate` for a total events/s: events_per_second / (workers × size).
 * @throws ConfigurationError when that is not a whole number ≥ 1
 */
export function sampleRate(eventsPerSecond: number, size: number, workers: number): number {
  const rate = eventsPerSecond / (workers * size);
  if (!Number.isInteger(rate) || rate < 1) {
    throw new ConfigurationError(
      "E_COLLECTOR_CONFIG",
      `collector.fluentd.source.sample: events_per_second ${eventsPerSecond} is not a whole multiple of workers × size = ${workers} × ${size}; ` +
        `in_sample sends rate × size events/s per worker with an integer rate: choose events_per_second as a multiple of ${workers * size}`,
      { field: "collector.fluentd.source.sample.events_per_second" },
    );
  }
  return rate;
}

function bufferLines(b: FluentdConfig["buffer"], chunkKeys: string, bufferPath: string): string[] {
  const lines = [`  <buffer${chunkKeys ? ` ${chunkKeys}` : ""}>`, `    @type ${b["@type"]}`];
  if (b["@type"] === "file") lines.push(`    path ${bufferPath}`);
  for (const [k, v] of Object.entries(b)) {
    if (k === "@type" || v === undefined) continue;
    lines.push(`    ${k} ${v}`);
  }
  lines.push("  </buffer>");
  return lines;
}

/**
 * A password as Fluentd's embedded Ruby reading the container's variable (`"#{ENV['NAME']}"` in a double-quoted value:
 * Fluentd docs, "Config File Syntax → Embedded Ruby code"), never its value: the rendered file is uploaded through
 * Pulumi, and the container has the variable from a Pulumi secret (infra/secrets.ts).
 */
function envPassword(variable: string): string {
  return `"#{ENV['${variable}']}"`;
}

function matchLines(input: RenderInput<FluentdConfig>, paths: FluentdPaths): string[] {
  const { sink, config } = input;
  // clickhouse (out_http's <auth> section: method basic, username, password) and elasticsearch (the plugin's user and
  // password) with a password set for the sink; GridDB always needs one
  const auth = collectorAuth(sink.name, sink.params);
  const common =
    config.match.slow_flush_log_threshold !== undefined
      ? [`  slow_flush_log_threshold ${config.match.slow_flush_log_threshold}`]
      : [];
  switch (sink.name) {
    case "griddb":
      // fluent-plugin-griddb 1.0.2 (guideline.md parameters; insert_mode/insert_type as write-up 000 ran it):
      // each flushed chunk is one PUT of positional rows to the Web API
      return [
        "<match **>",
        "  @type griddb",
        `  @id ${OUTPUT_ID}`,
        `  host ${q(`http://${sink.host}:${sink.port}/`, "sink.host")}`,
        `  cluster ${q(param(sink, "cluster", "myCluster"), "sink.cluster")}`,
        `  database ${q(param(sink, "database", "public"), "sink.database")}`,
        `  container ${q(param(sink, "container", "ib_events"), "sink.container")}`,
        `  username ${q(param(sink, "user", "admin"), "sink.user")}`,
        // never the password itself (the rendered file is uploaded through Pulumi): Fluentd evaluates "#{…}" in
        // double-quoted values (Fluentd's config-file docs, "Embedded Ruby code"), the container has the variable
        // from a Pulumi secret (infra/secrets.ts)
        `  password ${envPassword(passwordEnvName("griddb"))}`,
        '  insert_mode "append"',
        '  insert_type "single"',
        ...common,
        // the plugin requires tag among the chunk keys when buffered
        ...bufferLines(config.buffer, "tag", paths.buffer),
        "</match>",
      ];
    case "clickhouse": {
      const table = `${param(sink, "database", "default")}.${param(sink, "table", "ib_events")}`;
      const query = encodeURIComponent(
        `INSERT INTO ${table} ${clickhouseColumns(input.fields)} FORMAT JSONEachRow`,
      );
      return [
        "<match **>",
        "  @type http",
        `  @id ${OUTPUT_ID}`,
        `  endpoint ${q(`http://${sink.host}:${sink.port}/?query=${query}`, "sink")}`,
        "  http_method post",
        "  content_type application/x-ndjson",
        "  json_array false",
        ...(auth
          ? [
              "  <auth>",
              "    method basic",
              `    username ${q(auth.user, "sink.user")}`,
              `    password ${envPassword(auth.variable)}`,
              "  </auth>",
            ]
          : []),
        ...common,
        "  <format>",
        "    @type json",
        "  </format>",
        ...bufferLines(config.buffer, "", paths.buffer),
        "</match>",
      ];
    }
    case "elasticsearch":
      return [
        "<match **>",
        "  @type elasticsearch",
        `  @id ${OUTPUT_ID}`,
        `  host ${q(sink.host, "sink.host")}`,
        `  port ${sink.port}`,
        "  scheme http",
        `  index_name ${q(param(sink, "index", "ib_events"), "sink.index")}`,
        "  suppress_type_name true",
        ...(auth ? [`  user ${q(auth.user, "sink.user")}`, `  password ${envPassword(auth.variable)}`] : []),
        ...common,
        ...bufferLines(config.buffer, "", paths.buffer),
        "</match>",
      ];
    default:
      throw new ConfigurationError(
        "E_COLLECTOR_SINK",
        `collector fluentd cannot write into sink "${sink.name}" (supported: ${FLUENTD_SINKS.join(", ")})`,
        { field: "sink" },
      );
  }
}

/**
 * ClickHouse keeps timestamps (the scenario's and sent_at) as UInt64 epoch ms (plugins/sinks/clickhouse/verifier.ts
 * CLICKHOUSE_TYPES) and refuses an ISO string there (seen on a real 1.12.0 into 18.16: "Unsigned type must not
 * contain '-' symbol … sent_at", the chunk dropped as unrecoverable). The forward and sample inputs carry them as
 * ISO text, so a record_transformer turns each into epoch ms before out_http; a number (http-json's
 * `timeFormat: epoch-ms`) passes as it is.
 */
function epochMsFilter(fields: readonly EventField[]): string[] {
  const names = [...fields.filter((f) => f.type === "timestamp").map((f) => f.name), "sent_at"];
  const lines = [
    "<filter **>",
    "  @type record_transformer",
    "  enable_ruby true",
    "  auto_typecast true",
    "  <record>",
  ];
  for (const n of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) {
      throw new ConfigurationError(
        "E_COLLECTOR_CONFIG",
        `event field ${JSON.stringify(n)}: a timestamp field's name must be a plain identifier to be converted in fluent.conf`,
        { field: "event" },
      );
    }
    const v = `record['${n}']`;
    lines.push(`    ${n} \${${v}.is_a?(String) ? (Time.iso8601(${v}).to_r * 1000).to_i : ${v}}`);
  }
  lines.push("  </record>", "</filter>", "");
  return lines;
}

const FLUENTD_SINKS: readonly string[] = ["griddb", "clickhouse", "elasticsearch"];

/**
 * Render fluent.conf, for the container platforms (CONTAINER_PATHS) or a local host (its own paths).
 * @throws ConfigurationError for a sink Fluentd cannot write into or a sample rate that does not divide (see
 *   sampleRate).
 */
export function renderFluentdConfig(
  input: RenderInput<FluentdConfig>,
  paths: FluentdPaths = CONTAINER_PATHS,
): RenderedConfig {
  const { config, fields } = input;
  const workers = config.system.workers;
  const out = [
    "# Rendered by ingestbench (plugins/collectors/fluentd/render.ts) for Fluentd " + config.version + ".",
    "<system>",
    `  workers ${workers}`,
    // where Fluentd keeps its own files, e.g. the chunks out_http refuses as unrecoverable (root_dir/backup)
    `  root_dir ${paths.root}`,
    "</system>",
    "",
    // Fluentd routes its own log lines as events tagged fluent.* (seen on a real 1.12.0: `<match **>` took them, and
    // a chunk holding one was refused whole by ClickHouse, "Unknown field … pid", the scenario's rows with it): the
    // @FLUENT_LOG label takes them out of the main routing, and drops them
    "<label @FLUENT_LOG>",
    "  <match **>",
    "    @type null",
    `    @id ${LOG_OUTPUT_ID}`,
    "  </match>",
    "</label>",
    "",
  ];
  const src = config.source;
  let dataPort = 24224;
  // idle (the deploy-time config of a generator: none cell, RenderInput.idle): no sample input, nothing made
  if (src.sample && input.idle) {
    out.push(
      "# the sample input is left out of this deploy-time config: the run uploads it with its own gens (harness/remote/site.ts)",
      "",
    );
  } else if (src.sample) {
    const { events_per_second: eps, size } = src.sample;
    const rate = sampleRate(eps, size, workers);
    const record: Record<string, string | number | boolean> = {};
    for (const f of fields) record[f.name] = sampleValue(f);
    record.gen = GEN_SLOT;
    // gen is evaluated by Fluentd once per worker: embedded Ruby in a double-quoted string, unescaped
    const json = escapeDq(JSON.stringify(record)).replace(
      escapeDq(JSON.stringify(GEN_SLOT)),
      `#{worker_id.to_i + ${input.genBase ?? 0}}`,
    );
    out.push(
      `# ${eps} events/s = ${workers} worker(s) x rate ${rate} emits/s x size ${size} events per emit`,
      "<source>",
      "  @type sample",
      `  tag ${SAMPLE_TAG}`,
      `  size ${size}`,
      `  rate ${rate}`,
      "  auto_increment_key seq",
      `  sample "${json}"`,
      "</source>",
      "",
      `<filter ${SAMPLE_TAG}>`,
      "  @type record_transformer",
      "  enable_ruby true",
      "  <record>",
      "    sent_at ${time.getutc.strftime('%Y-%m-%dT%H:%M:%S.%LZ')}",
      "  </record>",
      "</filter>",
      "",
    );
  } else if (src.forward) {
    dataPort = src.forward.port;
    out.push("<source>", "  @type forward", "  bind 0.0.0.0", `  port ${dataPort}`, "</source>", "");
  } else if (src.http) {
    dataPort = src.http.port;
    out.push("<source>", "  @type http", "  bind 0.0.0.0", `  port ${dataPort}`, "</source>", "");
  }
  out.push(
    "<source>",
    "  @type monitor_agent",
    "  bind 0.0.0.0",
    `  port ${config.monitor_agent.port}`,
    "</source>",
    "",
  );
  if (input.sink.name === "clickhouse") out.push(...epochMsFilter(fields));
  out.push(...matchLines(input, paths), "");
  // several workers: each serves monitor_agent on port + its worker id (in_monitor_agent.rb adds fluentd_worker_id)
  const metricsPorts =
    workers > 1 ? Array.from({ length: workers }, (_, id) => config.monitor_agent.port + id) : undefined;
  return {
    file: paths.file,
    text: out.join("\n"),
    listens: {
      data: dataPort,
      metrics: config.monitor_agent.port,
      ...(metricsPorts ? { metricsPorts } : {}),
    },
  };
}

export const fluentdRenderer: CollectorRenderer<FluentdConfig> = {
  writesTo: FLUENTD_SINKS,
  // in_forward: the forward protocol; in_http: JSON bodies; in_sample makes the load itself
  accepts: (c) => (c.source.forward ? ["fluent-forward"] : c.source.http ? ["http-json"] : []),
  render: (input) => renderFluentdConfig(input),
  generators: (c) => (c.source.sample ? c.system.workers : 0),
};
