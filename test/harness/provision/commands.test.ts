/**
 * `ingestbench up | run | down` and benchOnPulumiStack (the bench command's path for docker/azure stacks), against
 * a RECORDING STAND-IN for the Pulumi CLI: command lines, re-deploys per cell, teardown after success, error and
 * abort. Cell runners here are test doubles except where named: the real one (generators in the loadgen container,
 * real sink) runs end to end in test/e2e/deployed-docker-stack.test.ts.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadStack } from "../../../infra/stack/schema.ts";
import { benchOnPulumiStack, type CellRunContext } from "../../../harness/provision/deployed.ts";
import { runTargets } from "../../../harness/provision/outputs.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import type { CellPlan } from "../../../harness/runner/cell-plan.ts";
import { createPulumiCliStandIn, type PulumiCliStandIn } from "../../helpers/pulumi-cli-stand-in.ts";
import { writeRunRecord } from "../../helpers/run-records.ts";
import { dockerOutputs, projectCopy, repoRoot } from "./fixtures.ts";

const STACK = "docker-4c4g";
let standIn: PulumiCliStandIn | undefined;
let project: string | undefined;
const results = mkdtempSync(path.join(os.tmpdir(), "ib-provision-results-"));
afterAll(() => rmSync(results, { recursive: true, force: true }));
afterEach(() => {
  standIn?.cleanup();
  if (project) rmSync(project, { recursive: true, force: true });
  standIn = project = undefined;
});

function setup(state: Parameters<typeof createPulumiCliStandIn>[0] = {}) {
  standIn = createPulumiCliStandIn({
    deploy: { [STACK]: { outputs: dockerOutputs(), resourceCount: 14 } },
    ...state,
  });
  project = projectCopy();
  const stack = loadStack(path.join(project, "stacks", `Pulumi.${STACK}.yaml`));
  const pinned18 = planCells(
    loadScenarioFile(path.join(repoRoot, "scenarios/clickhouse-direct.yaml")),
    "scenarios/clickhouse-direct.yaml",
    { replicates: 1 },
  )[0]!;
  // pinned to what docker-4c4g's upstream image runs (the pair is checked before anything deploys)
  const direct: CellPlan = {
    ...pinned18,
    sink: { ...pinned18.sink, config: { ...pinned18.sink.config, version: "25.8" } },
  };
  const viaFluentBit: CellPlan = {
    ...direct,
    cell: "via=fluent-bit",
    collector: { name: "fluent-bit", config: {} },
  };
  return { standIn, project, stack, plans: [direct, viaFluentBit] };
}

/** The `ingestbench:cell` JSON text of a cell (event fields, collector and sink blocks), as cellConfig sets it. */
const cellJson = (p: CellPlan) =>
  JSON.stringify({
    event: p.fields,
    collector: p.collector ? { [p.collector.name]: p.collector.config } : "none",
    sink: { [p.sink.name]: p.sink.config },
  });

const record = (ctx: CellRunContext) =>
  writeRunRecord(results, {
    stack: ctx.stack.name,
    invocation: ctx.invocation,
    rows: 1000,
    cell: ctx.plan.cell,
  });
const base = { resultsRoot: results, invocation: "2026-11-29T22:00:00.000Z", quiet: true };

