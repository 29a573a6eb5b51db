/** The container platforms' image of clickhouse (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
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
  env: {},
  // no default password: the stack's Pulumi config secret ingestbench:clickhousePassword (or
  // INGESTBENCH_CLICKHOUSE_PASSWORD) is the `default` user's password. The official image's entrypoint writes it into
  // users.d with the default user open to every address (CLICKHOUSE_PASSWORD; docker-library clickhouse
  // entrypoint.sh); images/debian/clickhouse/entrypoint.sh writes its SHA-256 (password_sha256_hex) instead
  secretEnv: { CLICKHOUSE_PASSWORD: "clickhouse" },
  versionCommand: ["clickhouse-server", "--version"],
  metrics: {
    path: "/metrics",
    format: "prometheus",
    about:
      "ClickHouseMetrics_*, ClickHouseProfileEvents_InsertedRows, parts (ClickHouseAsyncMetrics_MaxPartCountForPartition)",
  },
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
  debian: [
    {
      repository: "ingestbench/debian-clickhouse",
      tag: "18.16",
      version: "18.16",
      build: "clickhouse-18.16",
      // `clickhouse-server --version` is "Unknown option" in 18.16: the package's version is what the server runs
      versionCommand: ["dpkg-query", "-W", "-f=${Version}\\n", "clickhouse-server"],
      // 18.16's config root is <yandex> (images/debian/clickhouse/listen.xml) and it has no <prometheus> setting:
      // no metrics port, no upload
      ports: [
        { port: 8123, role: "data", protocol: "tcp", scheme: "http" },
        { port: 9000, role: "control", protocol: "tcp", scheme: "clickhouse-native" },
      ],
      uploads: [],
      metrics: null,
      env: {},
      about:
        "bookworm's clickhouse-server 18.16.1: HTTP 8123 and native 9000 only, no Prometheus endpoint; user default with CLICKHOUSE_PASSWORD's SHA-256 (entrypoint.sh)",
    },
  ],
};
