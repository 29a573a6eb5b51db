/**
 * A LocalHost for tests: no cgroup, no namespace. Spawns directly on this machine (as another user through
 * `setpriv --reuid U --regid U --init-groups` when options.user is set); address = controlAddress = 127.0.0.1;
 * dataDir is a fresh mkdtemp directory owned by `dataOwner` (default "postgres").
 * cleanup() SIGKILLs every process it spawned that is still alive and removes dataDir; it never throws.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { LocalHost, SpawnOptions } from "../../core/hosts.ts";
import { embeddedPostgres, postgres, type PostgresConfig } from "../../plugins/sinks/postgres/component.ts";
import type { RunningComponent } from "../../core/component.ts";

export interface DirectHost extends LocalHost {
  /** every process spawned so far */
  readonly children: ChildProcess[];
  cleanup(): Promise<void>;
}

function ids(user: string): { uid: number; gid: number } {
  for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
    const p = line.split(":");
    if (p[0] === user) return { uid: Number(p[2]), gid: Number(p[3]) };
  }
  throw new Error(`no user ${user}`);
}

/** Create a direct host named `name` whose dataDir is owned by `dataOwner`. */
export async function createDirectHost(name = "sink", dataOwner = "postgres"): Promise<DirectHost> {
  const dataDir = await mkdtemp(join(tmpdir(), `ib-test-${name}-`));
  const { uid, gid } = ids(dataOwner);
  await chown(dataDir, uid, gid);
  const children: ChildProcess[] = [];
  return {
    name,
    address: "127.0.0.1",
    controlAddress: "127.0.0.1",
    cgroup: { version: "v2", dirs: {} },
    dataDir,
    children,
    spawn(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
      const [cmd, argv] = options.user
        ? ["setpriv", ["--reuid", options.user, "--regid", options.user, "--init-groups", command, ...args]]
        : [command, args];
      const child = spawn(cmd, argv, {
        env: { ...process.env, ...options.env },
        cwd: options.cwd,
        stdio: options.stdio ?? ["ignore", "pipe", "pipe"],
      });
      child.on("error", () => undefined); // surfaced to callers through their own listeners/exit codes
      children.push(child);
      return child;
    },
    async cleanup(): Promise<void> {
      for (const c of children) {
        if (c.exitCode === null && c.signalCode === null) {
          const done = new Promise((r) => c.once("exit", r));
          c.kill("SIGKILL");
          await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
        }
      }
      await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}

/** A PostgreSQL started by the "postgres" component on a direct host, for tests. */
export interface TestPostgres {
  host: DirectHost;
  pg: RunningComponent;
  /** stop the server and remove everything; never throws */
  cleanup(): Promise<void>;
}

/** Start the installed embedded PostgreSQL on 127.0.0.1:`port` (use a port unique to the test file). */
export async function startTestPostgres(
  port: number,
  extra: Partial<PostgresConfig> = {},
): Promise<TestPostgres> {
  const host = await createDirectHost("sink");
  try {
    const version = embeddedPostgres().version;
    const pg = await postgres.startLocal(host, { version, port, ...extra });
    return {
      host,
      pg,
      async cleanup() {
        await pg.stop().catch(() => undefined);
        await host.cleanup();
      },
    };
  } catch (err) {
    await host.cleanup();
    throw err;
  }
}

/**
 * startTestPostgres and a connected node-postgres client to it (user and database postgres); `cleanup` ends the
 * client, then the server.
 */
export async function startTestPostgresWithClient(
  port: number,
): Promise<TestPostgres & { client: pg.Client }> {
  const server = await startTestPostgres(port);
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  try {
    await client.connect();
  } catch (err) {
    await server.cleanup();
    throw err;
  }
  return {
    ...server,
    client,
    cleanup: async () => {
      await client.end().catch(() => undefined);
      await server.cleanup();
    },
  };
}
