/**
 * The collectors' own counts ("claims") on deployed docker and azure stacks, read by the harness over HTTP from
 * each collector's metrics endpoint (infra/catalog.ts `metrics`: port and path; the renderers in infra/render/
 * switch the endpoint on). They are what the collector *says*, kept beside the ledger (RunRecord.collectorClaims),
 * never in place of it.
 *
 * Keys are the local collectors' (infra/components/syslog-ng.ts, rsyslog.ts) where they mean the same:
 *
 * | key            | meaning (unit: records/events unless said) | fluent-bit | vector | fluentd |
 * |----------------|--------------------------------------------|------------|--------|---------|
 * | received       | accepted by the input(s)                    | ✓ | ✓ | ≥ 1.13 with enable_input_metrics only |
 * | written        | delivered by the output(s)                  | ✓ | ✓ | — (1.12 counts no delivered records) |
 * | emitted        | handed to the output(s), not yet delivered  | — | — | ✓ |
 * | dropped        | given up by the output(s)                   | ✓ | ✓ (unintentional discards) | — |
 * | filtered       | discarded on purpose (a filter)             | — | when reported | — |
 * | retries        | retry requests (chunks, not records)        | ✓ | — | ✓ |
 * | retriedRecords | records in chunks marked for retry          | when reported | — | — |
 * | retriesFailed  | chunks whose retries expired                | when reported | — | — |
 * | errors         | error occurrences (not records)             | — | when reported | — |
 * | queued         | buffered now (a gauge)                      | — | when reported | — |
 * | queuedChunks   | chunks queued for flushing now (a gauge)    | — | — | buffered outputs |
 * | queuedBytes    | bytes buffered now (a gauge)                | — | — | buffered outputs |
 * | writes, rollbacks | chunk writes, chunk write rollbacks      | — | — | when reported |
 *
 * syslog-ng has no HTTP metrics endpoint: its counts are read inside its container through the control socket
 * (ShellClaimsReader below), with the local component's keys (received, written, dropped, queued).
 *
 * Counters are totals since the collector started: on a stack whose collector outlives one cell they include the
 * earlier cells' events.
 */
import { createRequire } from "node:module";
import { request } from "undici";
import { z } from "zod";
import { catalog } from "../../infra/catalog.ts";
import type { StackOutputs } from "../../core/outputs.ts";
import { IngestbenchError } from "../../core/errors.ts";
import { harnessAddress } from "../provision/outputs.ts";
import { sumCounts } from "../runner/site.ts";
import { parseStats } from "../../infra/components/syslog-ng.ts";
import { SYSLOG_NG_CONTAINER_PATHS } from "../../infra/render/syslog-ng.ts";
import type { HostShell } from "./shell.ts";

/** How long one read of a metrics endpoint may take (connect, answer and body), in milliseconds. */
export const CLAIMS_TIMEOUT_MS = 5_000;

/** Reads one collector's own counts from its metrics endpoint, over HTTP (undici) from the harness. */
export interface ClaimsReader {
  /** catalog name */
  name: string;
  /**
   * The container ports that serve this collector's metrics, given the endpoint's port (the outputs' `metrics`) and
   * the scenario's collector block; absent: that one port. Their counts are summed.
   */
  ports?(metricsPort: number, config: Record<string, unknown>): number[];
  /**
   * Counts with the keys of the table in this file's comment.
   * @throws IngestbenchError E_CLAIMS naming the collector and URL: refused connection, no answer within
   *         CLAIMS_TIMEOUT_MS, an HTTP status other than 200, or a body that is not the documented format
   */
  read(at: { host: string; port: number }, signal?: AbortSignal): Promise<Record<string, number>>;
}

/** A claims read that failed; the message names the collector and the URL. */
export function claimsError(name: string, url: string, why: string, cause?: unknown): IngestbenchError {
  return new IngestbenchError("E_CLAIMS", `${name} metrics at ${url}: ${why}`, cause === undefined ? undefined : { cause });
}

