import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ProvisioningError, VerificationError } from "../../../core/errors.ts";
import { embeddedPostgres, matchesPostgresPin, postgres } from "./component.ts";
import { TEMPLATE_KIND } from "./template.ts";
import type { RunningComponent } from "../../../core/component.ts";
import { createDirectHost, type DirectHost } from "../../../test/helpers/direct-host.ts";

const PORT = 5442;
const hosts: DirectHost[] = [];
const servers: RunningComponent[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const h of hosts) await h.cleanup();
});

async function newHost(): Promise<DirectHost> {
  const h = await createDirectHost("sink");
  hosts.push(h);
  return h;
}

/** pids whose parent is `ppid` (from /proc/<pid>/stat) */
function childPids(ppid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === ppid) out.push(Number(d));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** the program a child runs (after setpriv … --): "initdb" or "postgres", or "cp" (the template's copies) */
const program = (c: ChildProcess): string | undefined =>
  c.spawnargs.includes("cp")
    ? "cp"
    : c.spawnargs
        .filter((a) => a.startsWith("/"))
        .map((a) => path.basename(a))
        .find((a) => a === "initdb" || a === "postgres");

describe("postgres component", () => {
  it("matches a package pin to the server's major.minor", () => {
    expect(matchesPostgresPin("18.4.0-beta.17", "18.4")).toBe(true);
    expect(matchesPostgresPin("18.4.0-beta.17", "18.4 (Debian 18.4-1.pgdg120+1)")).toBe(true);
    expect(matchesPostgresPin("18.4.0-beta.17", "18.3")).toBe(false);
    expect(matchesPostgresPin("18.4.0", "18.40")).toBe(false);
    expect(matchesPostgresPin("18.4.0", "18beta1")).toBe(false);
    expect(postgres.matchesPin("18.4.0-beta.17", "18.4")).toBe(true);
  });

  it("starts, reports 18.4, accepts connections, and stop leaves no process", async () => {
    const host = await newHost();
    const version = embeddedPostgres().version;
    expect(version).toBe("18.4.0-beta.17");
    const server = await postgres.startLocal(host, { version, port: PORT });
    servers.push(server);
    expect(server.running).toBe("18.4");
    expect(server.pinned).toBe(version);
    expect(server.control).toEqual({ host: "127.0.0.1", port: PORT });
    expect(server.params).toEqual({ database: "postgres", user: "postgres" });

    const client = new pg.Client({
      host: server.control.host,
      port: PORT,
      user: "postgres",
      database: "postgres",
    });
    await client.connect();
    const r = await client.query<{ fsync: string }>("SHOW fsync");
    expect(r.rows[0]!.fsync).toBe("on");
    const who = await client.query<{ u: string }>("SELECT current_user AS u");
    expect(who.rows[0]!.u).toBe("postgres");
    await client.end();

    const postmaster = host.children.at(-1)!;
    const pid = postmaster.pid!;
    const backends = childPids(pid);
    expect(backends.length).toBeGreaterThan(0); // checkpointer, walwriter, ...
    await server.stop();
    await server.stop(); // idempotent
    expect(postmaster.exitCode !== null || postmaster.signalCode !== null).toBe(true);
    for (const p of [pid, ...backends]) expect(existsSync(`/proc/${p}`), `pid ${p} still exists`).toBe(false);
    await expect(
      (async () => {
        const c = new pg.Client({
          host: "127.0.0.1",
          port: PORT,
          user: "postgres",
          connectionTimeoutMillis: 2000,
        });
        c.on("error", () => undefined);
        try {
          await c.connect();
        } finally {
          await c.end().catch(() => undefined);
        }
      })(),
    ).rejects.toThrow();
  });

  it("copies initdb's output from the template after the first start (no initdb then), and discard() ends with an immediate shutdown", async () => {
    const cache = mkdtempSync(path.join(os.tmpdir(), "ib-pg-template-"));
    const saved = process.env.INGESTBENCH_CACHE_DIR;
    process.env.INGESTBENCH_CACHE_DIR = cache;
    try {
      const version = embeddedPostgres().version;
      const first = await newHost();
      const a = await postgres.startLocal(first, { version, port: PORT + 300 });
      servers.push(a);
      // the template is saved by a copy on the host (in its cgroup: it ends with the run)
      expect(first.children.map(program)).toEqual(["initdb", "cp", "postgres"]);
      const entries = readdirSync(path.join(cache, TEMPLATE_KIND));
      expect(entries).toHaveLength(1); // made before the server ever ran on the cluster:
      expect(existsSync(path.join(cache, TEMPLATE_KIND, entries[0]!, "pgdata", "postmaster.pid"))).toBe(
        false,
      );
      await a.discard!();

      const second = await newHost();
      const b = await postgres.startLocal(second, { version, port: PORT + 300 });
      servers.push(b);
      expect(second.children.map(program)).toEqual(["cp", "postgres"]); // no initdb: the template copied on the host
      const client = new pg.Client({
        host: b.control.host,
        port: PORT + 300,
        user: "postgres",
        database: "postgres",
      });
      await client.connect();
      const r = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_database");
      await client.end();
      expect(Number(r.rows[0]!.n)).toBe(3); // postgres, template0, template1: a whole cluster
      await b.discard!();
      expect(readFileSync(path.join(second.dataDir, "postgres.log"), "utf8")).toMatch(
        /received immediate shutdown request/,
      );
      expect(readFileSync(path.join(second.dataDir, "postgres.log"), "utf8")).not.toMatch(
        /shutdown checkpoint|checkpoint starting: shutdown/,
      );
    } finally {
      if (saved === undefined) delete process.env.INGESTBENCH_CACHE_DIR;
      else process.env.INGESTBENCH_CACHE_DIR = saved;
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it("refuses a pin that differs from the installed package, naming both", async () => {
    const host = await newHost();
    const err = await postgres
      .startLocal(host, { version: "18.3.0-beta.1", port: PORT + 100 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerificationError);
    expect((err as Error).message).toContain("18.3.0-beta.1");
    expect((err as Error).message).toContain(embeddedPostgres().version);
    expect(host.children).toHaveLength(0);
  });

  it("fails startup with the server's log tail", async () => {
    const host = await newHost();
    const err = await postgres
      .startLocal(host, {
        version: embeddedPostgres().version,
        port: PORT + 200,
        settings: { shared_buffers: "not-a-size" },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvisioningError);
    expect((err as Error).message).toMatch(/shared_buffers/);
    for (const c of host.children) expect(c.exitCode !== null || c.signalCode !== null).toBe(true);
  });
});
