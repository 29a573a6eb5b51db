/** The container platforms' image of syslog-ng (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
  name: "syslog-ng",
  kind: "collector",
  repository: "balabit/syslog-ng",
  tag: "3.38.1",
  digest: null,
  version: "3.38.1",
  // the syslog() source of plugins/collectors/syslog-ng/render.ts (RFC 5424, RFC 6587 octet counting), the `syslog` generator's target
  ports: [{ port: 5514, role: "data", protocol: "tcp", scheme: "syslog" }],
  // the Debian build's localstatedir: persist file, control socket (syslog-ng-ctl stats -c .../syslog-ng.ctl), disk buffer
  dataDir: "/var/lib/syslog-ng",
  env: {},
  versionCommand: ["syslog-ng", "--version"],
  // images/debian/syslog-ng: entrypoint `syslog-ng -F` as the upstream image's, syslog-ng-ctl on PATH
  debian: [
    {
      repository: "ingestbench/debian-syslog-ng",
      tag: "3.38",
      version: "3.38",
      build: "syslog-ng-3.38",
      about: "bookworm's syslog-ng-core 3.38.1 with -mod-sql, -mod-http and libdbd-pgsql",
    },
    {
      repository: "ingestbench/debian-syslog-ng",
      tag: "4.8",
      version: "4.8",
      build: "syslog-ng-4.8",
      about:
        "trixie's syslog-ng-core 4.8.1 with -mod-sql, -mod-http and libdbd-pgsql; reads the rendered `@version: 3.38` config in compatibility mode",
    },
  ],
  todo: "sql() (libdbi + libdbd-pgsql) and http() are read from the image's published Dockerfile and Debian packaging, not checked in a pulled image (no Docker engine here)",
};
