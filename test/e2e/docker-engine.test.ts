/**
 * The docker platform on a REAL Docker engine (scripts/docker-engine.sh; DOCKER_HOST, default ingestbench's own
 * socket) with the Debian-built images (scripts/build-images.sh): `ingestbench bench` deploys the docker-debian
 * stacks through the Pulumi CLI stand-in's ENGINE MODE (test/helpers/pulumi-engine.ts: the project's Pulumi program
 * under Pulumi's mocks, each docker resource created through the Engine API; the one step that is not Pulumi's own),
 * and everything after the deploy is the product's code against real containers: the bundled generator `docker
 * exec`ed in the loadgen container, version probes, observers reading the containers' cgroups, tc in the shaper's
 * namespace, `docker update` for the cap lift, and teardown. No engine: the tests FAIL (never skip).
 *
 * Each run asserts an exact ledger, and only where the observation is about a cap itself (not this machine's
 * speed): the quarter-core sink's observed CPU within ±5 % of 0.25 cores when the CPU binds (throttled periods).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../harness/results/types.ts";
import { requireImages } from "../../harness/provision/images.ts";
import { createPulumiCliStandIn, type PulumiCliStandIn } from "../helpers/pulumi-cli-stand-in.ts";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const DOCKER_HOST = process.env.DOCKER_HOST ?? "unix:///run/ingestbench/docker.sock";
const results = mkdtempSync(path.join(os.tmpdir(), "ib-docker-engine-"));
let pulumi: PulumiCliStandIn | undefined;

const docker = (...args: string[]) =>
  spawnSync("docker", args, { env: { ...process.env, DOCKER_HOST }, encoding: "utf8", timeout: 30_000 });
/** What the engine holds, for the before/after comparison: containers, networks, volumes. */
const inventory = () =>
  ["ps -a --format {{.Names}}", "network ls --format {{.Name}}", "volume ls --format {{.Name}}"].map((a) =>
    docker(...a.split(" "))
      .stdout.split("\n")
      .filter(Boolean)
      .sort(),
  );
let before: string[][];

beforeAll(() => {
  const v = docker("version", "--format", "{{.Server.Version}}");
  if (v.status !== 0) {
    throw new Error(
      `no Docker engine answers at ${DOCKER_HOST}: start it with \`bash scripts/docker-engine.sh start\` and build the images with \`bash scripts/build-images.sh\` (${v.stderr.trim()})`,
    );
  }
  before = inventory();
});
afterEach(() => {
  pulumi?.cleanup();
  pulumi = undefined;
  // each bench destroyed exactly what it created
  expect(inventory()).toEqual(before);
});
afterAll(() => rmSync(results, { recursive: true, force: true }));

/** The stand-in in engine mode on PATH, DOCKER_HOST set. */
function env(): NodeJS.ProcessEnv {
  pulumi = createPulumiCliStandIn({ engine: { projectDir: repoRoot } });
  return { ...pulumi.env, DOCKER_HOST };
}

/** A short scenario file: `body` are its generator/collector/sink/matrix lines. */
function scenario(name: string, body: string[]): string {
  const file = path.join(results, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      "event: [{ name: ts, type: timestamp }, { name: msg, type: string, size: 180 }]",
      ...body,
      "warmup: 2s",
      "duration: 5s",
      "interval: 1s",
      "drain: { timeout: 60s }",
      "replicates: 1",
      "checks: [{ ledger.lost: 0 }, { ledger.duplicated: 0 }]",
      "",
    ].join("\n"),
  );
  return file;
}

function bench(
  stack: string,
  file: string,
  extra: string[] = [],
): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(
    process.execPath,
    [
      "bin/ingestbench.js",
      "bench",
      "--stack",
      stack,
      file,
      "--results",
      results,
      "--progress",
      "plain",
      ...extra,
    ],
    {
      cwd: repoRoot,
      env: env(),
      encoding: "utf8",
      timeout: 600_000,
    },
  );
}

function records(stack: string, name: string): RunRecord[] {
  const dir = path.join(results, stack, name);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map(
    (id) => JSON.parse(readFileSync(path.join(dir, id, "run.json"), "utf8")) as RunRecord,
  );
}

