/**
 * Collector plugin "otelcol": the OpenTelemetry Collector, contrib distribution 0.159.0, on the container platforms
 * only (no local component: otelcol-contrib is not a Debian package). Forward protocol in (fluentforward receiver),
 * batch processor, and ClickHouse / Elasticsearch / OpenSearch / Loki out (./render.ts says how each sink's rows land
 * where its verifier reads them; Loki is refused, ./image.ts). Claims: ./claims.ts.
 */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims } from "./claims.ts";
import { otelcolImage } from "./image.ts";
import { otelcolRenderer, otelcolSchema, OTELCOL_PIN, type OtelcolConfig } from "./render.ts";

export const plugin: CollectorPlugin<OtelcolConfig> = {
  kind: "collector",
  name: "otelcol",
  about: `OpenTelemetry Collector contrib ${OTELCOL_PIN} (otel/opentelemetry-collector-contrib): fluentforward → batch → otlphttp (ClickHouse HTTP, Loki OTLP) / elasticsearch / opensearch`,
  evidence: { level: "vectors" },
  schema: otelcolSchema,
  image: otelcolImage,
  render: otelcolRenderer,
  claims,
};
