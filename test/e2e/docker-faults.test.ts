/**
 * Faults of a docker-debian run on the REAL Docker engine (scripts/docker-engine.sh), deployed through the Pulumi
 * CLI stand-in's engine mode (test/helpers/pulumi-engine.ts: the project's Pulumi program under Pulumi's mocks,
 * each docker resource created with dockerode); everything after the deploy is the product's code. Stack
 * docker-debian-2-cores (no network cap: this kernel has no matchall/police for the quarter-core shaper).
 *
 * - the run.json of a run records each host's limits as read back (docker inspect, the container's cgroup), with
 *   their sources, enforced;
 * - a version probe that does not match the pin stops the run before load, exit 4, and the stack is destroyed
 *   (the container's answer is replaced by a Docker CLI wrapper, INGESTBENCH_DOCKER: the only way to make a
 *   Debian-built image report another version without rebuilding the shared images);
 * - SIGKILL of `ingestbench bench` during deploy, load and drain, then `ingestbench gc`: `docker ps -a`,
 *   `docker network ls` and `docker volume ls` list what they did before;
 * - SIGKILL during teardown (while `pulumi destroy` removes the containers), then gc: the same, and the inventory
 *   (test/helpers/inventory.ts: processes of the bench's TMPDIR, temp files, registries, locks, the stack's
 *   containers, networks, volumes, dangling built images, build cache) holds nothing of the stack;
 * - SIGKILL during load, then gc WITHOUT a Pulumi CLI: the label sweep alone (infra/docker/gc.ts sweepByLabel)
 *   finds the run's containers, network and volume by `ingestbench.stack` and removes them;
 * - SIGINT mid-run: the bench tears the stack down by itself (exit 130).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.ts";
import { inventory, leftBehind } from "../helpers/inventory.ts";
import { DOCKER_ENV, engine } from "../helpers/docker-engine.ts";
import { createPulumiCliStandIn, type PulumiCliStandIn } from "../helpers/pulumi-cli-stand-in.ts";
import { repoRoot } from "../harness/provision/fixtures.ts";

const STACK = "docker-debian-2-cores";
const LABEL = `ingestbench.stack=${STACK}`;
const cleanups = useCleanups();

/** The engine's listings (names), without other stacks' and tests' `ib-…` resources, which come and go on their own. */
function listings(): { containers: string[]; networks: string[]; volumes: string[] } {
  const ours = (n: string) => !n.startsWith("ib-") || n.startsWith(`ib-${STACK}`);
  const ls = (...args: string[]) =>
    spawnSync("docker", args, { env: DOCKER_ENV, encoding: "utf8" })
      .stdout.split("\n")
      .filter(Boolean)
      .filter(ours)
      .sort();
  return {
    containers: ls("ps", "-a", "--format", "{{.Names}}"),
    networks: ls("network", "ls", "--format", "{{.Name}}"),
    volumes: ls("volume", "ls", "--format", "{{.Name}}"),
  };
}

/** `scenario`: the paced quickstart (pacedQuickstart), written before any inventory is taken */
interface Setup {
  standIn: PulumiCliStandIn;
  tmp: string;
  results: string;
  env: NodeJS.ProcessEnv;
  scenario: string;
}

async function setup(): Promise<Setup> {
  await engine();
  expect(
    spawnSync("docker", ["ps", "-aq", "--filter", `label=${LABEL}`], {
      env: DOCKER_ENV,
      encoding: "utf8",
    }).stdout.trim(),
    `stack ${STACK} is deployed already`,
  ).toBe("");
  const standIn = createPulumiCliStandIn({ engine: { projectDir: repoRoot } });
  const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-docker-faults-"));
  cleanups.push(async () => {
    spawnSync(
      "sh",
      [
        "-c",
        `docker rm -f $(docker ps -aq --filter label=${LABEL}) 2>/dev/null; docker network rm ib-${STACK} 2>/dev/null; docker volume rm $(docker volume ls -q --filter label=${LABEL}) 2>/dev/null`,
      ],
      { env: DOCKER_ENV },
    );
    standIn.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });
  return {
    standIn,
    tmp,
    results: path.join(tmp, "results"),
    env: { ...standIn.env, DOCKER_HOST: DOCKER_ENV.DOCKER_HOST, TMPDIR: tmp, PULUMI_CONFIG_PASSPHRASE: "" },
    scenario: pacedQuickstart(tmp),
  };
}

