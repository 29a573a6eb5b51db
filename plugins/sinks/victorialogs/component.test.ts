// The victorialogs component: its arguments and params, then the real VictoriaLogs 1.52.2 (the project's Go module
// build, scripts/build-victorialogs.sh) started on a direct host (127.0.0.1, no cgroup or namespace).
import { existsSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError, ProvisioningError, VerificationError } from "../../../core/errors.ts";
import type { RunningComponent } from "../../../core/component.ts";
import { resolveProgram } from "../../../core/program.ts";
import { createDirectHost, type DirectHost } from "../../../test/helpers/direct-host.ts";
import { builtVictoriaLogs } from "./build.ts";
import {
  matchesVictoriaLogsPin,
  versionFromMetrics,
  victorialogs,
  victoriaLogsArgs,
  victoriaLogsParams,
  victoriaLogsProgram,
  victoriaLogsSchema,
} from "./component.ts";

const PORT = 39421;
const hosts: DirectHost[] = [];
const servers: RunningComponent[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const h of hosts) await h.cleanup();
});

async function newHost(programs?: Record<string, string>): Promise<DirectHost> {
  const h = await createDirectHost("sink", "root");
  hosts.push(h);
  return programs ? Object.assign(h, { programs }) : h;
}

const alive = (pid: number): boolean =>
  existsSync(`/proc/${pid}`) && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