/** GET `url` and return its body; 200 only. */
export async function fetchText(name: string, url: string, signal?: AbortSignal): Promise<string> {
  const timeout = AbortSignal.timeout(CLAIMS_TIMEOUT_MS);
  try {
    // reset: one read per run, so no idle keep-alive socket outlives it
    const res = await request(url, { method: "GET", reset: true, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    const body = await res.body.text();
    if (res.statusCode !== 200) throw claimsError(name, url, `HTTP ${res.statusCode}: ${body.slice(0, 200).trim()}`);
    return body;
  } catch (e) {
    if (e instanceof IngestbenchError) throw e;
    if (timeout.aborted && !signal?.aborted) throw claimsError(name, url, `no answer within ${CLAIMS_TIMEOUT_MS / 1000} s`, e);
    const err = e as Error & { code?: string };
    throw claimsError(name, url, err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message, e);
  }
}

/** The metrics URL of `name` at `at` (path from infra/catalog.ts). */
function metricsUrl(name: string, at: { host: string; port: number }): string {
  const path = catalog[name]?.metrics?.path;
  if (!path) throw new IngestbenchError("E_CLAIMS", `${name}: no metrics endpoint in infra/catalog.ts`);
  return `http://${at.host.includes(":") ? `[${at.host}]` : at.host}:${at.port}${path}`;
}

// --- Prometheus text format -------------------------------------------------------------------------------------

/** One family as parse-prometheus-text-format returns it (prom2json's shape): values stay strings. */
interface PromFamily {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}
// the package is CommonJS without type declarations: its one export, typed by its README
const parsePrometheusTextFormat = createRequire(import.meta.url)("parse-prometheus-text-format") as (text: string) => PromFamily[];

/** A sample: labels and its value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

// Prometheus "Exposition formats", text format: metric names match [a-zA-Z_:][a-zA-Z0-9_:]*; values are Go floats
// (including NaN, +Inf, -Inf)
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const FLOAT = /^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|Inf|NaN)$/i;

/**
 * Parse Prometheus text exposition (format 0.0.4) into samples by metric name, counters, gauges and untyped only.
 * @throws IngestbenchError E_CLAIMS when the body is not that format (e.g. an HTML page): a family name that is not a
 *         metric name, or a sample value that is not a float
 */
export function parsePrometheus(name: string, url: string, text: string): Map<string, Sample[]> {
  let families: PromFamily[];
  try {
    families = parsePrometheusTextFormat(text);
  } catch (e) {
    throw claimsError(name, url, `not Prometheus text: ${(e as Error).message}`, e);
  }
  const out = new Map<string, Sample[]>();
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) throw claimsError(name, url, `not Prometheus text: "${f.name.slice(0, 60)}" is not a metric name`);
    if (!["COUNTER", "GAUGE", "UNTYPED"].includes(f.type)) continue;
    out.set(
      f.name,
      f.metrics.map((m) => {
        const raw = m.value ?? "";
        if (!FLOAT.test(raw)) throw claimsError(name, url, `not Prometheus text: ${f.name} has the value "${raw.slice(0, 40)}"`);
        return { labels: m.labels ?? {}, value: Number(raw.replace(/inf/i, "Infinity")) };
      }),
    );
  }
  return out;
}

/**
 * Sum of `metric`'s samples that pass `keep`; undefined when the payload has no such family.
 * @throws IngestbenchError E_CLAIMS when a kept sample is not a finite number (a count cannot be NaN or Inf)
 */
export function sumOf(name: string, url: string, samples: Map<string, Sample[]>, metric: string, keep: (labels: Record<string, string>) => boolean = () => true): number | undefined {
  const list = samples.get(metric);
  if (!list) return undefined;
  let sum = 0;
  for (const s of list) {
    if (!keep(s.labels)) continue;
    if (!Number.isFinite(s.value)) throw claimsError(name, url, `${metric} is ${s.value}, not a count`);
    sum += s.value;
  }
  return sum;
}

