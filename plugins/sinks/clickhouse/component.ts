/**
 * Sink component "clickhouse": the real ClickHouse server of Debian's clickhouse-server package (18.16.1), pinned by
 * the version the running server reports (`SELECT version()`).
 *
 * startLocal: render a minimal config.xml and users.xml into <dataDir>/clickhouse/etc (data, tmp and user_files
 * paths under <dataDir>/clickhouse, HTTP port 8123 and native TCP port 9000 by default, listen_host `::` and
 * `0.0.0.0` with listen_try (whichever the namespace supports; with a dual-stack `::` the second bind fails with
 * "Address already in use", which the server logs and ignores), no interserver port, timezone UTC, log to the
 * console, copied to <dataDir>/clickhouse-server.log), run `clickhouse-server --config-file=…` through host.spawn as
 * the `clickhouse` account when it exists (else `nobody`; as a non-root user, as that user), wait until
 * `GET /ping` on controlAddress answers "Ok." (polled every 50 ms, ≤ 60 s), read `SELECT version()` and compare it
 * with the pin. stop(): SIGTERM, ≤ 30 s, then SIGKILL; discard() (teardown, the data directory removed next): SIGKILL
 * at once (18.16 runs no watchdog process: the server is the one process).
 *
 * Settings use ClickHouse's own names, in the section ClickHouse reads them from: `server` (top-level elements of
 * config.xml, e.g. mark_cache_size, max_concurrent_queries), `merge_tree` (the config.xml <merge_tree> section:
 * parts_to_delay_insert, parts_to_throw_insert, ...) and `profile` (the default profile of users.xml: query-level
 * settings such as max_insert_block_size, background_pool_size, max_threads). The server exits
 * at startup with a bad server setting or an unknown profile setting (the ProvisioningError then carries its log
 * tail); unknown merge_tree names, with which 18.16 starts and which it reports only when MergeTree settings are
 * first used, are checked against system.merge_tree_settings once the server is up (ConfigurationError).
 */
