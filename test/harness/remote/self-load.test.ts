/**
 * `generator: none` with Fluentd's sample input on a docker stack (harness/remote/site.ts startSelfLoad and
 * selfLoadCounts): each worker of `<system> workers N` runs its own in_sample whose `auto_increment_key seq` counts
 * from 0, so the workers' seqs collide unless each worker's events carry a gen of their own. Fluentd cannot run here:
 *
 * - the config the run uploads is checked as text (the gen is Fluentd's embedded Ruby `#{worker_id.to_i + base}` in
 *   the double-quoted `sample` value: docs.fluentd.org "Config File Syntax", embedded Ruby code in double-quoted
 *   strings; "Multi Process Workers", worker ids 0 .. N − 1), uploaded to each collector host with its own base, and
 *   the container restarted — through a recording shell, no container;
 * - each worker's made count is read on that worker's own monitor_agent port (port + worker id), served as the
 *   BYTE-LEVEL VECTORS of Fluentd's monitor_agent payload (plugins/collectors/fluentd/claims.vectors.ts) over real HTTP;
 * - the ledger per (gen, seq) is the real PostgreSQL verifier's over SYNTHETIC ROWS in a real PostgreSQL table, rows
 *   as the workers would store them (each worker's seqs 0 .. made − 1 under its own gen).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import type { ComponentEndpoints, StackOutputs } from "../../../core/outputs.ts";
import { genBaseOf } from "../../../core/ledger.ts";
import type { EventField } from "../../../core/events/types.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import { RemoteSite } from "../../../harness/remote/site.ts";
import type { HostShell } from "../../../harness/remote/shell.ts";
import type { CellPlan } from "../../../harness/runner/cell-plan.ts";
import { CollectorLoad, inferredSent } from "../../../harness/runner/self-load.ts";
import { fluentdPlugins } from "../../../plugins/collectors/fluentd/claims.vectors.ts";
import { postgresVerifier } from "../../../plugins/sinks/postgres/verifier.ts";
import { closeMetricsServers, serve } from "../../helpers/metrics-server.ts";
import { startTestPostgresWithClient, type TestPostgres } from "../../helpers/direct-host.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../..");
const STACK = "docker-4c4g";
const PORT = 5471;
const fields: EventField[] = [
  { name: "host", type: "string", size: 8 },
  { name: "code", type: "int" },
];
const fluentd = {
  version: "1.12.0",
  system: { workers: 2 },
  source: { sample: { events_per_second: 1000, size: 10 } },
};
const limits = () => ({ requested: {}, applied: {}, enforced: true, notes: [] as string[] });

afterEach(closeMetricsServers);

/** Two Fluentd collector hosts (2 workers each, monitor_agent on 24220 + worker id) into ClickHouse; `published`: internal → external per host. */
function outputs(published: Array<Record<number, number>>): StackOutputs {
  const host = (address: string, component: string) => ({
    address,
    container: `ib-${STACK}-${address.split(".").pop()}`,
    component,
    image: `${component}:test`,
    limits: limits(),
  });
  const ep = (h: string, address: string, pub: Record<number, number>): ComponentEndpoints => ({
    host: h,
    data: { host: address, port: 24224, scheme: "forward" },
    metrics: { host: address, port: 24220, scheme: "http" },
    published: Object.entries(pub).map(([internal, external]) => ({
      internal: Number(internal),
      external,
      ip: "127.0.0.1",
      protocol: "tcp",
    })),
  });
  return {
    platform: "docker",
    stack: STACK,
    network: { name: `ib-${STACK}`, subnet: "10.77.0.0/24" },
    hosts: {
      loadgen: host("10.77.0.10", "loadgen"),
      "collector-1": host("10.77.0.11", "fluentd"),
      "collector-2": host("10.77.0.12", "fluentd"),
      sink: host("10.77.0.13", "clickhouse"),
    },
    endpoints: {
      fluentd: [
        ep("collector-1", "10.77.0.11", published[0]!),
        ep("collector-2", "10.77.0.12", published[1]!),
      ],
      clickhouse: [
        {
          host: "sink",
          data: { host: "10.77.0.13", port: 8123, scheme: "http" },
          metrics: null,
          published: [{ internal: 8123, external: 49170, ip: "127.0.0.1", protocol: "tcp" }],
        },
      ],
    },
    versions: {
      fluentd: { pinned: "1.12.0", image: "fluentd:test", digestResolved: false },
      clickhouse: { pinned: "25.8", image: "clickhouse:test", digestResolved: false },
    },
  };
}