function exactLedger(rec: RunRecord | undefined): void {
  expect(rec, "a run record").toBeDefined();
  expect(rec!.status, JSON.stringify(rec!.error)).toBe("ok");
  expect(rec!.platform).toBe("docker");
  expect(rec!.ledger).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  expect(rec!.ledger!.stored).toBe(rec!.generator!.sent);
  expect(rec!.ledger!.stored).toBeGreaterThan(0);
}

/** The quickstart's closed loop (`rate: max`): where the sink's CPU must bind (the quarter-core stacks). */
const PG_COPY = [
  "generator: { pg-copy: { batch: 8000, connections: 1, rate: max, seed: 42 } }",
  "collector: none",
  'sink: { postgres: { version: "15" } }',
];
/**
 * The same COPY client paced at 16,000 rows/s (two batches a second), where only the ledger is asserted: a closed
 * loop on 2 cores stores whatever this machine's speed allows (the ledger and the content check compare every row),
 * a paced one a fixed ~112,000 rows over the 7 s of load.
 */
const PG_COPY_PACED = [PG_COPY[0]!.replace("rate: max", "rate: 16000"), ...PG_COPY.slice(1)];
/**
 * The syslog client at 4,000 events/s per connection (28,000 over the 7 s of load): every syslog-ng run asserts its
 * ledger, never a rate, and the ledger and the content check compare every row.
 */
const SYSLOG = "generator: { syslog: { batch: 500, connections: 1, rate: 4000, seed: 42 } }";
/**
 * syslog-ng 3.38 → PostgreSQL 15, with time-reopen(1): the collector container starts with the stack, while the
 * sink's PostgreSQL may still be in initdb, and syslog-ng's sql() retries a refused connection only after
 * time-reopen (60 s by default, plugins/collectors/syslog-ng/component.ts); in CI such a run's generator waited
 * 37 s for syslog-ng to read.
 */
const SYSLOG_NG_PG = [
  'collector: { syslog-ng: { version: "3.38", batch-lines: 1000, batch-timeout: 200, workers: 1, log-fifo-size: 20000, time-reopen: 1 } }',
  'sink: { postgres: { version: "15" } }',
];