/** Like sumOf, for a family the collector always exports. @throws IngestbenchError E_CLAIMS when it is absent */
export function required(name: string, url: string, samples: Map<string, Sample[]>, metric: string, keep?: (labels: Record<string, string>) => boolean): number {
  const v = sumOf(name, url, samples, metric, keep);
  if (v === undefined) throw claimsError(name, url, `no ${metric} in the payload (${samples.size} metric families)`);
  return v;
}

/** `counts` plus the entries of `maybe` that are defined. */
export function withPresent(counts: Record<string, number>, maybe: Record<string, number | undefined>): Record<string, number> {
  for (const [k, v] of Object.entries(maybe)) if (v !== undefined) counts[k] = v;
  return counts;
}

// --- the readers ------------------------------------------------------------------------------------------------

/** Sums over one parsed Prometheus payload (see sumOf and required). */
interface PromSums {
  need(metric: string, keep?: (labels: Record<string, string>) => boolean): number;
  some(metric: string, keep?: (labels: Record<string, string>) => boolean): number | undefined;
  samples: Map<string, Sample[]>;
}

/** A reader of a Prometheus text endpoint: `counts` maps the payload's sums to the claim keys. */
function prometheusReader(name: string, counts: (p: PromSums) => Record<string, number>): ClaimsReader {
  return {
    name,
    async read(at, signal) {
      const url = metricsUrl(name, at);
      const samples = parsePrometheus(name, url, await fetchText(name, url, signal));
      return counts({ samples, need: (m, keep) => required(name, url, samples, m, keep), some: (m, keep) => sumOf(name, url, samples, m, keep) });
    },
  };
}

/**
 * Fluent Bit (4.0.3): Prometheus text from the built-in HTTP server, GET /api/v2/metrics/prometheus. Metric names and
 * their `name` label (the plugin instance, e.g. "http.0") from the Fluent Bit docs, "Monitoring", v2 metrics table;
 * summed over every input or output instance:
 * received = fluentbit_input_records_total, written = fluentbit_output_proc_records_total (successfully sent),
 * dropped = fluentbit_output_dropped_records_total (unrecoverable error or retries expired), retries =
 * fluentbit_output_retries_total (chunks); when reported, retriedRecords = fluentbit_output_retried_records_total and
 * retriesFailed = fluentbit_output_retries_failed_total (chunks).
 */
const fluentBitReader = prometheusReader("fluent-bit", ({ need, some }) =>
  withPresent(
    {
      received: need("fluentbit_input_records_total"),
      written: need("fluentbit_output_proc_records_total"),
      dropped: need("fluentbit_output_dropped_records_total"),
      retries: need("fluentbit_output_retries_total"),
    },
    { retriedRecords: some("fluentbit_output_retried_records_total"), retriesFailed: some("fluentbit_output_retries_failed_total") },
  ),
);

/** Vector's own telemetry pipeline (infra/render/vector.ts): its metric events are not the benchmark's. */
const VECTOR_TELEMETRY_TYPES = new Set(["internal_metrics", "prometheus_exporter"]);

/**
 * Vector (0.49): its internal_metrics source exposed by a prometheus_exporter sink, GET /metrics. Metric names and the
 * labels component_id, component_kind, component_type (and `intentional` on discards) from the Vector reference,
 * "Internal metrics" source, namespace `vector`; the telemetry pipeline's own components (types internal_metrics and
 * prometheus_exporter) are left out:
 * received = vector_component_received_events_total of sources, written = vector_component_sent_events_total of
 * sinks, dropped = vector_component_discarded_events_total with intentional="false" (0 when none was reported);
 * when reported, filtered = the intentional discards, errors = vector_component_errors_total (occurrences),
 * queued = vector_buffer_events (the buffers' events now; vector_buffer_size_events when the former is absent, its
 * name from 0.53 on).
 */
