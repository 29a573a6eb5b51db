/** Fluentd's own counts on deployed stacks, from its monitor_agent input (core/claims.ts has the keys). */
import { z } from "zod";
import {
  claimsError,
  fetchClaimsText,
  metricsUrl,
  withPresent,
  type HttpClaims,
} from "../../../core/claims.ts";
import type { OutputPressure } from "../../../core/plugin.ts";
import { image } from "./image.ts";
import { LOG_OUTPUT_ID } from "./render.ts";

const count = z.number().finite().nonnegative();
/** One plugin of monitor_agent's /api/plugins.json (only the fields read here; the rest passes). */
const fluentdPlugin = z
  .object({
    plugin_category: z.string(),
    plugin_id: z.string().optional(),
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
 * lib/fluent/plugin/in_monitor_agent.rb, `configure`: `@port += fluentd_worker_id`; seen on a real 1.12.0 with two
 * workers, ./claims.vectors.ts), so `ports` lists port … port + N − 1 and their counts are summed. The null output of
 * Fluentd's own log events (./render.ts LOG_OUTPUT_ID) is not counted.
 */
const FLUENTD = image.name;
export const claims: HttpClaims = {
  kind: "http",
  ports(metricsPort, config) {
    const workers = (config.system as { workers?: unknown } | undefined)?.workers;
    const n = typeof workers === "number" && Number.isInteger(workers) && workers > 1 ? workers : 1;
    return Array.from({ length: n }, (_, w) => metricsPort + w);
  },
  async read(at, signal) {
    const url = metricsUrl(image, at);
    const text = await fetchClaimsText(FLUENTD, url, signal);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw claimsError(FLUENTD, url, `not JSON: ${(e as Error).message}`, e);
    }
    const r = fluentdPlugins.safeParse(json);
    if (!r.success) {
      const i = r.error.issues[0]!;
      throw claimsError(
        FLUENTD,
        url,
        `not monitor_agent's plugin list: ${i.path.join(".") || "(body)"}: ${i.message}`,
      );
    }
    // the null output of Fluentd's own log events (./render.ts LOG_OUTPUT_ID) is not the sink's
    const outputs = r.data.plugins.filter(
      (p) => p.plugin_category === "output" && p.plugin_id !== LOG_OUTPUT_ID,
    );
    if (!outputs.some((p) => p.emit_records !== undefined)) {
      throw claimsError(
        FLUENTD,
        url,
        `no output plugin reports emit_records (${r.data.plugins.length} plugins listed)`,
      );
    }
    const total = (list: FluentdPlugin[], key: keyof FluentdPlugin): number | undefined =>
      list.some((p) => typeof p[key] === "number")
        ? list.reduce((s, p) => s + (typeof p[key] === "number" ? (p[key] as number) : 0), 0)
        : undefined;
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

/** monitor_agent's per-output fields read into the series every sample (those a version has; Fluentd 1.12 has all). */
export const MONITOR_AGENT_SIGNALS = [
  "buffer_queue_length",
  "buffer_total_queued_size",
  "retry_count",
  "emit_records",
  "write_count",
  "rollback_count",
  "slow_flush_count",
  "flush_time_count",
  "buffer_available_buffer_space_ratios",
] as const;

/**
 * A percentage of free buffer space (Fluentd's buffer.rb `statistics`: 100 × (1 − (stage + queue bytes) /
 * total_limit_size)), kept as the least of several readings (the fullest worker or output), never summed.
 */
export const FREE_SPACE_SIGNAL = "buffer_available_buffer_space_ratios";

/** Two readings of one signal key combined: the least free space (FREE_SPACE_SIGNAL), else the sum. */
export function combineSignal(key: string, a: number | undefined, b: number): number {
  if (a === undefined) return b;
  return key.endsWith(`.${FREE_SPACE_SIGNAL}`) ? Math.min(a, b) : a + b;
}

/**
 * The series' signals from one monitor_agent payload (GET /api/plugins.json): each output plugin's
 * MONITOR_AGENT_SIGNALS that it reports as a number, keyed `<plugin_id>.<field>` (e.g. `object:8c.emit_records`:
 * plugin_id is Fluentd's own, `object:<hex>` when the config gives no @id), combined when ids repeat (combineSignal).
 * @throws Error when the body is not monitor_agent's plugin list
 */
export function parseMonitorAgentSignals(text: string): Record<string, number> {
  const r = fluentdPlugins.safeParse(JSON.parse(text));
  if (!r.success) throw new Error(`not monitor_agent's plugin list: ${r.error.issues[0]!.message}`);
  const out: Record<string, number> = {};
  for (const p of r.data.plugins) {
    if (p.plugin_category !== "output") continue;
    const id = p.plugin_id ?? p.type ?? "output";
    for (const key of MONITOR_AGENT_SIGNALS) {
      const v = (p as Record<string, unknown>)[key];
      if (typeof v === "number" && Number.isFinite(v))
        out[`${id}.${key}`] = combineSignal(`${id}.${key}`, out[`${id}.${key}`], v);
    }
  }
  return out;
}

/** parseMonitorAgentSignals of `<base>/api/plugins.json` (e.g. base `http://10.213.0.2:24220`). */
export async function monitorAgentSignals(
  base: string,
  signal?: AbortSignal,
): Promise<Record<string, number>> {
  const url = `${base}${image.metrics!.path}`;
  const text = await fetchClaimsText(FLUENTD, url, signal);
  try {
    return parseMonitorAgentSignals(text);
  } catch (e) {
    throw claimsError(FLUENTD, url, (e as Error).message, e);
  }
}

/**
 * The sink outputs' flush and queue readings (core/plugin.ts OutputPressure) from one host's series signals
 * (parseMonitorAgentSignals' `<plugin_id>.<field>` keys): flush_time_count, write_count, slow_flush_count,
 * buffer_total_queued_size (bytes), 1 − buffer_available_buffer_space_ratios / 100, retry_count. The null output of
 * Fluentd's own log events (./render.ts LOG_OUTPUT_ID) is left out.
 */
export function fluentdPressure(signals: Readonly<Record<string, number>>): OutputPressure[] {
  const byId = new Map<string, Record<string, number>>();
  for (const [key, v] of Object.entries(signals)) {
    const dot = key.lastIndexOf(".");
    const id = key.slice(0, dot);
    if (dot < 0 || id === LOG_OUTPUT_ID) continue;
    byId.set(id, { ...byId.get(id), [key.slice(dot + 1)]: v });
  }
  return [...byId].map(([output, f]) => {
    const free = f[FREE_SPACE_SIGNAL];
    const p: OutputPressure = { output };
    if (f.flush_time_count !== undefined) p.flushTimeMs = f.flush_time_count;
    if (f.write_count !== undefined) p.flushes = f.write_count;
    if (f.slow_flush_count !== undefined) p.slowFlushes = f.slow_flush_count;
    if (f.buffer_total_queued_size !== undefined) {
      p.queued = f.buffer_total_queued_size;
      p.queuedUnit = "bytes";
    }
    if (free !== undefined) p.queueUsed = Math.min(1, Math.max(0, 1 - free / 100));
    if (f.retry_count !== undefined) p.retries = f.retry_count;
    return p;
  });
}