describe("docker-debian stacks on a real Docker engine (Pulumi program applied by the engine-mode stand-in)", () => {
  it("quickstart (Debian PostgreSQL 15) on docker-debian-quarter-core: exact ledger; a CPU-bound sink uses 0.25 cores ±5 %", () => {
    const r = bench("docker-debian-quarter-core", scenario("dq-quickstart", PG_COPY));
    const [rec] = records("docker-debian-quarter-core", "dq-quickstart");
    expect(r.status, r.stderr).toBe(0);
    exactLedger(rec);
    expect(rec!.versions.postgres).toMatchObject({
      pinned: "15",
      running: expect.stringMatching(/^15\.\d+/),
    });
    expect(rec!.environment).toMatchObject({ cgroup: "v1", hostname: "sink" });
    // the cap as the engine applied it
    expect(rec!.limits.sink!.applied).toMatchObject({
      cfsQuotaUs: 25_000,
      cfsPeriodUs: 100_000,
      memoryLimitBytes: 2 * 1024 ** 3,
    });
    const s = rec!.summary!;
    // ±5 % when the CPU is what binds: named cpu, mostly throttled, and no other load took the CPUs (contention)
    if (s.bottleneck.resource === "cpu" && (s.throttledShare ?? 0) > 0.5 && !s.contention?.contended)
      expect(Math.abs(s.sinkCores! - 0.25) / 0.25).toBeLessThanOrEqual(0.05);
  }, 600_000);

  it("quickstart on docker-debian-quarter-core-cpu-only: the CPU binds, and the sink's observed CPU is its 0.25-core cap ±5 % (host contention when other load took the CPUs)", () => {
    // nothing but the quarter core is capped: the container's own cgroup must show the CFS quota at work
    const r = bench("docker-debian-quarter-core-cpu-only", scenario("dq-cpu", PG_COPY));
    const [rec] = records("docker-debian-quarter-core-cpu-only", "dq-cpu");
    expect(r.status, r.stderr).toBe(0);
    exactLedger(rec);
    expect(rec!.limits.sink).toMatchObject({
      enforced: true,
      applied: { cfsQuotaUs: 25_000, cfsPeriodUs: 100_000 },
    });
    const s = rec!.summary!;
    expect(s.bottleneck.host).toBe("sink");
    // the container's own tasks' run delay (harness/observers/remote.ts): when other load took the CPUs the verdict
    // must say host contention, and the cap is then not what alone bounds the sink's CPU
    if (s.contention?.contended) {
      expect(["contention", "cpu", "uncertain"]).toContain(s.bottleneck.resource);
      expect(s.bottleneck.candidates.some((c) => c.host === "sink" && c.resource === "contention")).toBe(
        true,
      );
    } else {
      expect(s.bottleneck.resource).toBe("cpu");
      expect(s.throttledShare!).toBeGreaterThan(0.5);
      expect(Math.abs(s.sinkCores! - 0.25) / 0.25).toBeLessThanOrEqual(0.05);
    }
  }, 600_000);

  it("quickstart (Debian PostgreSQL 15) on docker-debian-2-cores: exact ledger", () => {
    const r = bench("docker-debian-2-cores", scenario("d2-quickstart", PG_COPY_PACED));
    expect(r.status, r.stderr).toBe(0);
    exactLedger(records("docker-debian-2-cores", "d2-quickstart")[0]);
  }, 600_000);

  it("syslog-ng 3.38 → ClickHouse 18.16 in containers: exact ledger, both versions probed in their containers", () => {
    const file = scenario("d-syslog-ng-clickhouse", [
      SYSLOG,
      'collector: { syslog-ng: { version: "3.38", batch-lines: 1000, workers: 1, log-fifo-size: 100000 } }',
      'sink: { clickhouse: { version: "18.16.1" } }',
    ]);
    const r = bench("docker-debian-2-cores", file);
    const [rec] = records("docker-debian-2-cores", "d-syslog-ng-clickhouse");
    expect(r.status, r.stderr).toBe(0);
    exactLedger(rec);
    expect(rec!.versions).toMatchObject({
      "syslog-ng": { running: expect.stringMatching(/^3\.38/) },
      clickhouse: { running: expect.stringMatching(/^18\.16/) },
    });
  }, 600_000);

  it("generator: none: syslog-ng 3.38's example-msg-generator() in the collector container → PostgreSQL 15: an exact ledger, sent inferred from syslog-ng-ctl stats and the seq range", () => {
    // ~7 s of load (warmup 2 s + duration 5 s): 3000 ticks 1 ms apart, then the count stands still
    const file = scenario("d-example-msg-generator", [
      "generator: none",
      'collector: { syslog-ng: { version: "3.38", example-msg-generator: { num: 3000, freq: 0.001 }, batch-lines: 1000, batch-timeout: 200, log-fifo-size: 20000 } }',
      'sink: { postgres: { version: "15" } }',
    ]);
    const r = bench("docker-debian-2-cores", file);
    const [rec] = records("docker-debian-2-cores", "d-example-msg-generator");
    expect(r.status, r.stderr).toBe(0);
    exactLedger(rec);
    const l = rec!.ledger!;
    // one gen (the collector host's), its made count is syslog-ng's own (source s_gen processed), every stored seq in 0 .. made − 1
    expect(l.inferred).toMatchObject({
      from: "collector",
      by: "syslog-ng example-msg-generator()",
      outsideRange: 0,
    });
    expect(l.inferred!.made).toEqual([l.sent]);
    expect(l.sent).toBeLessThanOrEqual(3000);
    expect(l).toMatchObject({ stored: l.sent, distinct: l.sent, lost: 0, duplicated: 0, unexpected: 0 });
    expect(l.foreign ?? 0).toBe(0);
    expect(rec!.collectorClaims?.counts).toMatchObject({ generated: l.sent });
    expect(r.stdout).toContain("sent inferred");
    // the run started the generator itself: its config uploaded with the run's gens, the container restarted
    console.log(
      `docker generator: none: made ${JSON.stringify(l.inferred!.made)}, stored ${l.stored}, distinct ${l.distinct}, lost ${l.lost}, duplicated ${l.duplicated}, outside range ${l.inferred!.outsideRange}; ${rec!.limits.collector!.notes.find((n) => n.startsWith("generator: none"))}`,
    );
    expect(rec!.limits.collector!.notes.join("\n")).toMatch(
      new RegExp(
        `generator: none: example-msg-generator\\(\\) started for this run \\(gens ${rec!.genBase}\\.\\.${rec!.genBase}`,
      ),
    );
  }, 600_000);

  it("two syslog-ng collector containers (docker-debian-two-collectors): exact ledger over both, both at the pinned version", () => {
    const file = scenario("d-two-collectors", [SYSLOG, ...SYSLOG_NG_PG]);
    const r = bench("docker-debian-two-collectors", file);
    const [rec] = records("docker-debian-two-collectors", "d-two-collectors");
    expect(r.status, r.stderr).toBe(0);
    exactLedger(rec);
    expect(Object.keys(rec!.versions)).toEqual(
      expect.arrayContaining(["syslog-ng", "syslog-ng@collector-2"]),
    );
  }, 600_000);

  // syslog-ng 3.38 → PostgreSQL 15 is this matrix's first version (a bench of its own would run the same cell again)
  it("syslog-ng → PostgreSQL 15 in containers, 3.38 vs 4.8 on one stack (a matrix over the version, re-deployed in place): exact ledgers, then `compare --force`", () => {
    const file = scenario("d-syslog-ng-versions", [
      SYSLOG,
      ...SYSLOG_NG_PG,
      'matrix: { collector.syslog-ng.version: ["3.38", "4.8"] }',
    ]);
    const r = bench("docker-debian-2-cores", file);
    expect(r.status, r.stderr).toBe(0);
    const recs = records("docker-debian-2-cores", "d-syslog-ng-versions");
    expect(recs).toHaveLength(2);
    for (const rec of recs) exactLedger(rec);
    expect(recs.map((x) => x.versions["syslog-ng"]!.running.split(".").slice(0, 2).join(".")).sort()).toEqual(
      ["3.38", "4.8"],
    );
    const [a, b] = [
      recs.find((x) => x.versions["syslog-ng"]!.running.startsWith("3.38"))!,
      recs.find((x) => x.versions["syslog-ng"]!.running.startsWith("4.8"))!,
    ];
    const c = spawnSync(
      process.execPath,
      [
        "bin/ingestbench.js",
        "compare",
        "--scenario",
        "d-syslog-ng-versions",
        "--stack",
        "docker-debian-2-cores",
        "--baseline",
        a.runId,
        "--contender",
        b.runId,
        "--results",
        results,
        "--force",
      ],
      { cwd: repoRoot, encoding: "utf8", timeout: 60_000 },
    );
    expect(c.status, c.stderr).toBe(0);
    expect(c.stdout).toContain(a.runId);
    expect(c.stdout).toContain(b.runId);
    // a version comparison on purpose: compare lists the difference (--force)
    expect(c.stdout).toContain("component versions differ");
  }, 900_000);
});

