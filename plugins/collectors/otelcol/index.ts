/**
 * Collector plugin "otelcol": the OpenTelemetry Collector 0.165.0. Forward protocol in (fluentforward receiver),
 * batch processor, and out through the exporter each sink needs (./render.ts, one renderer for every platform).
 * Local platform: ./component.ts runs the project's own build (./distribution, scripts/build-otelcol.sh) or an
 * installed otelcol-contrib. Container platforms: the contrib image (./image.ts). Claims: ./claims.ts.
 */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims } from "./claims.ts";
import { otelcol, otelcolPressure } from "./component.ts";
import { otelcolImage } from "./image.ts";
import { otelcolRenderer, otelcolSchema, OTELCOL_PIN, type OtelcolConfig } from "./render.ts";

export const plugin: CollectorPlugin<OtelcolConfig> = {
  kind: "collector",
  name: "otelcol",
  about: `OpenTelemetry Collector ${OTELCOL_PIN}: fluentforward → batch → otlphttp (ClickHouse HTTP, Loki OTLP) / elasticsearch / opensearch; locally the project's own build (plugins/collectors/otelcol/distribution) or an installed otelcol-contrib`,
  evidence: { level: "real-ci", version: "0.165.0" },
  schema: otelcolSchema,
  local: otelcol,
  image: otelcolImage,
  render: otelcolRenderer,
  claims,
  pressure: otelcolPressure,
};
