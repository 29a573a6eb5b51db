/** The container platforms' image of loki (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
  name: "loki",
  kind: "sink",
  repository: "grafana/loki",
  tag: "3.5.0",
  digest: null,
  version: "3.5.0",
  ports: [{ port: 3100, role: "data", protocol: "tcp", scheme: "http" }],
  dataDir: "/loki",
  env: {},
  command: ["-config.file=/etc/loki/local-config.yaml"],
  versionCommand: ["loki", "-version"],
  metrics: {
    path: "/metrics",
    format: "prometheus",
    about: "loki_distributor_lines_received_total, loki_ingester_streams_created_total",
  },
};