/**
 * scenarios/quickstart-debian.yaml with its COPY client paced at 16,000 rows/s (two batches a second) instead of
 * `rate: max`: these tests assert limits, phases, exit codes and what is left on the engine, never a rate, and a
 * closed loop on 2 cores stores whatever this machine's speed allows — every row of which the ledger and the
 * content check then compare before the teardown (and the kill during it) can begin.
 */
function pacedQuickstart(tmp: string): string {
  const file = path.join(tmp, "quickstart-debian.yaml");
  const text = readFileSync(path.join(repoRoot, "scenarios/quickstart-debian.yaml"), "utf8");
  const paced = text.replace("rate: max", "rate: 16000");
  expect(paced).not.toBe(text);
  writeFileSync(file, paced);
  return file;
}

function bench(s: Setup, env: NodeJS.ProcessEnv = s.env, scenario = s.scenario): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      "bin/ingestbench.js",
      "bench",
      "--stack",
      STACK,
      scenario,
      "--duration",
      "8s",
      "--warmup",
      "1s",
      "--results",
      s.results,
      "--progress",
      "jsonl",
    ],
    {
      cwd: repoRoot,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  cleanups.push(async () => void child.kill("SIGKILL"));
  return child;
}

/** Resolves when `test` matches the stdout (jsonl progress) or stderr (Pulumi's output) seen so far. */
function waitFor(
  child: ChildProcess,
  test: (out: string, err: string) => boolean,
  what: string,
): Promise<void> {
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    const check = () => {
      if (test(out, err)) resolve();
    };
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      check();
    });
    child.stderr!.on("data", (d: Buffer) => {
      err += d;
      check();
    });
    child.on("exit", (code) =>
      reject(new Error(`bench exited ${code} before ${what}:\n${err.slice(-3000)}`)),
    );
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.on("exit", (code) => resolve(code));
  });

/** Wait until no process runs from the stand-in's directory (its `pulumi up`, orphaned by the kill, finishing). */
async function standInIdle(s: Setup): Promise<void> {
  for (let i = 0; i < 240; i++) {
    const busy = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .some((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(s.standIn.dir);
        } catch {
          return false;
        }
      });
    if (!busy) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error("the stand-in's pulumi is still running after 2 minutes");
}

function runRecord(s: Setup): Record<string, any> {
  const dir = path.join(s.results, STACK, "quickstart-debian");
  const run = readdirSync(dir).sort().pop()!;
  return JSON.parse(readFileSync(path.join(dir, run, "run.json"), "utf8"));
}