const plan = {
  scenario: "fluentd-sample",
  sink: { name: "clickhouse", config: {} },
  collector: { name: "fluentd", config: fluentd },
  fields,
  generator: { name: "none", config: {} },
  selfLoad: {
    collector: "fluentd",
    input: "in_sample",
    counter: "monitor_agent on each worker's port",
    generatorsPerHost: 2,
    quietMs: 2000,
  },
} as unknown as CellPlan;

/** A shell that records uploads (as text; a `{ file }` upload by the file's content) and engine commands; the
 *  container's monitor_agent port 24220 listens. */
function recordingShell(host: string, log: string[], uploads: Map<string, string>): HostShell {
  const container = `ib-${STACK}-${host}`;
  const shell: Pick<HostShell, "host" | "container" | "describe" | "spawn" | "run" | "upload" | "engine"> = {
    host,
    container,
    describe: `docker exec ${container}`,
    spawn: () => {
      throw new Error("no process is spawned");
    },
    run: async (cmd, args) =>
      cmd === "sh" && args.join(" ").includes("/proc/net/tcp")
        ? "  0: 00000000:5E9C 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1\n"
        : "",
    upload: async (file, content) => {
      const text =
        typeof content === "string"
          ? content
          : content instanceof Uint8Array
            ? Buffer.from(content).toString("utf8")
            : readFileSync(content.file, "utf8");
      uploads.set(`${host}:${file}`, text);
    },
    engine: async (args) => {
      log.push(`${host}: ${args.join(" ")}`);
      if (args[0] === "inspect" && args.at(-1)!.endsWith("-shaper")) throw new Error("no such container");
      if (args[0] === "inspect" && args.includes("{{json .NetworkSettings.Ports}}"))
        return '{"24220/tcp":[{"HostIp":"127.0.0.1","HostPort":"49180"}]}';
      if (args[0] === "inspect") return "true 4242";
      return "";
    },
  };
  return shell as HostShell;
}

