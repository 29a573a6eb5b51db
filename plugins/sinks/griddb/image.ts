/** The container platforms' image of griddb (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
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
  // read by images/griddb-webapi/start.sh: the cluster name is the sink param `cluster`'s default (plugins/sinks/griddb/schema.ts)
  env: { GRIDDB_CLUSTER_NAME: "myCluster", GRIDDB_USERNAME: "admin" },
  // no default password: the stack's Pulumi config secret ingestbench:griddbPassword (or INGESTBENCH_GRIDDB_PASSWORD)
  secretEnv: { GRIDDB_PASSWORD: "griddb" },
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
};