describe(`faults of a ${STACK} run on the real Docker engine`, () => {
  it("run.json holds each host's limits as read back, with their sources; the stack is gone afterwards", async () => {
    const s = await setup();
    const before = listings();
    const child = bench(s);
    const code = await exited(child);
    const rec = runRecord(s);
    expect(code, JSON.stringify(rec.error)).toBe(0);
    expect(rec.ledger.lost).toBe(0);
    const sink = rec.limits.sink;
    expect(sink.enforced).toBe(true);
    expect(sink.mismatches).toEqual([]);
    // Pulumi.docker-debian-2-cores.yaml: sink cpu "2" → 200000/100000 µs, memory 4 GiB
    expect(sink.applied).toMatchObject({
      cfsQuotaUs: 200_000,
      cfsPeriodUs: 100_000,
      memoryLimitBytes: 4 * 1024 ** 3,
      "docker.CpuQuota": 200_000,
      "docker.Memory": 4 * 1024 ** 3,
    });
    expect(sink.sources.cfsQuotaUs).toBe(`cgroup v1 /sys/fs/cgroup/cpu/cpu.cfs_quota_us in ib-${STACK}-sink`);
    expect(sink.sources["docker.Memory"]).toBe(`docker inspect ib-${STACK}-sink HostConfig.Memory`);
    expect(sink.handed).toMatchObject({ cfsQuotaUs: 200_000, memoryBytes: 4 * 1024 ** 3 });
    expect(listings()).toEqual(before);
  });

  it("a version probe that does not match the pin: stopped before load, exit 4, everything removed", async () => {
    const s = await setup();
    const before = listings();
    // the sink's `postgres --version` answers 16.4 (the pin is 15); every other docker command is the real one
    const wrapper = path.join(s.tmp, "docker-wrapper");
    const log = path.join(s.tmp, "docker-calls.log");
    writeFileSync(
      wrapper,
      `#!/bin/sh\necho "$*" >> ${log}\ncase "$*" in *"-sink sh -c postgres --version"*) echo "postgres (PostgreSQL) 16.4"; exit 0;; esac\nexec docker "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const child = bench(s, { ...s.env, INGESTBENCH_DOCKER: wrapper });
    const code = await exited(child);
    const rec = runRecord(s);
    expect(rec.error).toMatchObject({ code: "E_VERSION" });
    expect(rec.error.message).toMatch(/16\.4/);
    expect(code).toBe(4);
    expect(rec.series ?? []).toEqual([]);
    expect(rec.ledger).toBeNull();
    // no generator was started in the loadgen container
    expect(readFileSync(log, "utf8")).not.toMatch(/exec -i ib-docker-debian-2-cores-loadgen node /);
    expect(listings()).toEqual(before);
  });

  for (const phase of ["deploy", "load", "drain"] as const) {
    it(`SIGKILL of the harness during ${phase}, then gc: docker ps -a, network ls and volume ls are as before`, async () => {
      const s = await setup();
      const before = listings();
      const child = bench(s);
      await waitFor(
        child,
        (out, err) =>
          phase === "deploy"
            ? /\+ docker:Container ib-docker-debian-2-cores-loadgen/.test(err)
            : new RegExp(`"event":"sample"[^\\n]*"phase":"${phase === "load" ? "measure" : "drain"}"`).test(
                out,
              ),
        phase,
      );
      child.kill("SIGKILL");
      await exited(child);
      await standInIdle(s);
      expect(
        spawnSync("docker", ["ps", "-aq", "--filter", `label=${LABEL}`], {
          env: DOCKER_ENV,
          encoding: "utf8",
        }).stdout.trim(),
      ).not.toBe("");

      const r = spawnSync(process.execPath, ["bin/ingestbench.js", "gc", "--json"], {
        cwd: repoRoot,
        env: s.env,
        encoding: "utf8",
        timeout: 180_000,
      });
      const out = JSON.parse(r.stdout);
      expect(out.deployments.errors).toEqual([]);
      expect(r.status, r.stderr).toBe(0);
      const dead = out.deployments.collected.find((c: { stack: string }) => c.stack === STACK);
      expect(dead).toMatchObject({ stack: STACK, command: "bench", ownerPid: child.pid });
      // the stand-in's destroy removes what its up created; the label sweep whatever was left
      expect(dead.destroyed).toBe(true);
      expect(listings()).toEqual(before);
      if (phase !== "deploy")
        expect(runRecord(s)).toMatchObject({ status: "interrupted", error: { code: "E_KILLED" } });
    });
  }

  /** gc --json with `env`; its exit status and output. */
  const gcJson = (env: NodeJS.ProcessEnv) => {
    const r = spawnSync(process.execPath, ["bin/ingestbench.js", "gc", "--json"], {
      cwd: repoRoot,
      env,
      encoding: "utf8",
      timeout: 180_000,
    });
    expect(r.stdout, r.stderr).toMatch(/^\{/);
    return { status: r.status, stderr: r.stderr, out: JSON.parse(r.stdout) as Record<string, any> };
  };
  /** What the inventory holds of the stack and of the bench's TMPDIR now that `before` did not (results are the user's). */
  const left = (s: Setup, before: ReturnType<typeof inventory>) =>
    leftBehind(before, inventory({ tmpDir: s.tmp, docker: DOCKER_ENV }), { stacks: [STACK] }).filter(
      (l) => !l.includes(s.results),
    );

  it("SIGKILL of the harness during teardown, then gc: the engine's listings and the inventory are as before", async () => {
    const s = await setup();
    const before = listings();
    const inv = inventory({ tmpDir: s.tmp, docker: DOCKER_ENV });
    const child = bench(s);
    // the engine-mode stand-in logs each resource it removes (test/helpers/pulumi-engine.ts): the destroy has begun
    await waitFor(child, (_out, err) => /^Destroying \(|^- container /m.test(err), "teardown");
    child.kill("SIGKILL");
    await exited(child);
    await standInIdle(s);
    const r = gcJson(s.env);
    expect(r.out.deployments.errors).toEqual([]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.out.deployments.collected.find((c: { stack: string }) => c.stack === STACK)).toMatchObject({
      stack: STACK,
      command: "bench",
      ownerPid: child.pid,
    });
    expect(listings()).toEqual(before);
    expect(left(s, inv)).toEqual([]);
    // the cell's record was final before the teardown began
    expect(runRecord(s).status).not.toBe("running");
  }, 300_000);

  it("SIGKILL of the harness during load, then gc without a Pulumi CLI: the label sweep alone removes the run's containers, network and volume", async () => {
    const s = await setup();
    const before = listings();
    const inv = inventory({ tmpDir: s.tmp, docker: DOCKER_ENV });
    const child = bench(s);
    await waitFor(child, (out) => /"event":"sample"[^\n]*"phase":"measure"/.test(out), "load");
    child.kill("SIGKILL");
    await exited(child);
    const deployed = spawnSync(
      "docker",
      ["ps", "-a", "--format", "{{.Names}}", "--filter", `label=${LABEL}`],
      { env: DOCKER_ENV, encoding: "utf8" },
    )
      .stdout.split("\n")
      .filter(Boolean)
      .sort();
    expect(deployed).toEqual(expect.arrayContaining([`ib-${STACK}-loadgen`, `ib-${STACK}-sink`]));
    // no Pulumi CLI: PATH without the stand-in's bin directory
    const path_ = (s.env.PATH ?? "")
      .split(path.delimiter)
      .filter((d) => d !== s.standIn.binDir)
      .join(path.delimiter);
    const r = gcJson({ ...s.env, PATH: path_ });
    expect(r.out.deployments.errors).toEqual([]);
    expect(r.status, r.stderr).toBe(0);
    const dead = r.out.deployments.collected.find((c: { stack: string }) => c.stack === STACK);
    expect(dead).toMatchObject({ stack: STACK, command: "bench", ownerPid: child.pid, destroyed: false });
    expect(dead.notes.join("\n")).toMatch(/Pulumi state not destroyed/);
    expect([...dead.removed.containers].sort()).toEqual(deployed);
    expect(dead.removed.networks).toContain(`ib-${STACK}`);
    expect(listings()).toEqual(before);
    expect(left(s, inv)).toEqual([]);
    expect(runRecord(s)).toMatchObject({ status: "interrupted", error: { code: "E_KILLED" } });
  }, 300_000);

  it("SIGINT mid-run: the bench tears the stack down by itself (exit 130)", async () => {
    const s = await setup();
    const before = listings();
    const child = bench(s);
    await waitFor(child, (out) => /"event":"sample"[^\n]*"phase":"measure"/.test(out), "load");
    child.kill("SIGINT");
    expect(await exited(child)).toBe(130);
    expect(runRecord(s).status).toBe("interrupted");
    expect(listings()).toEqual(before);
    expect(readdirSync(path.join(s.tmp, "ingestbench-runs", "deployments"))).toEqual([]);
  });
});