describe("docker-debian stacks: refused before deploy", () => {
  it("a Debian-built image absent from the engine: its name and the build command (E_IMAGE_MISSING)", () => {
    const missing = { entry: {} as never, ref: "ingestbench/debian-postgres:0-absent", build: "postgres-0" };
    expect(() => requireImages("docker-debian-2-cores", [missing], { ...process.env, DOCKER_HOST })).toThrow(
      expect.objectContaining({
        code: "E_IMAGE_MISSING",
        message: expect.stringContaining("ingestbench/debian-postgres:0-absent"),
      }),
    );
    expect(() => requireImages("docker-debian-2-cores", [missing], { ...process.env, DOCKER_HOST })).toThrow(
      /bash scripts\/build-images\.sh postgres-0/,
    );
  });

  it("no engine at DOCKER_HOST: the engine hint, exit 3, nothing deployed", () => {
    const file = scenario("d-no-engine", PG_COPY);
    const r = spawnSync(
      process.execPath,
      ["bin/ingestbench.js", "bench", "--stack", "docker-debian-2-cores", file, "--results", results],
      {
        cwd: repoRoot,
        env: { ...env(), DOCKER_HOST: `unix://${results}/absent.sock` },
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toContain("bash scripts/docker-engine.sh start");
    expect(pulumi!.commandLines().filter((l) => l.startsWith("up"))).toEqual([]);
  });

  it("a cell version without a Debian-built image (PostgreSQL 18.4 on images: debian): a configuration error, exit 2", () => {
    const file = scenario("d-no-variant", [
      "generator: { pg-copy: { batch: 8000, connections: 1, rate: max, seed: 42 } }",
      "collector: none",
      'sink: { postgres: { version: "18.4.0-beta.17" } }',
    ]);
    const r = bench("docker-debian-2-cores", file);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /postgres version "18\.4\.0-beta\.17" has no Debian-built image: there are 15 .*17/,
    );
  });
});