const vectorReader = prometheusReader("vector", ({ need, some, samples }) => {
  const ours = (l: Record<string, string>): boolean => !VECTOR_TELEMETRY_TYPES.has(l.component_type ?? "");
  const kind = (k: string) => (l: Record<string, string>) => ours(l) && l.component_kind === k;
  const intentional = (v: string) => (l: Record<string, string>) => ours(l) && l.intentional === v;
  const DISCARDED = "vector_component_discarded_events_total";
  const anyIntentional = (samples.get(DISCARDED) ?? []).some((s) => intentional("true")(s.labels));
  return withPresent(
    {
      received: need("vector_component_received_events_total", kind("source")),
      written: need("vector_component_sent_events_total", kind("sink")),
      dropped: some(DISCARDED, intentional("false")) ?? 0,
    },
    {
      filtered: anyIntentional ? some(DISCARDED, intentional("true")) : undefined,
      errors: some("vector_component_errors_total", ours),
      queued: some("vector_buffer_events", ours) ?? some("vector_buffer_size_events", ours),
    },
  );
});

const count = z.number().finite().nonnegative();
/** One plugin of monitor_agent's /api/plugins.json (only the fields read here; the rest passes). */
const fluentdPlugin = z
  .object({
    plugin_category: z.string(),
    type: z.string().nullable().optional(),
    emit_records: count.optional(),
    retry_count: count.nullable().optional(),
    buffer_queue_length: count.optional(),
    buffer_total_queued_size: count.optional(),
    write_count: count.optional(),
    rollback_count: count.optional(),
  })
  .passthrough();
const fluentdPlugins = z.object({ plugins: z.array(fluentdPlugin) }).passthrough();
type FluentdPlugin = z.infer<typeof fluentdPlugin>;

/**
 * Fluentd (1.12): the monitor_agent input's JSON, GET /api/plugins.json ({ plugins: [...] }, one entry per plugin
 * with plugin_category input / output / filter). Field names from the Fluentd docs, "monitor_agent" and "Monitoring
 * by REST API"; summed over the output plugins (the renderer writes one `<match>`):
 * emitted = emit_records (records handed to the output; Fluentd 1.12 counts no delivered records, so no `written`),
 * retries = retry_count, queuedChunks = buffer_queue_length, queuedBytes = buffer_total_queued_size (buffered outputs
 * only), writes = write_count and rollbacks = rollback_count (chunks) when reported; received = the input plugins'
 * emit_records (monitor_agent's own left out) when any reports it (Fluentd ≥ 1.13 with enable_input_metrics; 1.12's
 * inputs report none).
 *
 * Several workers (`<system> workers N`): each worker runs its own monitor_agent on port + worker id (Fluentd v1
 * lib/fluent/plugin/in_monitor_agent.rb, `configure`: `@port += fluentd_worker_id`; read in the source, not seen on
 * a running 1.12 here), so `ports` lists port … port + N − 1 and their counts are summed.
 */
