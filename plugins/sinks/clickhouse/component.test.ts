// The real ClickHouse server of Debian's clickhouse-server 18.16.1 package, started by the component on a direct
// host (127.0.0.1, no cgroup or namespace).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError, ProvisioningError, VerificationError } from "../../../core/errors.ts";
import { clickhouse, clickhouseAccount, clickhouseSchema, matchesClickHousePin } from "./component.ts";
import type { RunningComponent } from "../../../core/component.ts";
import { childPids } from "../../../core/process.ts";
import { createDirectHost, type DirectHost } from "../../../test/helpers/direct-host.ts";

const HTTP_PORT = 18231;
const TCP_PORT = 19231;
const hosts: DirectHost[] = [];
const servers: RunningComponent[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const h of hosts) await h.cleanup();
});

async function newHost(): Promise<DirectHost> {
  const h = await createDirectHost("sink", "clickhouse");
  hosts.push(h);
  return h;
}

const alive = (pid: number): boolean =>
  existsSync(`/proc/${pid}`) && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

describe("clickhouse component", () => {
  it("matches a pin whose parts are a prefix of the running version", () => {
    expect(matchesClickHousePin("18.16.1", "18.16.1")).toBe(true);
    expect(matchesClickHousePin("18.16", "18.16.1")).toBe(true);
    expect(matchesClickHousePin("18.16.1", "18.16.10")).toBe(false);
    expect(matchesClickHousePin("18.16.2", "18.16.1")).toBe(false);
    expect(matchesClickHousePin("18.16.1.1", "18.16.1")).toBe(false);
    expect(clickhouse.matchesPin("18.16.1", "18.16.1")).toBe(true);
  });

  it("runs as the clickhouse account as root, else nobody", () => {
    expect(
      clickhouseAccount(
        "root:x:0:0::/root:/bin/sh\nclickhouse:x:102:105::/var/lib/clickhouse:/bin/false\nnobody:x:65534:65534::/:/bin/false\n",
        0,
      ),
    ).toEqual({ user: "clickhouse", uid: 102, gid: 105 });
    expect(clickhouseAccount("root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n", 0)).toEqual({
      user: "nobody",
      uid: 65534,
      gid: 65534,
    });
    expect(() => clickhouseAccount("root:x:0:0::/root:/bin/sh\n", 0)).toThrow(ProvisioningError);
  });

  it("starts the real server, reads back version 18.16.1, answers queries, and stop leaves no process", async () => {
    const host = await newHost();
    const server = await clickhouse.startLocal(
      host,
      clickhouseSchemaInput({
        httpPort: HTTP_PORT,
        tcpPort: TCP_PORT,
        settings: { merge_tree: { parts_to_throw_insert: 600 }, profile: { max_threads: 2 } },
      }),
    );
    servers.push(server);
    expect(server.running).toBe("18.16.1");
    expect(server.pinned).toBe("18.16.1");
    expect(server.control).toEqual({ host: "127.0.0.1", port: HTTP_PORT });
    expect(server.data).toEqual({ host: "127.0.0.1", port: HTTP_PORT });
    expect(server.params).toEqual({ database: "default", user: "default" });

    const q = async (sql: string): Promise<string> =>
      (await fetch(`http://127.0.0.1:${HTTP_PORT}/`, { method: "POST", body: sql })).text();
    // the settings reached the server, by ClickHouse's own names
    expect(
      (await q("SELECT value FROM system.merge_tree_settings WHERE name = 'parts_to_throw_insert'")).trim(),
    ).toBe("600");
    expect((await q("SELECT value FROM system.settings WHERE name = 'max_threads'")).trim()).toBe("2");
    expect((await q("SELECT timezone()")).trim()).toMatch(/^(Etc\/)?UTC$/);
    // data lives in the host's data directory, owned by the server's account
    expect(existsSync(join(host.dataDir, "clickhouse", "data", "metadata"))).toBe(true);
    expect(readFileSync(join(host.dataDir, "clickhouse-server.log"), "utf8")).toMatch(
      /Ready for connections/,
    );

    const proc = host.children.at(-1)!;
    const pid = proc.pid!;
    expect(server.pid).toBe(pid);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    expect(/^Uid:\s+(\d+)/m.exec(status)![1]).toBe(String(clickhouseAccount().uid));
    await server.stop();
    await server.stop(); // idempotent
    expect(proc.exitCode !== null || proc.signalCode !== null).toBe(true);
    expect(alive(pid), `pid ${pid} still exists`).toBe(false);
    await expect(
      fetch(`http://127.0.0.1:${HTTP_PORT}/ping`, { signal: AbortSignal.timeout(2000) }),
    ).rejects.toThrow();
  });

  it("discard() ends the one server process at once (SIGKILL: no watchdog, no children left)", async () => {
    const host = await newHost();
    const server = await clickhouse.startLocal(
      host,
      clickhouseSchemaInput({ httpPort: HTTP_PORT, tcpPort: TCP_PORT }),
    );
    servers.push(server);
    const proc = host.children.at(-1)!;
    expect(childPids(proc.pid!)).toEqual([]);
    await server.discard!();
    expect(proc.signalCode).toBe("SIGKILL");
    expect(alive(proc.pid!)).toBe(false);
  });

  it("refuses a pin the running server does not match, naming both versions, and stops the server", async () => {
    const host = await newHost();
    const err = await clickhouse
      .startLocal(
        host,
        clickhouseSchemaInput({ version: "18.14.9", httpPort: HTTP_PORT + 1, tcpPort: TCP_PORT + 1 }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerificationError);
    expect((err as Error).message).toContain("18.14.9");
    expect((err as Error).message).toContain("18.16.1");
    for (const c of host.children) {
      expect(c.exitCode !== null || c.signalCode !== null).toBe(true);
      expect(alive(c.pid!)).toBe(false);
    }
  });

  it("fails startup on a bad server setting with the server's log tail", async () => {
    const host = await newHost();
    const err = await clickhouse
      .startLocal(
        host,
        clickhouseSchemaInput({
          httpPort: HTTP_PORT + 2,
          tcpPort: TCP_PORT + 2,
          settings: { server: { mark_cache_size: "not-a-size" } },
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvisioningError);
    expect((err as Error).message).toMatch(/exited during startup[\s\S]*not-a-size/);
    for (const c of host.children) expect(c.exitCode !== null || c.signalCode !== null).toBe(true);
  });

  it("refuses MergeTree setting names the server does not have (18.16 starts anyway), and stops it", async () => {
    const host = await newHost();
    const err = await clickhouse
      .startLocal(
        host,
        clickhouseSchemaInput({
          httpPort: HTTP_PORT + 3,
          tcpPort: TCP_PORT + 3,
          settings: { merge_tree: { parts_to_throw_insert: 300, no_such_setting_here: 1 } },
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/settings\.merge_tree.*no_such_setting_here/);
    expect((err as Error).message).not.toMatch(/parts_to_throw_insert/);
    for (const c of host.children) expect(alive(c.pid!)).toBe(false);
  });

  it("fails startup on a profile setting name the server does not have, with the server's log tail", async () => {
    const host = await newHost();
    const err = await clickhouse
      .startLocal(
        host,
        clickhouseSchemaInput({
          httpPort: HTTP_PORT + 4,
          tcpPort: TCP_PORT + 4,
          settings: { profile: { max_threads: 2, no_such_profile_setting: 1 } },
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvisioningError);
    expect((err as Error).message).toMatch(/no_such_profile_setting/);
    for (const c of host.children) expect(alive(c.pid!)).toBe(false);
  });

  it("rejects unknown keys and settings it sets itself, before starting anything", async () => {
    const host = await newHost();
    await expect(
      clickhouse.startLocal(host, { version: "18.16.1", port: 1 } as never),
    ).rejects.toBeInstanceOf(ConfigurationError);
    await expect(
      clickhouse.startLocal(
        host,
        clickhouseSchemaInput({ settings: { server: { path: "/var/lib/clickhouse/" } } }),
      ),
    ).rejects.toThrow(/settings\.server\.path/);
    expect(host.children).toHaveLength(0);
  });
});

/** A config as a scenario gives it (defaults filled in by the component's schema). */
function clickhouseSchemaInput(c: Record<string, unknown>): Parameters<typeof clickhouse.startLocal>[1] {
  return clickhouseSchema.parse({ version: "18.16.1", ...c });
}
