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
  // images/debian/postgres: Debian's postgresql-<major>; its entrypoint (entrypoint.sh) reads the same PGDATA and
  // POSTGRES_HOST_AUTH_METHOD, and links `postgres` onto PATH for the version command
  debian: [
    { repository: "ingestbench/debian-postgres", tag: "15", version: "15", build: "postgres-15", about: "bookworm's postgresql-15, initialised by images/debian/postgres/entrypoint.sh" },
    { repository: "ingestbench/debian-postgres", tag: "17", version: "17", build: "postgres-17", about: "trixie's postgresql-17, initialised by images/debian/postgres/entrypoint.sh" },
  ],
};