const FLUENTD = "fluentd";
const fluentdReader: ClaimsReader = {
  name: FLUENTD,
  ports(metricsPort, config) {
    const workers = (config.system as { workers?: unknown } | undefined)?.workers;
    const n = typeof workers === "number" && Number.isInteger(workers) && workers > 1 ? workers : 1;
    return Array.from({ length: n }, (_, w) => metricsPort + w);
  },
  async read(at, signal) {
    const url = metricsUrl(FLUENTD, at);
    const text = await fetchText(FLUENTD, url, signal);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw claimsError(FLUENTD, url, `not JSON: ${(e as Error).message}`, e);
    }
    const r = fluentdPlugins.safeParse(json);
    if (!r.success) {
      const i = r.error.issues[0]!;
      throw claimsError(FLUENTD, url, `not monitor_agent's plugin list: ${i.path.join(".") || "(body)"}: ${i.message}`);
    }
    const outputs = r.data.plugins.filter((p) => p.plugin_category === "output");
    if (!outputs.some((p) => p.emit_records !== undefined)) {
      throw claimsError(FLUENTD, url, `no output plugin reports emit_records (${r.data.plugins.length} plugins listed)`);
    }
    const total = (list: FluentdPlugin[], key: keyof FluentdPlugin): number | undefined =>
      list.some((p) => typeof p[key] === "number") ? list.reduce((s, p) => s + (typeof p[key] === "number" ? (p[key] as number) : 0), 0) : undefined;
    const inputs = r.data.plugins.filter((p) => p.plugin_category === "input" && p.type !== "monitor_agent");
    return withPresent(
      { emitted: total(outputs, "emit_records")!, retries: total(outputs, "retry_count") ?? 0 },
      {
        received: total(inputs, "emit_records"),
        queuedChunks: total(outputs, "buffer_queue_length"),
        queuedBytes: total(outputs, "buffer_total_queued_size"),
        writes: total(outputs, "write_count"),
        rollbacks: total(outputs, "rollback_count"),
      },
    );
  },
};

/** The claims readers by catalog name: the collectors that run on deployed stacks only. */
export const claimsReaders: Readonly<Record<string, ClaimsReader>> = Object.freeze({
  [fluentBitReader.name]: fluentBitReader,
  [vectorReader.name]: vectorReader,
  [fluentdReader.name]: fluentdReader,
});

/**
 * Reads one collector's own counts inside its container, for collectors without an HTTP metrics endpoint.
 * syslog-ng: `syslog-ng-ctl stats -c <control socket>` (the container's socket, infra/render/syslog-ng.ts), parsed as
 * on the local platform (infra/components/syslog-ng.ts parseStats: received, written, dropped, queued).
 */
export interface ShellClaimsReader {
  name: string;
  /** @throws ProvisioningError E_REMOTE_EXEC when the command fails in the container */
  read(shell: Pick<HostShell, "run">): Promise<Record<string, number>>;
}

/** The shell claims readers by catalog name. */
export const shellClaimsReaders: Readonly<Record<string, ShellClaimsReader>> = Object.freeze({
  "syslog-ng": {
    name: "syslog-ng",
    read: async (shell) => parseStats(await shell.run("syslog-ng-ctl", ["stats", "-c", SYSLOG_NG_CONTAINER_PATHS.control], { timeoutMs: CLAIMS_TIMEOUT_MS })),
  },
});

/**
 * One collector host's claims on a deployed stack: every port `reader` names (ClaimsReader.ports), each as this
 * machine reaches it (its published port: harness/provision/outputs.ts harnessAddress), read and summed.
 * @throws IngestbenchError E_CLAIMS when the outputs give the host no metrics endpoint or a port is not published
 *         (a partial sum would pass for the whole), or as ClaimsReader.read
 */
export async function readHostClaims(
  outputs: StackOutputs,
  reader: ClaimsReader,
  host: string,
  config: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Record<string, number>> {
  const ep = (outputs.endpoints[reader.name] ?? []).find((e) => e.host === host);
  if (!ep?.metrics) throw new IngestbenchError("E_CLAIMS", `stack ${outputs.stack}: no ${reader.name} metrics endpoint on ${host} in the outputs`);
  const ports = reader.ports?.(ep.metrics.port, config) ?? [ep.metrics.port];
  const targets = ports.map((port) => {
    const at = harnessAddress(outputs, ep, port);
    if (!at) {
      throw new IngestbenchError(
        "E_CLAIMS",
        `stack ${outputs.stack}: ${host}'s ${reader.name} metrics port ${port} is not published in the outputs (published: ${ep.published.map((p) => p.internal).join(", ") || "none"}); its counts cannot be read from here`,
      );
    }
    return at;
  });
  return sumCounts(await Promise.all(targets.map((at) => reader.read(at, signal))));
}
