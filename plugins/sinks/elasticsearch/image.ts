/** The container platforms' image of elasticsearch (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
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
  metrics: {
    path: "/_nodes/stats/indices,jvm,thread_pool",
    format: "json",
    about: "indexing.index_total, merges.current, refresh time, thread_pool.write.rejected, JVM heap",
  },
};
