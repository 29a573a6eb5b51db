/** The container platforms' image of fluentd (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
  name: "fluentd",
  kind: "collector",
  repository: "fluent/fluentd",
  tag: "v1.12.0-debian-1.0",
  digest: null,
  version: "1.12.0",
  ports: [
    { port: 24224, role: "data", protocol: "tcp", scheme: "forward" },
    { port: 9880, role: "data", protocol: "tcp", scheme: "http" },
    { port: 24220, role: "metrics", protocol: "tcp", scheme: "http" },
  ],
  dataDir: "/fluentd/buffer",
  env: {},
  versionCommand: ["fluentd", "--version"],
  metrics: {
    path: "/api/plugins.json",
    format: "json",
    about:
      "monitor_agent per plugin: buffer_queue_length, buffer_total_queued_size, retry_count, emit_records, slow_flush_count, flush_time_count (several workers: one per worker on port 24220 + worker id, as in_monitor_agent.rb adds fluentd_worker_id to its port; seen on a real 1.12.0 with 2 workers)",
  },
  build: {
    context: "images/fluentd-griddb",
    repository: "ingestbench/fluentd-griddb",
    tag: "1.12.0-ruby2.7.2-griddb1.0.2-fix1",
    forSinks: ["griddb"],
    adds: "Ruby 2.7.2 (the pulled v1.12 images run Ruby 2.6), fluent-plugin-griddb 1.0.2 built from its GitHub tag, and write-up 000's one-line fix of the buffered write path, checked at build",
  },
  refuses: {
    elasticsearch:
      "neither the pulled fluent/fluentd image nor images/fluentd-griddb has fluent-plugin-elasticsearch (a build with it is not written)",
  },
  todo: "the pulled fluent/fluentd:v1.12.0 image runs Ruby 2.6: GridDB sinks use the built image (Ruby 2.7), other sinks the pulled one",
};
