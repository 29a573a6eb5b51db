/**
 * The container platforms' image of the OpenSearch sink: opensearchproject/opensearch at the pinned 2.x release,
 * one node, the security plugin off, nothing but the server running in the container.
 *
 * Environment, as the image's entrypoint reads it (opensearch-project/opensearch-build,
 * docker/release/config/opensearch/opensearch-docker-entrypoint-2.x.sh; OpenSearch documentation, "Installing
 * OpenSearch → Docker"):
 * - `discovery.type=single-node`: every variable named like a setting (two dot-separated lowercase words) becomes
 *   `-E<name>=<value>`; a single-node cluster elects itself and skips the production bootstrap checks.
 * - `DISABLE_INSTALL_DEMO_CONFIG=true`: the entrypoint otherwise runs the security plugin's
 *   install_demo_configuration.sh, which from 2.12.0 on quits (and the container with it, `|| exit 1`) without
 *   `OPENSEARCH_INITIAL_ADMIN_PASSWORD`. That check comes before, and independently of, `DISABLE_SECURITY_PLUGIN`, so
 *   with the demo install off no admin password is needed; none is set.
 * - `DISABLE_SECURITY_PLUGIN=true`: starts the node with `-Eplugins.security.disabled=true` (plain HTTP, no auth),
 *   as the Elasticsearch sink runs with `xpack.security.enabled=false`.
 * - `DISABLE_PERFORMANCE_ANALYZER_AGENT_CLI=true`: the entrypoint otherwise starts the Performance Analyzer agent, a
 *   second JVM, beside the server, inside the sink's CPU and memory caps; Elasticsearch runs no such process.
 * - `OPENSEARCH_JAVA_OPTS`: the heap, `{heapMiB}` replaced per host from the memory cap (core/catalog.ts heapMiB), as
 *   the Elasticsearch entry's ES_JAVA_OPTS; the entrypoint prepends its cgroup override to it.
 *
 * `versionCommand`: `opensearch --version` (bin/ is on the image's PATH: docker/release/dockerfiles/
 * opensearch.al2023.dockerfile) prints "Version: 2.19.6, Build: tar/<hash>/<date>, JVM: <jdk>"
 * (OpenSearch's server/src/main/java/org/opensearch/bootstrap/OpenSearch.java); its first x.y.z is the release.
 */
import type { CatalogImage } from "../../../core/catalog.ts";
import { OPENSEARCH_VERSION } from "./schema.ts";

export const opensearchImage: CatalogImage = {
  name: "opensearch",
  kind: "sink",
  repository: "opensearchproject/opensearch",
  tag: OPENSEARCH_VERSION,
  digest: null,
  version: OPENSEARCH_VERSION,
  // 9300 (transport) and 9600 (Performance Analyzer) are not used by a single node driven over REST
  ports: [{ port: 9200, role: "data", protocol: "tcp", scheme: "http" }],
  dataDir: "/usr/share/opensearch/data",
  env: {
    "discovery.type": "single-node",
    DISABLE_INSTALL_DEMO_CONFIG: "true",
    DISABLE_SECURITY_PLUGIN: "true",
    DISABLE_PERFORMANCE_ANALYZER_AGENT_CLI: "true",
    OPENSEARCH_JAVA_OPTS: "-Xms{heapMiB}m -Xmx{heapMiB}m",
  },
  heapFromMemory: true,
  versionCommand: ["opensearch", "--version"],
  metrics: {
    path: "/_nodes/stats/indices,jvm,thread_pool",
    format: "json",
    about:
      "indexing.index_total, merges.current, refresh time, thread_pool.write.rejected, JVM heap (the nodes stats API OpenSearch kept from Elasticsearch 7.10)",
  },
  todo: "not pulled here (no image registry is reachable from this machine): the tag opensearchproject/opensearch:2.19.6 follows the pin (the local platform runs 2.19.6 from Maven Central) and is unchecked, its digest unresolved",
};