describe("benchOnPulumiStack (recording Pulumi CLI stand-in)", () => {
  it("without a Docker CLI, refuses before deploying anything, naming the missing client (the default cell runner needs it)", async () => {
    const { standIn, project, stack, plans } = setup();
    const env = { ...standIn.env, INGESTBENCH_DOCKER: "/nonexistent/docker" };
    const err = await benchOnPulumiStack({
      ...base,
      stack,
      plans,
      projectRoot: project,
      env,
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("E_REMOTE_EXEC");
    expect((err as Error).message).toBe(
      "`/nonexistent/docker` is not on PATH: a docker stack needs the Docker CLI (https://docs.docker.com/engine/install/), to run the generators in the loadgen container and read each container's counters; checked before deploying anything",
    );
    expect(standIn.calls()).toEqual([]);
  });

  it("without a Pulumi CLI, refuses before anything runs, saying how to install it", async () => {
    const { project, stack, plans } = setup();
    const err = await benchOnPulumiStack({
      ...base,
      stack,
      plans,
      projectRoot: project,
      env: { ...process.env, PATH: "/nonexistent" },
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("E_PULUMI_CLI");
    expect((err as Error).message).toMatch(
      /the Pulumi CLI \(`pulumi`\) is not on PATH \(\/nonexistent\).*curl -fsSL https:\/\/get\.pulumi\.com \| sh/,
    );
  });

  it("deploys per cell's components, hands each cell its targets, destroys at the end", async () => {
    const { standIn, project, stack, plans } = setup();
    const seen: CellRunContext[] = [];
    const r = await benchOnPulumiStack({
      ...base,
      stack,
      plans,
      projectRoot: project,
      env: standIn.env,
      signal: new AbortController().signal,
      runCell: async (ctx) => {
        seen.push(ctx);
        return record(ctx);
      },
    });
    expect(r.interrupted).toBeNull();
    expect(r.records.map((x) => x.cell)).toEqual(["default", "via=fluent-bit"]);
    const targets = seen.map((c) =>
      runTargets(c.outputs, { sink: c.plan.sink.name, collector: c.plan.collector?.name ?? null }),
    );
    expect(
      targets.map((t) => [t.entry.component, t.entry.fromHarness?.port, t.sink.fromHarness?.port]),
    ).toEqual([
      ["clickhouse", 49155, 49155],
      ["fluent-bit", 49153, 49155],
    ]);
    // each cell's config goes in a temporary --config-file (the stack file is never written)
    const ups = standIn.calls().filter((c) => c.argv[0] === "up");
    const cells = ups.map(
      (c) => (parseYaml(c.configFileText!) as { config: Record<string, unknown> }).config,
    );
    expect(cells.map((c) => [c["ingestbench:components"], c["ingestbench:cell"]])).toEqual([
      [{ sink: "clickhouse" }, cellJson(plans[0]!)],
      [{ sink: "clickhouse", collector: "fluent-bit" }, cellJson(plans[1]!)],
    ]);
    expect(standIn.commandLines().map((l) => l.replace(/--config-file \S+/, "--config-file F"))).toEqual([
      `stack select --stack ${STACK} --non-interactive`,
      `stack init ${STACK} --non-interactive`,
      `up --yes --skip-preview --config-file F --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `stack output --json --stack ${STACK} --non-interactive`,
      `stack output --json --show-secrets --stack ${STACK} --non-interactive`,
      `stack history --json --show-secrets --page-size 1 --page 1 --stack ${STACK} --non-interactive`,
      `up --yes --skip-preview --config-file F --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `stack output --json --stack ${STACK} --non-interactive`,
      `stack output --json --show-secrets --stack ${STACK} --non-interactive`,
      `stack history --json --show-secrets --page-size 1 --page 1 --stack ${STACK} --non-interactive`,
      `destroy --yes --skip-preview --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `stack history --json --show-secrets --page-size 1 --page 1 --stack ${STACK} --non-interactive`,
    ]);
  });

  it("destroys the stack when a cell fails, and rethrows", async () => {
    const { standIn, project, stack, plans } = setup();
    const err = await benchOnPulumiStack({
      ...base,
      stack,
      plans,
      projectRoot: project,
      env: standIn.env,
      signal: new AbortController().signal,
      runCell: async () => {
        throw new Error("loadgen unreachable");
      },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe("loadgen unreachable");
    expect(
      standIn
        .commandLines()
        .filter((l) => /^(up|destroy) /.test(l))
        .map((l) => l.split(" ")[0]),
    ).toEqual(["up", "destroy"]);
    expect(standIn.state().stacks[STACK]!.resourceCount).toBe(0);
  });

  it("on abort during a cell: keeps the runs made so far, skips the rest, destroys the stack", async () => {
    const { standIn, project, stack, plans } = setup();
    const ac = new AbortController();
    const r = await benchOnPulumiStack({
      ...base,
      stack,
      plans,
      projectRoot: project,
      env: standIn.env,
      signal: ac.signal,
      runCell: async (ctx) => {
        ac.abort("SIGINT");
        return record(ctx);
      },
    });
    expect(r.interrupted).toBe("SIGINT");
    expect(r.records).toHaveLength(1);
    const verbs = standIn
      .commandLines()
      .filter((l) => /^(up|destroy) /.test(l))
      .map((l) => l.split(" ")[0]);
    expect(verbs).toEqual(["up", "destroy"]);
  });
});

describe("ingestbench up | run | down with the recording Pulumi CLI stand-in on PATH", () => {
  const cli = (standIn: PulumiCliStandIn, ...args: string[]) =>
    spawnSync(process.execPath, ["bin/ingestbench.js", ...args], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 60_000,
      env: standIn.env,
    });

  it("up prints the contract's outputs and leaves the stack up; the repo's stack file is untouched", () => {
    const { standIn } = setup();
    const file = path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`);
    const before = readFileSync(file, "utf8");
    const r = cli(standIn, "up", "--stack", STACK, "--json", "--quiet");
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(dockerOutputs());
    expect(
      standIn
        .commandLines()
        .filter((l) => /^(up|destroy|config) /.test(l))
        .map((l) => l.split(" ")[0]),
    ).toEqual(["up"]);
    expect(standIn.calls().every((c) => c.cwd === repoRoot)).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("run on a deployed stack: the scenario's pin is checked against the stack's image before anything is deployed, the stack stays up (exit 2)", () => {
    const { standIn } = setup({
      stacks: {
        [STACK]: {
          config: {},
          outputs: dockerOutputs(),
          resourceCount: 14,
          deploy: { outputs: dockerOutputs(), resourceCount: 14 },
        },
      },
    });
    const r = cli(
      standIn,
      "run",
      "--stack",
      STACK,
      "scenarios/clickhouse-direct.yaml",
      "--quiet",
      "--results",
      results,
    );
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/pins clickhouse 18\.16\.1, but stack docker-4c4g deploys clickhouse 25\.8/);
    expect(
      standIn
        .commandLines()
        .filter((l) => /^(up|destroy) /.test(l))
        .map((l) => l.split(" ")[0]),
    ).toEqual([]);
    expect(standIn.state().stacks[STACK]!.resourceCount).toBe(14);
  });

  it("run on a stack that is not deployed says to `up` it first (exit 3)", () => {
    const { standIn } = setup({ stacks: { [STACK]: { config: {}, outputs: {}, resourceCount: 0 } } });
    const scenario25 = path.join(results, "clickhouse-direct-25.8.yaml");
    writeFileSync(
      scenario25,
      readFileSync(path.join(repoRoot, "scenarios/clickhouse-direct.yaml"), "utf8").replace(
        '"18.16.1"',
        '"25.8"',
      ),
    );
    const r = cli(standIn, "run", "--stack", STACK, scenario25);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /has no outputs: it is not deployed; run `ingestbench up --stack docker-4c4g` first/,
    );
  });

  it("down --cancel releases a stale lock, then destroys (exit 0)", () => {
    const { standIn } = setup({
      stacks: { [STACK]: { config: {}, outputs: dockerOutputs(), resourceCount: 14, locked: true } },
    });
    const r = cli(standIn, "down", "--stack", STACK, "--cancel", "--quiet");
    expect(r.status, r.stderr).toBe(0);
    expect(
      standIn
        .commandLines()
        .filter((l) => /^(cancel|destroy) /.test(l))
        .map((l) => l.split(" ")[0]),
    ).toEqual(["destroy", "cancel", "destroy"]);
    expect(standIn.state().stacks[STACK]).toMatchObject({ locked: false, resourceCount: 0 });
  });

  it("down of an unknown stack fails with ProvisioningError (exit 3) quoting the CLI", () => {
    const { standIn } = setup();
    const r = cli(standIn, "down", "--stack", STACK);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(
      /stack docker-4c4g: cannot select it: error: no stack named 'docker-4c4g' found/,
    );
  });

  it("Ctrl-C during `up`: the CLI gets SIGINT, the lock it left is cancelled, the stack destroyed; exit 130", async () => {
    const { standIn } = setup({ hang: ["up"], lockOnInterrupt: true });
    const child = spawn(process.execPath, ["bin/ingestbench.js", "up", "--stack", STACK, "--quiet"], {
      cwd: repoRoot,
      env: standIn.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const deadline = Date.now() + 30_000;
    while (!standIn.commandLines().some((l) => l.startsWith("up ")) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGINT");
    expect(await exited, stderr).toBe(130);
    const lines = standIn.commandLines();
    expect(lines.slice(lines.findIndex((l) => l.startsWith("up ")) + 1).map((l) => l.split(" ")[0])).toEqual([
      "destroy",
      "cancel",
      "destroy",
      "stack",
    ]);
    expect(standIn.state().stacks[STACK]).toMatchObject({ locked: false, resourceCount: 0 });
    expect(stderr).toMatch(/SIGINT: stopping; cancelling the Pulumi update and destroying the stack/);
  });
});
