/**
 * The otelcol image entry (core/catalog.ts CatalogImage) of the container platforms.
 *
 * otel/opentelemetry-collector-contrib:<OTELCOL_PIN> (Docker Hub; the multi-arch manifest of
 * opentelemetry-collector-releases distributions/otelcol-contrib/.goreleaser.yaml) is `FROM scratch`:
 * one static binary /otelcol-contrib (the entrypoint), no shell. `docker exec <c> /otelcol-contrib --version` itself
 * would run, but the harness runs every in-container command through `sh -c` (harness/remote/versions.ts for the
 * version probe, harness/observers/remote.ts for the cgroup counters, harness/remote/bundle.ts for the config's
 * sha256), so on the pulled image the version probe, the observer and the config check would all fail. Hence the
 * `build`: ./image/Dockerfile adds a static busybox (sh, cat, sha256sum, ...) to the very same image, always.
 */
import type { CatalogImage } from "../../../core/catalog.ts";
import { LOKI_REFUSAL, OTELCOL_FORWARD_PORT, OTELCOL_METRICS_PORT, OTELCOL_PIN } from "./render.ts";

export const otelcolImage: CatalogImage = {
  name: "otelcol",
  kind: "collector",
  repository: "otel/opentelemetry-collector-contrib",
  tag: OTELCOL_PIN,
  digest: null,
  version: OTELCOL_PIN,
  ports: [
    { port: OTELCOL_FORWARD_PORT, role: "data", protocol: "tcp", scheme: "forward" },
    { port: OTELCOL_METRICS_PORT, role: "metrics", protocol: "tcp", scheme: "prometheus" },
  ],
  // no file_storage extension is rendered: the sending queue is in memory; the directory only has to exist
  dataDir: "/var/lib/otelcol",
  env: {},
  // the rendered config (./render.ts OTELCOL_CONFIG_FILE) after the image's entrypoint /otelcol-contrib
  command: ["--config", "/etc/otelcol-contrib/ingestbench.yaml"],
  // prints "otelcol-contrib version 0.165.0"; run through the built image's busybox sh (see the file comment)
  versionCommand: ["/otelcol-contrib", "--version"],
  metrics: {
    path: "/metrics",
    format: "prometheus",
    about:
      "otelcol_receiver_accepted_log_records_total, otelcol_receiver_refused_log_records_total, otelcol_exporter_sent_log_records_total, otelcol_exporter_send_failed_log_records_total, otelcol_exporter_queue_size",
  },
  build: {
    context: "plugins/collectors/otelcol/image",
    repository: "ingestbench/otelcol-contrib",
    tag: `${OTELCOL_PIN}-busybox1.37.0-1`,
    forSinks: [],
    always: true,
    adds: "a static busybox 1.37.0 (sh and its applets in /bin) to the scratch-based contrib image, for the harness's in-container commands; the Collector binary and entrypoint are the pulled image's",
  },
  refuses: { loki: LOKI_REFUSAL },
  todo: "not pulled or built here (no image registry): the tag is the pin of the project's own build (./distribution, run for real on the local platform, metric names read from it), not checked against Docker Hub; the ClickHouse path (otlphttp JSON into INSERT ... SELECT FROM input()) is checked as text only",
};
