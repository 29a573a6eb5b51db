/** The container platforms' image of postgres (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
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
};
