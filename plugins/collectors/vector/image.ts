/** The container platforms' image of vector (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
  name: "vector",
  kind: "collector",
  repository: "timberio/vector",
  tag: "0.49.0-debian",
  digest: null,
  version: "0.49.0",
  ports: [
    { port: 8080, role: "data", protocol: "tcp", scheme: "http" },
    { port: 9598, role: "metrics", protocol: "tcp", scheme: "prometheus" },
  ],
  dataDir: "/var/lib/vector",
  env: {},
  versionCommand: ["vector", "--version"],
  metrics: {
    path: "/metrics",
    format: "prometheus",
    about:
      "internal_metrics via prometheus_exporter: vector_component_sent_events_total, vector_buffer_events, vector_component_errors_total",
  },
};
