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
  env: { PGDATA: "/var/lib/postgresql/data/pgdata" },
  // no default password: the stack's Pulumi config secret ingestbench:postgresPassword (or INGESTBENCH_POSTGRES_PASSWORD)
  // becomes the `postgres` role's password; both entrypoints then require it of host connections with scram-sha-256
  // (the official image's POSTGRES_HOST_AUTH_METHOD default, and images/debian/postgres/entrypoint.sh's), never trust
  secretEnv: { POSTGRES_PASSWORD: "postgres" },
  versionCommand: ["postgres", "--version"],
  // images/debian/postgres: Debian's postgresql-<major>; its entrypoint (entrypoint.sh) reads the same PGDATA,
  // POSTGRES_PASSWORD and POSTGRES_HOST_AUTH_METHOD (default scram-sha-256), and links `postgres` onto PATH for the version command
  debian: [
    {
      repository: "ingestbench/debian-postgres",
      tag: "15",
      version: "15",
      build: "postgres-15",
      about: "bookworm's postgresql-15, initialised by images/debian/postgres/entrypoint.sh",
    },
    {
      repository: "ingestbench/debian-postgres",
      tag: "17",
      version: "17",
      build: "postgres-17",
      about: "trixie's postgresql-17, initialised by images/debian/postgres/entrypoint.sh",
    },
  ],
};