import { existsSync, readFileSync } from "node:fs";
import { chown, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import {
  ConfigurationError,
  IngestbenchError,
  ProvisioningError,
  VerificationError,
} from "../../../core/errors.ts";
import { sha256Hex, sinkPassword, writeSecretFile } from "../../../core/secrets.ts";
import { clickhouseAuthRefusal, clickhouseHttpAuth } from "./auth.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import { accountFor, exited, startServer, waitReady, type ServerAccount } from "../../../core/process.ts";
import type { ComponentFactory, RunningComponent } from "../../../core/component.ts";

/** The server binary of Debian's clickhouse-server package. */
export const CLICKHOUSE_SERVER_BIN = "/usr/sbin/clickhouse-server";
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;

const settingName = z
  .string()
  .regex(/^[a-z_][a-z0-9_]*$/, "a ClickHouse setting name (lowercase, digits, _)");
const settingValue = z.union([z.string(), z.number(), z.boolean()]);
const settingsMap = z.record(settingName, settingValue);

/** Scenario block `sink.clickhouse`. */
export const clickhouseSchema = z
  .object({
    /** the version the server reports, e.g. "18.16.1" (Debian's clickhouse-server 18.16.1+ds) */
    version: z.string().regex(/^\d+(\.\d+)*$/, "a ClickHouse version such as 18.16.1"),
    settings: z
      .object({
        /** top-level config.xml elements, e.g. { mark_cache_size: 268435456 } */
        server: settingsMap.optional(),
        /** config.xml <merge_tree>, e.g. { parts_to_throw_insert: 300 } */
        merge_tree: settingsMap.optional(),
        /** users.xml default profile, e.g. { max_insert_block_size: 1048576 } */
        profile: settingsMap.optional(),
      })
      .strict()
      .optional(),
    /** HTTP interface port; default 8123 */
    httpPort: z.number().int().min(1).max(65535).default(8123),
    /** native TCP port; default 9000 */
    tcpPort: z.number().int().min(1).max(65535).default(9000),
  })
  .strict();

export type ClickHouseConfig = z.infer<typeof clickhouseSchema>;

/** Server-level elements the component writes itself; a setting may not replace them. */
const RESERVED_SERVER_SETTINGS = new Set([
  "path",
  "tmp_path",
  "user_files_path",
  "format_schema_path",
  "users_config",
  "http_port",
  "tcp_port",
  "https_port",
  "tcp_port_secure",
  "interserver_http_port",
  "listen_host",
  "listen_try",
  "logger",
  "default_profile",
  "default_database",
  "merge_tree",
  "profiles",
  "users",
  "quotas",
  "zookeeper",
  "remote_servers",
]);

/**
 * Server settings 18.16 needs and the package's config.xml sets (the server refuses to start without
 * mark_cache_size); `settings.server` overrides them. Caches are allocated on demand.
 */
export const DEFAULT_SERVER_SETTINGS: Readonly<Record<string, number>> = {
  mark_cache_size: 5368709120,
  uncompressed_cache_size: 8589934592,
  max_concurrent_queries: 100,
  keep_alive_timeout: 3,
};

/** "18.16.1" → [18, 16, 1]; null when not dotted digits. */
function versionParts(v: string): number[] | null {
  const m = /^\s*(\d+(?:\.\d+)*)/.exec(v);
  return m ? m[1]!.split(".").map(Number) : null;
}

/** The pin's parts are a prefix of the running version's: "18.16.1" matches "18.16.1", "18.16" matches "18.16.1". */
export function matchesClickHousePin(pinned: string, running: string): boolean {
  const p = versionParts(pinned);
  const r = versionParts(running);
  return p !== null && r !== null && p.length <= r.length && p.every((x, i) => x === r[i]);
}

/** The OS account the server runs as; `user` undefined means the current user. */
export type ClickHouseAccount = ServerAccount;

/** As root: `clickhouse` when the account exists (the package creates it), else `nobody`; otherwise the current user. */
export function clickhouseAccount(
  passwd: string = readFileSync("/etc/passwd", "utf8"),
  uid: number = process.getuid?.() ?? 0,
): ClickHouseAccount {
  return accountFor(
    ["clickhouse", "nobody"],
    () =>
      new ProvisioningError(
        "E_CH_USER",
        `running as root, and neither a "clickhouse" nor a "nobody" account exists to run clickhouse-server as`,
      ),
    passwd,
    uid,
  );
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function xmlValue(v: string | number | boolean): string {
  return xmlEscape(typeof v === "boolean" ? (v ? "1" : "0") : String(v));
}

function elements(settings: Record<string, string | number | boolean> | undefined, indent: string): string {
  return Object.entries(settings ?? {})
    .map(([k, v]) => `${indent}<${k}>${xmlValue(v)}</${k}>\n`)
    .join("");
}

/** Directories of one server under `root` (= <dataDir>/clickhouse). */
export function clickhouseLayout(root: string): {
  etc: string;
  data: string;
  tmp: string;
  userFiles: string;
  formatSchemas: string;
} {
  return {
    etc: join(root, "etc"),
    data: join(root, "data"),
    tmp: join(root, "tmp"),
    userFiles: join(root, "user_files"),
    formatSchemas: join(root, "format_schemas"),
  };
}

/** The config.xml of a server rooted at `root` (paths end in "/", as ClickHouse expects). */
export function renderConfigXml(
  root: string,
  config: Pick<ClickHouseConfig, "httpPort" | "tcpPort" | "settings">,
): string {
  const l = clickhouseLayout(root);
  return `<?xml version="1.0"?>
<!-- rendered by ingestbench (plugins/sinks/clickhouse/component.ts) -->
<yandex>
  <logger>
    <level>information</level>
    <console>1</console>
  </logger>
  <http_port>${config.httpPort}</http_port>
  <tcp_port>${config.tcpPort}</tcp_port>
  <listen_host>::</listen_host>
  <listen_host>0.0.0.0</listen_host>
  <listen_try>1</listen_try>
  <path>${xmlEscape(l.data)}/</path>
  <tmp_path>${xmlEscape(l.tmp)}/</tmp_path>
  <user_files_path>${xmlEscape(l.userFiles)}/</user_files_path>
  <format_schema_path>${xmlEscape(l.formatSchemas)}/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
${elements({ ...DEFAULT_SERVER_SETTINGS, ...config.settings?.server }, "  ")}  <merge_tree>
${elements(config.settings?.merge_tree, "    ")}  </merge_tree>
</yandex>
`;
}

/**
 * The users.xml: user `default` from any address (benchmark only, inside private namespaces); without a password, or,
 * when `password` is given (INGESTBENCH_CLICKHOUSE_PASSWORD), with `<password_sha256_hex>` (the lowercase hex
 * SHA-256 of the password: ClickHouse docs, "Settings → Users", 18.16 included), so the file holds no password.
 */
export function renderUsersXml(config: Pick<ClickHouseConfig, "settings">, password?: string): string {
  return `<?xml version="1.0"?>
<!-- rendered by ingestbench (plugins/sinks/clickhouse/component.ts) -->
<yandex>
  <profiles>
    <default>
${elements(config.settings?.profile, "      ")}    </default>
  </profiles>
  <users>
    <default>
      ${password !== undefined ? `<password_sha256_hex>${sha256Hex(password)}</password_sha256_hex>` : "<password></password>"}
      <networks><ip>::/0</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default></default>
  </quotas>
</yandex>
`;
}

/** One HTTP GET with a timeout (and the harness's ClickHouse credentials: ./auth.ts); resolves with status and body text. */
async function httpGet(url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  const r = await fetch(url, {
    headers: clickhouseHttpAuth({}).headers,
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: r.status, body: await r.text() };
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Component "clickhouse" (kind sink): params { database: "default", user: "default" }; data/control on the HTTP port. */
export const clickhouse: ComponentFactory<ClickHouseConfig> = {
  name: "clickhouse",
  kind: "sink",
  matchesPin: matchesClickHousePin,

  /**
   * Start ClickHouse on `host`. Errors: ConfigurationError (bad config), ProvisioningError (not installed, server
   * exited or not ready in 60 s: the message carries the server's log tail), VerificationError (the running version
   * does not match the pin; names both). On any failure the server is stopped before throwing.
   */
  async startLocal(
    host: LocalHost,
    rawConfig: ClickHouseConfig,
    signal?: AbortSignal,
  ): Promise<RunningComponent> {
    const parsed = clickhouseSchema.safeParse(rawConfig);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ConfigurationError(
        "E_SINK_CONFIG",
        `sink.clickhouse.${issue.path.join(".")}: ${issue.message}`,
        { field: `sink.clickhouse.${issue.path.join(".")}`, cause: parsed.error },
      );
    }
    const config = parsed.data;
    for (const k of Object.keys(config.settings?.server ?? {})) {
      if (RESERVED_SERVER_SETTINGS.has(k)) {
        throw new ConfigurationError(
          "E_SINK_CONFIG",
          `sink.clickhouse.settings.server.${k}: set by ingestbench itself; it cannot be overridden`,
          { field: `sink.clickhouse.settings.server.${k}` },
        );
      }
    }
    if (!existsSync(CLICKHOUSE_SERVER_BIN)) {
      throw new ProvisioningError(
        "E_CH_NOT_INSTALLED",
        `${CLICKHOUSE_SERVER_BIN} not found: install the Debian packages clickhouse-server and clickhouse-client`,
      );
    }
    const account = clickhouseAccount();
    const root = join(host.dataDir, "clickhouse");
    const l = clickhouseLayout(root);
    for (const dir of [root, l.etc, l.data, l.tmp, l.userFiles, l.formatSchemas]) {
      await mkdir(dir, { recursive: true, mode: 0o750 });
      await chown(dir, account.uid, account.gid);
    }
    const configFile = join(l.etc, "config.xml");
    await writeFile(configFile, renderConfigXml(root, config));
    // the password's SHA-256 only (renderUsersXml); 0600 all the same: the hash is as good as the password to guess against
    writeSecretFile(join(l.etc, "users.xml"), renderUsersXml(config, sinkPassword("clickhouse")));
    for (const f of ["config.xml", "users.xml"]) await chown(join(l.etc, f), account.uid, account.gid);

    const server = startServer(host, CLICKHOUSE_SERVER_BIN, [`--config-file=${configFile}`], {
      user: account.user,
      env: { LC_ALL: "C", LANG: "C", TZ: "UTC" },
      logFile: join(host.dataDir, "clickhouse-server.log"),
      stop: { signal: "SIGTERM", graceMs: STOP_GRACE_MS, discardSignal: "SIGKILL" }, // graceful: finish queries, flush, exit
    });
    const { child, log, stop, discard, fail } = server;

    const base = `http://${urlHost(host.controlAddress)}:${config.httpPort}`;
    await waitReady(server, {
      signal,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 50,
      probe: async () => {
        const r = await httpGet(`${base}/ping`, 2000);
        if (r.status === 200 && r.body.startsWith("Ok.")) return true;
        throw new Error(`HTTP ${r.status}: ${r.body.trim().slice(0, 200)}`);
      },
      errors: {
        aborted: () => new ProvisioningError("E_CH_ABORTED", "aborted while waiting for ClickHouse to start"),
        spawnFailed: (e) =>
          new ProvisioningError("E_CH_START", `cannot start ${CLICKHOUSE_SERVER_BIN}: ${e.message}`, {
            cause: e,
          }),
        exited: (code) =>
          new ProvisioningError(
            "E_CH_START",
            `ClickHouse exited during startup (code ${code}); log tail:\n${log.text()}`,
          ),
        timedOut: (lastError) =>
          new ProvisioningError(
            "E_CH_READY",
            `ClickHouse not ready on ${base}/ping after ${READY_TIMEOUT_MS / 1000} s (last error: ${lastError}); log tail:\n${log.text()}`,
          ),
      },
    });

    let running: string;
    try {
      const r = await httpGet(`${base}/?query=${encodeURIComponent("SELECT version()")}`, 10_000);
      const refused = clickhouseAuthRefusal(r.status, r.body, {});
      if (refused) throw new IngestbenchError("E_SINK_AUTH", refused);
      if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.body.trim().slice(0, 300)}`);
      running = r.body.trim();
    } catch (err) {
      if (err instanceof IngestbenchError) return fail(err);
      return fail(
        new ProvisioningError(
          "E_CH_VERSION",
          `cannot read ClickHouse's version (SELECT version()): ${(err as Error).message}`,
          { cause: err },
        ),
      );
    }
    if (exited(child)) {
      // whatever answered was not this server (another one on the same port?)
      return fail(
        new ProvisioningError(
          "E_CH_START",
          `ClickHouse exited during startup (code ${child.exitCode ?? child.signalCode}), yet ${base} answered; log tail:\n${log.text()}`,
        ),
      );
    }
    if (!matchesClickHousePin(config.version, running)) {
      return fail(
        new VerificationError(
          "E_VERSION",
          `ClickHouse reports version ${running}, but sink.clickhouse.version pins ${config.version}`,
        ),
      );
    }

    // 18.16 starts with an unknown <merge_tree> name and reports it only when the settings are first used (an unknown
    // profile name stops it at startup): check the names against the server's own lists
    for (const [section, table] of [
      ["merge_tree", "system.merge_tree_settings"],
      ["profile", "system.settings"],
    ] as const) {
      const names = Object.keys(config.settings?.[section] ?? {});
      if (names.length === 0) continue;
      let known: Set<string>;
      try {
        const sql = `SELECT name FROM ${table} WHERE name IN (${names.map((n) => `'${n}'`).join(", ")})`;
        const r = await httpGet(`${base}/?query=${encodeURIComponent(sql)}`, 10_000);
        const bad = /Unknown (?:MergeTree )?setting (\w+)/.exec(r.body);
        if (r.status !== 200 && bad) {
          // 18.16 reports an unknown <merge_tree> name only when the settings are first used
          return fail(
            new ConfigurationError(
              "E_SINK_CONFIG",
              `sink.clickhouse.settings.${section}: ClickHouse ${running} has no setting ${bad[1]}: ${r.body.trim().slice(0, 300)}`,
              { field: `sink.clickhouse.settings.${section}.${bad[1]}` },
            ),
          );
        }
        if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.body.trim().slice(0, 300)}`);
        known = new Set(r.body.split("\n").filter(Boolean));
      } catch (err) {
        return fail(
          new ProvisioningError("E_CH_SETTINGS", `cannot read ${table}: ${(err as Error).message}`, {
            cause: err,
          }),
        );
      }
      const unknown = names.filter((n) => !known.has(n));
      if (unknown.length > 0) {
        return fail(
          new ConfigurationError(
            "E_SINK_CONFIG",
            `sink.clickhouse.settings.${section}: ClickHouse ${running} has no setting ${unknown.join(", ")} (see ${table})`,
            { field: `sink.clickhouse.settings.${section}.${unknown[0]}` },
          ),
        );
      }
    }

    return {
      name: "clickhouse",
      pinned: config.version,
      running,
      data: { host: host.address, port: config.httpPort },
      control: { host: host.controlAddress, port: config.httpPort },
      params: { database: "default", user: "default" },
      ...(child.pid !== undefined ? { pid: child.pid } : {}),
      stop,
      discard,
    };
  },
};