/** Does the server's log file hold `text` within 5 s (it is written as the process's output arrives)? */
async function logSays(host: DirectHost, text: string): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (readFileSync(`${host.dataDir}/victoria-logs.log`, "utf8").includes(text)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The project's build; a test that needs it fails (never skips) when it is absent. */
function built(): string {
  const b = builtVictoriaLogs();
  if (b === null)
    throw new Error(
      "VictoriaLogs is not built on this machine: run `bash scripts/build-victorialogs.sh` (CI's .ci/run does)",
    );
  return b;
}

describe("victorialogs component", () => {
  it("pins releases whole, reads the release from vm_app_version, and from the program's -version", () => {
    expect(matchesVictoriaLogsPin("1.52.2", "1.52.2")).toBe(true);
    expect(matchesVictoriaLogsPin("1.52.2", "v1.52.2")).toBe(true);
    expect(matchesVictoriaLogsPin("1.52", "1.52.2")).toBe(false);
    expect(matchesVictoriaLogsPin("1.52.2", "1.52.20")).toBe(false);
    expect(
      versionFromMetrics(
        'vm_app_start_timestamp 1\nvm_app_version{version="victoria-logs-20260716-022047-tags-v1.52.2", short_version="v1.52.2"} 1\n',
      ),
    ).toBe("1.52.2");
    expect(versionFromMetrics("vm_app_uptime_seconds 3\n")).toBeNull();
    const [re] = victoriaLogsProgram.patterns;
    // ours, and a release binary's (upstream's Makefile: git describe --long --all)
    expect(re!.exec("victoria-logs-20260716-022047-tags-v1.52.2\n")?.[1]).toBe("1.52.2");
    expect(re!.exec("victoria-logs-20250715-211424-tags-v1.25.1-0-g8fc1d6e2d1\n")?.[1]).toBe("1.25.1");
    expect(re!.exec("victoria-logs-20250715-211424-heads-master-0-g8fc1d6e2d1\n")).toBeNull();
  });

  it("binds both addresses, sizes -memory.allowedBytes to 60 % of the cap, passes flags by VictoriaLogs' names, refuses its own", () => {
    const config = victoriaLogsSchema.parse({
      httpListenAddr: ":9500",
      retentionPeriod: "30d",
      flags: { "search.maxConcurrentRequests": 2, "loki.disableMessageParsing": false },
    });
    expect(
      victoriaLogsArgs(config, {
        address: "10.213.0.2",
        controlAddress: "10.214.0.2",
        storageDataPath: "/d/victorialogs",
        capBytes: 1024 ** 3,
      }),
    ).toEqual([
      "-storageDataPath=/d/victorialogs",
      "-httpListenAddr=10.213.0.2:9500",
      "-httpListenAddr=10.214.0.2:9500",
      "-retentionPeriod=30d",
      `-memory.allowedBytes=${Math.floor(0.6 * 1024 ** 3)}`,
      "-search.maxConcurrentRequests=2",
      "-loki.disableMessageParsing=false",
    ]);
    // no cap: VictoriaLogs' own sizing; a memory flag of the scenario replaces ours
    const own = victoriaLogsSchema.parse({ flags: { "memory.allowedPercent": 30 } });
    const where = { address: "::1", controlAddress: "::1", storageDataPath: "/d", capBytes: 2 ** 30 };
    expect(victoriaLogsArgs(own, where)).toEqual([
      "-storageDataPath=/d",
      "-httpListenAddr=[::1]:9428",
      "-memory.allowedPercent=30",
    ]);
    expect(() =>
      victoriaLogsArgs(victoriaLogsSchema.parse({ flags: { storageDataPath: "/x" } }), where),
    ).toThrow(ConfigurationError);
    expect(() => victoriaLogsSchema.parse({ httpListenAddr: "0.0.0.0:9428" })).toThrow(/the port part/);
    expect(() => victoriaLogsSchema.parse({ retention: "7d" })).toThrow(/Unrecognized key/);
  });

  it("hands every protocol its ingestion path with the same args; the Loki path keeps its labels as the stream", () => {
    expect(victoriaLogsParams(victoriaLogsSchema.parse({}))).toEqual({
      path: "/insert/jsonline?_msg_field=msg&_stream_fields=gen&_time_field=sent_at",
      bulkPath: "/insert/elasticsearch/_bulk?_msg_field=msg&_stream_fields=gen&_time_field=sent_at",
      lokiPushPath: "/insert/loki/api/v1/push?_msg_field=msg",
      otlpLogsPath: "/insert/opentelemetry/v1/logs?_msg_field=msg&_stream_fields=gen",
      msgField: "msg",
      streamFields: "gen",
    });
  });

  it("real VictoriaLogs: starts the project's build, reads back 1.52.2 from the running server, answers /health, and stop leaves no process", async () => {
    built();
    const found = resolveProgram(victoriaLogsProgram, undefined, "test");
    expect(found).toMatchObject({ from: "built", version: "1.52.2" });
    const host = await newHost();
    const server = await victorialogs.startLocal(
      host,
      victoriaLogsSchema.parse({ httpListenAddr: `:${PORT}` }),
    );
    servers.push(server);
    expect(server).toMatchObject({
      name: "victorialogs",
      pinned: "1.52.2",
      running: "1.52.2",
      data: { host: "127.0.0.1", port: PORT },
      control: { host: "127.0.0.1", port: PORT },
    });
    expect(server.params.path).toMatch(/^\/insert\/jsonline\?/);
    expect(await (await fetch(`http://127.0.0.1:${PORT}/health`)).text()).toBe("OK");
    // its data lives under the host's data directory
    expect(existsSync(`${host.dataDir}/victorialogs`)).toBe(true);
    expect(readFileSync(`${host.dataDir}/victoria-logs.log`, "utf8")).toContain("started VictoriaLogs");
    const pid = server.pid!;
    expect(alive(pid)).toBe(true);
    await server.stop();
    expect(alive(pid)).toBe(false);
    // SIGTERM: a graceful stop
    expect(await logSays(host, "the VictoriaLogs has been stopped")).toBe(true);
  });

  it("real VictoriaLogs: an unknown flag stops the start with the server's own words; a drifted pin is refused before the spawn", async () => {
    built();
    const host = await newHost();
    const err = await victorialogs
      .startLocal(
        host,
        victoriaLogsSchema.parse({ httpListenAddr: `:${PORT + 1}`, flags: { "no.suchFlag": 1 } }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvisioningError);
    expect((err as ProvisioningError).code).toBe("E_VL_START");
    expect((err as Error).message).toMatch(/flag provided but not defined: -no\.suchFlag/);
    const drift = await victorialogs
      .startLocal(
        await newHost(),
        victoriaLogsSchema.parse({ version: "1.52.1", httpListenAddr: `:${PORT + 2}` }),
      )
      .catch((e: unknown) => e);
    expect(drift).toBeInstanceOf(VerificationError);
    expect((drift as Error).message).toMatch(
      /reports VictoriaLogs 1\.52\.2, but sink\.victorialogs\.version pins 1\.52\.1/,
    );
  });

  it("real VictoriaLogs: a stack's programs entry is used as given; a missing one is refused naming how to build", async () => {
    const b = built();
    const host = await newHost({ victorialogs: b });
    const server = await victorialogs.startLocal(
      host,
      victoriaLogsSchema.parse({ httpListenAddr: `:${PORT + 3}` }),
    );
    servers.push(server);
    expect(server.running).toBe("1.52.2");
    await server.stop();
    const missing = await victorialogs
      .startLocal(
        await newHost({ victorialogs: "/nonexistent/victoria-logs" }),
        victoriaLogsSchema.parse({ httpListenAddr: `:${PORT + 4}` }),
      )
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ConfigurationError);
    expect((missing as ConfigurationError).code).toBe("E_PROGRAM_MISSING");
    expect((missing as Error).message).toContain("scripts/build-victorialogs.sh");
  });

  it("real VictoriaLogs 1.52.2 exits on a Loki push whose _stream_fields names a label the line also holds (why the Loki path keeps its labels as the stream)", async () => {
    built();
    const host = await newHost();
    const server = await victorialogs.startLocal(
      host,
      victoriaLogsSchema.parse({ httpListenAddr: `:${PORT + 5}` }),
    );
    servers.push(server);
    const push = (path: string): Promise<Response | Error> =>
      fetch(`http://127.0.0.1:${PORT + 5}${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          streams: [
            {
              stream: { job: "ingestbench", gen: "1" },
              values: [[`${Date.now()}000000`, JSON.stringify({ msg: "m", gen: 1, seq: 0 })]],
            },
          ],
        }),
      }).catch((e: Error) => e);
    // the component's own Loki path: stored
    expect(((await push(server.params.lokiPushPath!)) as Response).status).toBe(204);
    expect(alive(server.pid!)).toBe(true);
    // the same push with _stream_fields=gen: stream tags {gen="1",gen="1"}, a panic, and the server is gone
    expect(await push("/insert/loki/api/v1/push?_stream_fields=gen")).toBeInstanceOf(Error);
    for (let i = 0; i < 50 && alive(server.pid!); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(server.pid!)).toBe(false);
    expect(await logSays(host, "stream tags must be sorted in alphabetical order")).toBe(true);
  });
});