function site(
  o: StackOutputs,
  shell: (h: string) => HostShell = (h) => {
    throw new Error(`no shell expected (${h})`);
  },
): RemoteSite {
  return new RemoteSite({
    stack: loadStack(path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`)),
    plan,
    outputs: o,
    shell,
  });
}

describe("generator: none with Fluentd's sample input on docker: a gen per worker (recording shell; monitor_agent byte-level vectors; synthetic rows in a real PostgreSQL table)", () => {
  let server: (TestPostgres & { client: pg.Client }) | undefined;
  beforeAll(async () => {
    server = await startTestPostgresWithClient(PORT);
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("uploads each collector host's fluent.conf with its own gen base (worker id + genBase, + 2 on the second host) and restarts its container (recording shell, config text against Fluentd's documented syntax)", async () => {
    const log: string[] = [];
    const uploads = new Map<string, string>();
    const o = outputs([
      { 24220: 49160, 24221: 49161 },
      { 24220: 49162, 24221: 49163 },
    ]);
    const s = site(o, (h) => recordingShell(h, log, uploads));
    const G = genBaseOf("20261201T000000Z-abcdef");
    // the limits read back at startSink (harness/remote/readback.ts), where the site notes what it did
    for (const h of ["collector-1", "collector-2"]) s.limits[h] = limits();
    await (s as unknown as { startSelfLoad(g: number): Promise<void> }).startSelfLoad(G);
    const conf = (h: string) => uploads.get(`${h}:/fluentd/etc/fluent.conf`) ?? "";
    // the sample value is one double-quoted string whose #{…} Fluentd evaluates once per worker (embedded Ruby)
    expect(conf("collector-1")).toMatch(
      new RegExp(`^  sample "\\{.*\\\\"gen\\\\":#\\{worker_id\\.to_i \\+ ${G}\\}.*\\}"$`, "m"),
    );
    expect(conf("collector-2")).toMatch(
      new RegExp(`^  sample "\\{.*\\\\"gen\\\\":#\\{worker_id\\.to_i \\+ ${G + 2}\\}.*\\}"$`, "m"),
    );
    for (const h of ["collector-1", "collector-2"]) {
      expect(conf(h)).toMatch(
        /^<source>\n  @type sample\n  tag ib\.sample\n  size 10\n  rate 50\n  auto_increment_key seq\n/m,
      );
      expect(log).toContain(`${h}: restart --time 10 ${o.hosts[h]!.container}`);
      expect(s.limits[h]!.notes.join("\n")).toMatch(
        new RegExp(
          `generator: none: in_sample started for this run \\(gens ${h === "collector-1" ? G : G + 2}\\.\\.${h === "collector-1" ? G + 1 : G + 3}; /fluentd/etc/fluent\\.conf sha256 [0-9a-f]{12}\\)`,
        ),
      );
    }
    // the restart republished the monitor_agent port (the engine's answer): the outputs follow it
    expect(o.endpoints.fluentd![0]!.published.find((p) => p.internal === 24220)!.external).toBe(49180);
  });

  it("counts each worker's events on its own monitor_agent port (byte-level vectors over real HTTP) and the ledger per (gen, seq) over synthetic rows in a real PostgreSQL table is exact, sent inferred", async () => {
    const made = [700, 500, 300, 200]; // collector-1 workers 0, 1; collector-2 workers 0, 1
    const ports = await Promise.all(
      made.map((emit) =>
        serve("/api/plugins.json", fluentdPlugins({ emit, retries: 0, queued: 0, bytes: 0, writes: 1 })),
      ),
    );
    const o = outputs([
      { 24220: ports[0]!.port, 24221: ports[1]!.port },
      { 24220: ports[2]!.port, 24221: ports[3]!.port },
    ]);
    const counts = await site(o).selfLoadCounts();
    expect(counts).toEqual({ made, queued: 0 });
    const load = new CollectorLoad(async () => counts, 4, 2000, "no generator process");
    const finals = await load.stop();
    expect(finals.map((f) => f.sent)).toEqual(made);

    // the rows the four workers store: each worker's seqs 0 .. made − 1 (they collide across workers) under its own gen
    const G = genBaseOf("20261201T000000Z-fedcba");
    const v = postgresVerifier.create({
      host: "127.0.0.1",
      port: PORT,
      params: { ...server!.pg.params, table: "ib_sample_workers" },
      fields,
      genBase: G,
    });
    try {
      await v.prepare();
      for (const [k, n] of made.entries()) {
        await server!.client.query(
          `INSERT INTO ib_sample_workers (host, code, gen, seq, sent_at) SELECT 'h', 200, $1, s, now() FROM generate_series(0, $2::bigint - 1) s`,
          [G + k, n],
        );
      }
      const ledger = await v.ledger(
        made,
        made.map(() => []),
      );
      expect(ledger).toMatchObject({
        sent: 1700,
        stored: 1700,
        distinct: 1700,
        lost: 0,
        duplicated: 0,
        unexpected: 0,
        missingRanges: [],
      });
      expect(inferredSent(plan, made, ledger)).toEqual({
        from: "collector",
        by: "fluentd in_sample",
        counter: plan.selfLoad!.counter,
        made,
        outsideRange: 0,
      });
    } finally {
      await v.close();
    }
  });

  it("without a gen per worker the workers' seqs collide: one gen for both workers' rows counts the second worker's as duplicates and its share as lost (synthetic rows in a real PostgreSQL table)", async () => {
    const G = genBaseOf("20261201T000000Z-collid");
    const v = postgresVerifier.create({
      host: "127.0.0.1",
      port: PORT,
      params: { ...server!.pg.params, table: "ib_sample_one_gen" },
      fields,
      genBase: G,
    });
    try {
      await v.prepare();
      // worker 0: seqs 0..699, worker 1: seqs 0..499, both stamped gen G (what a fixed gen in the sample record gives)
      for (const n of [700, 500])
        await server!.client.query(
          `INSERT INTO ib_sample_one_gen (host, code, gen, seq, sent_at) SELECT 'h', 200, $1, s, now() FROM generate_series(0, $2::bigint - 1) s`,
          [G, n],
        );
      const ledger = await v.ledger([1200], [[]]);
      expect(ledger).toMatchObject({
        sent: 1200,
        stored: 1200,
        distinct: 700,
        duplicated: 500,
        lost: 500,
        missingRanges: [[0, 700, 1199]],
      });
    } finally {
      await v.close();
    }
  });
});
