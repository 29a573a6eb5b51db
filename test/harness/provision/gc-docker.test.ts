/**
 * `ingestbench gc` after SIGKILL of the harness, on the REAL Docker engine (scripts/docker-engine.sh): a harness
 * process (test/helpers/deploy-child.ts: registers its deployment as `bench` does, creates the stack's network,
 * volume and containers with the platform's labels, runs a process in the loadgen container through docker exec)
 * is killed during deploy, during load and during drain; then `ingestbench gc --json` (the real CLI) finds and
 * removes every container, network, volume and dangling built image labelled with the stack, marks its run.json interrupted and removes
 * the registry, and `docker ps -a`, `docker network ls`, `docker volume ls` list what they listed before. A
 * deployment whose owner is alive is left alone; `--dry-run` lists without removing.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../../helpers/cleanups.ts";
import { DOCKER_ENV, engine } from "../../helpers/docker-engine.ts";
import { repoRoot } from "./fixtures.ts";

const cleanups = useCleanups();

/**
 * The engine's listings as the CLI prints them: container, network and volume names. The engine is shared with
 * other test files on this machine: the resources of other ingestbench stacks and tests (`ib-…` not of `stack`)
 * come and go on their own and are left out; everything else, and everything of `stack`, is compared.
 */
function listings(stack: string): { containers: string[]; networks: string[]; volumes: string[] } {
  const ours = (n: string) => !n.startsWith("ib-") || n.startsWith(`ib-${stack}`);
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

/** Start the harness stand-in; resolves once it printed `phase <phase>`. */
function startHarness(stack: string, tmp: string, results: string, phase: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/helpers/deploy-child.ts", stack, results], {
    cwd: repoRoot,
    env: { ...DOCKER_ENV, TMPDIR: tmp },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(async () => void child.kill("SIGKILL"));
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => void (err += d));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      if (out.includes(`phase ${phase}\n`)) resolve(child);
    });
    child.on("exit", (code) =>
      reject(new Error(`harness stand-in exited ${code} before phase ${phase}:\n${err}`)),
    );
  });
}

function gc(tmp: string, ...flags: string[]): { status: number | null; json: Record<string, any> } {
  const r = spawnSync(process.execPath, ["bin/ingestbench.js", "gc", "--json", ...flags], {
    cwd: repoRoot,
    env: { ...DOCKER_ENV, TMPDIR: tmp },
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(r.stdout, r.stderr).toMatch(/^\{/);
  return { status: r.status, json: JSON.parse(r.stdout) };
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.on("exit", () => resolve());
    child.kill("SIGKILL");
  });

describe("gc after SIGKILL of the harness, on the real Docker engine", () => {
  for (const phase of ["deploy", "load", "drain"]) {
    it(`killed during ${phase}: gc removes the stack's containers, network and volume by label; the engine lists what it did before`, async () => {
      const docker = await engine();
      const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-gc-docker-"));
      cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
      const stack = `gctest-${process.pid}-${phase}`;
      const label = `ingestbench.stack=${stack}`;
      cleanups.push(
        async () =>
          void spawnSync(
            "sh",
            [
              "-c",
              `docker rm -f $(docker ps -aq --filter label=${label}) ; docker network rm ib-${stack}; docker volume rm ib-${stack}-sink-data`,
            ],
            { env: DOCKER_ENV },
          ),
      );
      const before = listings(stack);

      const child = await startHarness(stack, tmp, path.join(tmp, "results"), phase);
      // an image build of the stack cut short leaves an untagged (dangling) image with the stack's label
      const built =
        phase === "deploy"
          ? spawnSync("docker", ["build", "-q", "--label", label, "-"], {
              env: DOCKER_ENV,
              encoding: "utf8",
              input: "FROM ingestbench/debian:bookworm\nRUN echo interrupted build > /step\n",
            }).stdout.trim()
          : undefined;
      if (built !== undefined) {
        expect(built).toMatch(/^sha256:/);
        cleanups.push(async () => void spawnSync("docker", ["rmi", built], { env: DOCKER_ENV }));
      }
      await killed(child);
      const left = await docker.listContainers({ all: true, filters: { label: [label] } });
      expect(left.length).toBeGreaterThanOrEqual(phase === "deploy" ? 0 : 2);
      expect((await docker.listNetworks({ filters: { label: [label] } })).map((n) => n.Name)).toEqual([
        `ib-${stack}`,
      ]);
      const registry = path.join(tmp, "ingestbench-runs", "deployments", `${stack}.json`);
      expect(existsSync(registry)).toBe(true);

      const { status, json } = gc(tmp);
      expect(json.deployments.errors).toEqual([]);
      expect(status).toBe(0);
      const dead = json.deployments.collected.find((c: { stack: string }) => c.stack === stack);
      expect(dead).toMatchObject({
        stack,
        platform: "docker",
        command: "bench",
        ownerPid: child.pid,
        destroyed: false,
      });
      expect(dead.notes.join("\n")).toMatch(/Pulumi state not destroyed: .*Pulumi CLI/);
      expect(dead.removed.networks).toEqual([`ib-${stack}`]);
      expect(dead.removed.volumes).toEqual([`ib-${stack}-sink-data`]);
      expect(dead.removed.containers.sort()).toEqual(left.map((c) => c.Names[0]!.slice(1)).sort());

      if (built !== undefined) {
        expect(dead.removed.images).toContain(built);
        expect(spawnSync("docker", ["image", "inspect", built], { env: DOCKER_ENV }).status).not.toBe(0);
      }
      expect(listings(stack)).toEqual(before);
      expect(await docker.listContainers({ all: true, filters: { label: [label] } })).toEqual([]);
      expect(existsSync(registry)).toBe(false);
      const runJson = path.join(tmp, "results", stack, "quickstart", "run-1", "run.json");
      if (phase !== "deploy") {
        expect(dead.records).toEqual([runJson]);
        expect(JSON.parse(readFileSync(runJson, "utf8"))).toMatchObject({
          status: "interrupted",
          error: { code: "E_KILLED" },
        });
      }
      // a second gc finds nothing more
      expect(gc(tmp).json.deployments.collected).toEqual([]);
    });
  }

  it("a deployment whose owner runs is left alone; --dry-run lists a dead one and removes nothing", async () => {
    const docker = await engine();
    const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-gc-docker-"));
    cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
    const stack = `gctest-${process.pid}-live`;
    const label = `ingestbench.stack=${stack}`;
    cleanups.push(
      async () =>
        void spawnSync(
          "sh",
          [
            "-c",
            `docker rm -f $(docker ps -aq --filter label=${label}) ; docker network rm ib-${stack}; docker volume rm ib-${stack}-sink-data`,
          ],
          { env: DOCKER_ENV },
        ),
    );
    const child = await startHarness(stack, tmp, path.join(tmp, "results"), "load");
    const live = gc(tmp);
    expect(live.json.deployments.live).toEqual([{ stack, ownerPid: child.pid, command: "bench" }]);
    expect(live.json.deployments.collected).toEqual([]);
    expect((await docker.listContainers({ all: true, filters: { label: [label] } })).length).toBe(2);

    await killed(child);
    const dry = gc(tmp, "--dry-run");
    expect(dry.json.deployments).toMatchObject({ dryRun: true, collected: [{ stack, removed: null }] });
    expect((await docker.listContainers({ all: true, filters: { label: [label] } })).length).toBe(2);
    expect(gc(tmp).json.deployments.collected[0].removed.containers.length).toBe(2);
    expect(await docker.listContainers({ all: true, filters: { label: [label] } })).toEqual([]);
  });
});
