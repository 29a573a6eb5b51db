/** Vector's own counts on deployed stacks, from its internal_metrics exposed by a prometheus_exporter sink (core/claims.ts has the keys). */
import { prometheusClaims, withPresent, type HttpClaims } from "../../../core/claims.ts";
import type { OutputPressure } from "../../../core/plugin.ts";
import { image } from "./image.ts";

/** Vector's own telemetry pipeline (./render.ts): its metric events are not the benchmark's. */
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
export const claims: HttpClaims = prometheusClaims(image, ({ need, some, samples }) => {
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

/**
 * The sinks' readings (core/plugin.ts OutputPressure) from one host's series signals, which on the container platforms
 * are the claims above (harness/remote/site.ts reads them every sample): queued = vector_buffer_events (events in the
 * sinks' buffers) and errors = vector_component_errors_total as failed sends, under one output "sinks" (the claims
 * are summed over the sinks). No buffer limit or flush time is read, so only a growing buffer can be seen.
 */
export function vectorPressure(signals: Readonly<Record<string, number>>): OutputPressure[] {
  const { queued, errors } = signals;
  if (queued === undefined && errors === undefined) return [];
  return [
    {
      output: "sinks",
      ...(queued !== undefined ? { queued, queuedUnit: "items" as const } : {}),
      ...(errors !== undefined ? { sendFailures: errors } : {}),
    },
  ];
}
