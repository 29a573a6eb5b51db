/**
 * Collector "syslog-ng" on the container platforms: the local component's config (plugins/collectors/syslog-ng/component.ts
 * renderSyslogNgConfig: syslog() source over TCP, sql() into PostgreSQL or http() into ClickHouse) rendered with the
 * container's paths, under the same scenario schema (`collector.syslog-ng`: batch-lines, batch-bytes, batch-timeout,
 * workers, retries, time-reopen, log-fifo-size, disk-buffer, port) and the same refusals (workers > 1 or
 * batch-bytes with sql()). One renderer, two platforms: only the paths differ.
 *
 * The image, balabit/syslog-ng:3.38.1, as its sources document it (syslog-ng/syslog-ng, docker/Dockerfile and
 * docker/README.md of the 3.x series; packaging/debian/control and rules):
 * - it reads /etc/syslog-ng/syslog-ng.conf ("mount your own config under /etc/syslog-ng/syslog-ng.conf"); the
 *   docker platform uploads the rendered text there;
 * - its entrypoint is `/usr/sbin/syslog-ng -F` (foreground), and the container command is appended to it: the
 *   command is syslogNgArgs (`-e --no-caps -f ... -R ... -p ... -c ...`); `--no-caps` because syslog-ng asks for
 *   capabilities Docker does not grant by default (the README's FAQ);
 * - state (persist file, control socket, disk buffer) goes to /var/lib/syslog-ng, the Debian build's
 *   localstatedir and the catalog's data directory (a volume, or a tmpfs on RAM-disk stacks);
 *   `docker exec <container> syslog-ng-ctl stats -c /var/lib/syslog-ng/syslog-ng.ctl` reads the claimed counts;
 * - modules: it installs the `syslog-ng` metapackage from the syslog-ng OSE APT repository plus `libdbd-pgsql`
 *   (with libdbd-mysql and libdbd-sqlite3). The metapackage Depends on syslog-ng-mod-sql (a "core module") and
 *   Recommends every other module, syslog-ng-mod-http included, which apt installs (no --no-install-recommends):
 *   the README says "installed with all of its modules". So sql() with the libdbi pgsql driver and http() are both
 *   there, and no sink is refused for a missing module. Read from the published sources, not from a pulled image
 *   (no Docker engine here).
 *
 * The source port must be the catalog's data port (5514), the one the container publishes and the generator is
 * pointed at; syslog-ng has no HTTP metrics endpoint (counters come over the control socket), so `listens` has no
 * metrics port.
 */
import { ConfigurationError } from "../../../core/errors.ts";
import {
  renderSyslogNgConfig,
  SYSLOG_NG_SINKS,
  syslogNgArgs,
  syslogNgPaths,
  syslogNgSchema,
  type SyslogNgConfig,
  type SyslogNgPaths,
} from "./component.ts";
import type { CollectorRenderer, RenderInput, RenderedConfig } from "../../../core/render.ts";
import { collectorAuth } from "../../../core/secrets.ts";

/** Where the balabit/syslog-ng image reads its config. */
export const SYSLOG_NG_CONFIG_FILE = "/etc/syslog-ng/syslog-ng.conf";
/** The image's state directory (Debian's --localstatedir, the catalog's dataDir). */
export const SYSLOG_NG_STATE_DIR = "/var/lib/syslog-ng";
/** The paths inside the container. */
export const SYSLOG_NG_CONTAINER_PATHS: Readonly<SyslogNgPaths> = Object.freeze(
  syslogNgPaths(SYSLOG_NG_STATE_DIR, SYSLOG_NG_CONFIG_FILE),
);
/** The data port the image publishes for syslog-ng (./image.ts), the schema's default `port`. */
export const SYSLOG_NG_DATA_PORT = 5514;

/**
 * Render syslog-ng.conf for the container and the command that makes the image's syslog-ng read it.
 * @throws ConfigurationError for a sink syslog-ng cannot write into, options its destination lacks in 3.38
 *         (renderSyslogNgConfig), or a `port` other than the published 5514
 */
export function renderSyslogNgContainer(input: RenderInput<SyslogNgConfig>): RenderedConfig {
  const { sink, fields, genBase } = input;
  // idle (the deploy-time config of a generator: none cell, RenderInput.idle): without example-msg-generator()
  const config: SyslogNgConfig = input.idle
    ? { ...input.config, "example-msg-generator": undefined }
    : input.config;
  if (config.port !== SYSLOG_NG_DATA_PORT) {
    throw new ConfigurationError(
      "E_COLLECTOR_CONFIG",
      `collector.syslog-ng.port: ${config.port} is not published on the container platforms; the syslog-ng container listens on the catalog's data port ${SYSLOG_NG_DATA_PORT}`,
      { field: "collector.syslog-ng.port" },
    );
  }
  // the password as syslog-ng's reference to the container's environment variable (`NAME`: "the environmental
  // variables of the host are automatically imported and can be used as global variables", syslog-ng OSE guide,
  // "Global and environmental variables"), never its value: the file is uploaded through Pulumi
  const auth = collectorAuth(sink.name, sink.params);
  const text = renderSyslogNgConfig({
    config,
    dir: SYSLOG_NG_STATE_DIR,
    sink: {
      name: sink.name,
      host: sink.host,
      port: sink.port,
      params: { ...sink.params, ...(auth ? { password: `\`${auth.variable}\`` } : {}) },
    },
    fields,
    genBase,
  });
  return {
    file: SYSLOG_NG_CONFIG_FILE,
    text,
    command: syslogNgArgs(SYSLOG_NG_CONTAINER_PATHS),
    listens: { data: config.port },
  };
}

export const syslogNgRenderer: CollectorRenderer<SyslogNgConfig> = {
  writesTo: SYSLOG_NG_SINKS,
  // the syslog() source takes RFC 5424 in RFC 6587 octet-counting frames over TCP: the `syslog` generator
  accepts: () => ["syslog"],
  render: renderSyslogNgContainer,
};
