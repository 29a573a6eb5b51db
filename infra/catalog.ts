/**
 * The image catalog of the container platforms: every deployable sink and collector's image comes from its plugin
 * (plugins/registry.ts); the platform's own images (loadgen, shaper) are listed here. Shapes and digest rules:
 * core/catalog.ts.
 */
import type { CatalogImage } from "../core/catalog.ts";
export { DIGEST, heapMiB, imageRef } from "../core/catalog.ts";
export type { CatalogBuild, CatalogImage, CatalogKind, CatalogMetrics, CatalogPort, CatalogUpload } from "../core/catalog.ts";

const entries: CatalogImage[] = [
  {
    name: "postgres",
    kind: "sink",
    repository: "postgres",
    tag: "18.4-bookworm",
    digest: null,
    version: "18.4",
    ports: [{ port: 5432, role: "data", protocol: "tcp", scheme: "postgres" }],
    dataDir: "/var/lib/postgresql/data",
    env: { POSTGRES_HOST_AUTH_METHOD: "trust", PGDATA: "/var/lib/postgresql/data/pgdata" },
    versionCommand: ["postgres", "--version"],
  },
  {
    name: "clickhouse",
    kind: "sink",
    repository: "clickhouse/clickhouse-server",
    tag: "25.8",
    digest: null,
    version: "25.8",
    ports: [
      { port: 8123, role: "data", protocol: "tcp", scheme: "http" },
      { port: 9000, role: "control", protocol: "tcp", scheme: "clickhouse-native" },
      { port: 9363, role: "metrics", protocol: "tcp", scheme: "prometheus" },
    ],
    dataDir: "/var/lib/clickhouse",
    env: { CLICKHOUSE_SKIP_USER_SETUP: "1" },
    versionCommand: ["clickhouse-server", "--version"],
    metrics: { path: "/metrics", format: "prometheus", about: "ClickHouseMetrics_*, ClickHouseProfileEvents_InsertedRows, parts (ClickHouseAsyncMetrics_MaxPartCountForPartition)" },
    // the image serves Prometheus metrics only with a <prometheus> section (ClickHouse docs, "prometheus" server setting)
    uploads: [
      {
        file: "/etc/clickhouse-server/config.d/ingestbench-prometheus.xml",
        content:
          "<clickhouse>\n  <prometheus>\n    <endpoint>/metrics</endpoint>\n    <port>9363</port>\n    <metrics>true</metrics>\n" +
          "    <events>true</events>\n    <asynchronous_metrics>true</asynchronous_metrics>\n  </prometheus>\n</clickhouse>\n",
      },
    ],
    todo: "tag 25.8 is a moving LTS series tag until the digest is resolved",
  },
  {
    name: "elasticsearch",
    kind: "sink",
    repository: "docker.elastic.co/elasticsearch/elasticsearch",
    tag: "8.15.3",
    digest: null,
    version: "8.15.3",
    ports: [{ port: 9200, role: "data", protocol: "tcp", scheme: "http" }],
    dataDir: "/usr/share/elasticsearch/data",
    env: {
      "discovery.type": "single-node",
      "xpack.security.enabled": "false",
      "bootstrap.memory_lock": "false",
      ES_JAVA_OPTS: "-Xms{heapMiB}m -Xmx{heapMiB}m",
    },
    heapFromMemory: true,
    versionCommand: ["elasticsearch", "--version"],
    metrics: { path: "/_nodes/stats/indices,jvm,thread_pool", format: "json", about: "indexing.index_total, merges.current, refresh time, thread_pool.write.rejected, JVM heap" },
  },
  {
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
    metrics: { path: "/metrics", format: "prometheus", about: "loki_distributor_lines_received_total, loki_ingester_streams_created_total" },
  },
  {
    name: "fluent-bit",
    kind: "collector",
    repository: "fluent/fluent-bit",
    // the -debug tag is the same release with a shell: the plain tag is distroless, and the harness runs its
    // version command and reads the container's cgroup counters through `sh` inside it (harness/remote/)
    tag: "4.0.3-debug",
    digest: null,
    version: "4.0.3",
    ports: [
      // 001 fed Fluent Bit through its HTTP input on 8888; forward is the other data port
      { port: 8888, role: "data", protocol: "tcp", scheme: "http" },
      { port: 24224, role: "data", protocol: "tcp", scheme: "forward" },
      { port: 2020, role: "metrics", protocol: "tcp", scheme: "http" },
    ],
    dataDir: "/var/lib/fluent-bit",
    env: {},
    versionCommand: ["/fluent-bit/bin/fluent-bit", "--version"],
    metrics: { path: "/api/v2/metrics/prometheus", format: "prometheus", about: "fluentbit_input_records_total, fluentbit_output_proc_records_total, fluentbit_output_retries_total, fluentbit_output_dropped_records_total, storage chunks" },
  },
  {
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
    metrics: { path: "/metrics", format: "prometheus", about: "internal_metrics via prometheus_exporter: vector_component_sent_events_total, vector_buffer_events, vector_component_errors_total" },
  },
  {
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
    metrics: { path: "/api/plugins.json", format: "json", about: "monitor_agent per plugin: buffer_queue_length, buffer_total_queued_size, retry_count, emit_records, slow_flush_count, flush_time_count (several workers: one per worker on port 24220 + worker id, as in_monitor_agent.rb adds fluentd_worker_id to its port; not run here)" },
    build: {
      context: "images/fluentd-griddb",
      repository: "ingestbench/fluentd-griddb",
      tag: "1.12.0-ruby2.7.2-griddb1.0.2-fix1",
      forSinks: ["griddb"],
      adds: "Ruby 2.7.2 (the pulled v1.12 images run Ruby 2.6), fluent-plugin-griddb 1.0.2 built from its GitHub tag, and seed 000's one-line fix of the buffered write path, checked at build",
    },
    refuses: { elasticsearch: "neither the pulled fluent/fluentd image nor images/fluentd-griddb has fluent-plugin-elasticsearch (a build with it is not written)" },
    todo: "the pulled fluent/fluentd:v1.12.0 image runs Ruby 2.6: GridDB sinks use the built image (Ruby 2.7), other sinks the pulled one",
  },
  {
    name: "griddb",
    kind: "sink",
    repository: "griddb/griddb",
    tag: "5.6.0",
    digest: null,
    version: "5.6.0",
    ports: [
      // fluent-plugin-griddb and the griddb-webapi generator speak to the Web API (griddb/webapi, default 8081)
      { port: 8081, role: "data", protocol: "tcp", scheme: "griddb-webapi" },
      { port: 10001, role: "control", protocol: "tcp", scheme: "griddb-transaction" },
    ],
    dataDir: "/var/lib/gridstore/data",
    // read by images/griddb-webapi/start.sh: the cluster name is the sink param `cluster`'s default (infra/render/sinks.ts)
    env: { GRIDDB_CLUSTER_NAME: "myCluster", GRIDDB_USERNAME: "admin", GRIDDB_PASSWORD: "admin" },
    // the installed griddb package's version (the build checks it is 5.6.0): the gsserver binary the node runs
    versionCommand: ["dpkg-query", "-W", "-f=${Version}\\n", "griddb"],
    build: {
      context: "images/griddb-webapi",
      repository: "ingestbench/griddb-webapi",
      tag: "5.6.0-webapi5.6.0-1",
      forSinks: [],
      always: true,
      adds: "the GridDB Web API (griddb/webapi built from its v5.6.0 tag, a Temurin 8 JRE) on port 8081 in front of a one-node FIXED_LIST cluster, started by one script that ends the container when either dies",
    },
    todo: "not built here (no Docker engine): the tags griddb/griddb:5.6.0, eclipse-temurin 8u432-b06 and griddb/webapi v5.6.0 are not verified against their registries, the Web API tarball has no checksum yet, and the sink param `cluster` reaches the container only as its default (env GRIDDB_CLUSTER_NAME)",
  },
  {
    name: "syslog-ng",
    kind: "collector",
    repository: "balabit/syslog-ng",
    tag: "3.38.1",
    digest: null,
    version: "3.38.1",
    // the syslog() source of infra/render/syslog-ng.ts (RFC 5424, RFC 6587 octet counting), the `syslog` generator's target
    ports: [{ port: 5514, role: "data", protocol: "tcp", scheme: "syslog" }],
    // the Debian build's localstatedir: persist file, control socket (syslog-ng-ctl stats -c .../syslog-ng.ctl), disk buffer
    dataDir: "/var/lib/syslog-ng",
    env: {},
    versionCommand: ["syslog-ng", "--version"],
    todo: "sql() (libdbi + libdbd-pgsql) and http() are read from the image's published Dockerfile and Debian packaging, not checked in a pulled image (no Docker engine here)",
  },
  {
    name: "loadgen",
    kind: "platform",
    repository: "node",
    tag: "20.18.0-bookworm-slim",
    digest: null,
    version: "20.18.0",
    ports: [],
    dataDir: "/var/lib/ingestbench",
    env: {},
    // the harness execs the generator inside; the container only has to stay up
    command: ["sleep", "infinity"],
    versionCommand: ["node", "--version"],
  },
  {
    name: "shaper",
    kind: "platform",
    repository: "nicolaka/netshoot",
    tag: "v0.13",
    digest: null,
    version: "0.13",
    ports: [],
    dataDir: "/tmp",
    env: {},
    versionCommand: ["tc", "-V"],
  },
];

/** The catalog by name. */
export const catalog: Readonly<Record<string, CatalogImage>> = Object.freeze(Object.fromEntries(entries.map((e) => [e.name, e])));

/** Names of the components a host may run (sinks and collectors; `loadgen` and `shaper` are the platform's own images). */
export const deployableComponents: readonly string[] = entries.filter((e) => e.kind !== "platform").map((e) => e.name);

/** The catalog entry, or an Error listing the known names. */
export function catalogEntry(name: string): CatalogImage {
  const e = catalog[name];
  if (!e) throw new Error(`no component "${name}" in the catalog; known: ${Object.keys(catalog).join(", ")}`);
  return e;
}

