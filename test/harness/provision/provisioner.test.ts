/**
 * The Automation API provisioner, driven through its public interface against a RECORDING STAND-IN for the Pulumi
 * CLI (test/helpers/pulumi-cli-stand-in.ts): no real Pulumi CLI, Docker engine or Azure subscription is involved.
 * Asserted: the exact command lines @pulumi/pulumi 3.248.0's Automation API issues, output parsing against the
 * outputs contract, teardown on error and on abort, the no-CLI error.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadStack } from "../../../infra/stack/schema.ts";
import { ProvisioningError } from "../../../core/errors.ts";
import { runTargets } from "../../../harness/provision/outputs.ts";
import { cellConfig, PulumiProvisioner, withPulumiStack } from "../../../harness/provision/provisioner.ts";
import { createPulumiCliStandIn, type PulumiCliStandIn } from "../../helpers/pulumi-cli-stand-in.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { fromPulumiConfig } from "../../../infra/stack/schema.ts";
import { hostPipelines, pipelineOf } from "../../../infra/docker/pipeline.ts";
import { catalogEntry } from "../../../infra/catalog.ts";
import { dockerOutputs, projectCopy, repoRoot } from "./fixtures.ts";

/** The planned cells of a committed scenario (one replicate), by cell id. */
function cellsOf(scenario: string): Map<string, ReturnType<typeof planCells>[number]> {
  const file = path.join(repoRoot, "scenarios", scenario);
  return new Map(planCells(loadScenarioFile(file), file, { replicates: 1 }).map((p) => [p.cell, p]));
}
/** The `ingestbench:cell` text `config set-all` carries for a CellPlan (what cellConfig must send, built independently). */
const cellJson = (p: {
  fields: unknown;
  collector: { name: string; config: unknown } | null;
  sink: { name: string; config: unknown };
}) =>
  JSON.stringify({
    event: p.fields,
    collector: p.collector ? { [p.collector.name]: p.collector.config } : "none",
    sink: { [p.sink.name]: p.sink.config },
  });

const STACK = "docker-4c4g";
let standIn: PulumiCliStandIn | undefined;
let project: string | undefined;

afterEach(() => {
  standIn?.cleanup();
  if (project) rmSync(project, { recursive: true, force: true });
  standIn = undefined;
  project = undefined;
});

function setup(state: Parameters<typeof createPulumiCliStandIn>[0] = {}) {
  standIn = createPulumiCliStandIn({
    deploy: { [STACK]: { outputs: dockerOutputs(), resourceCount: 14 } },
    ...state,
  });
  project = projectCopy();
  const spec = loadStack(path.join(project, "stacks", `Pulumi.${STACK}.yaml`));
  return { standIn, project, spec, opts: { projectDir: project, env: standIn.env } };
}

describe("PulumiProvisioner with the recording Pulumi CLI stand-in", () => {
  it("creates the stack, hands the cell's components and parameters in a temporary --config-file, runs up and reads the outputs: exact command lines", async () => {
    const { standIn, project, spec, opts } = setup();
    const before = readFileSync(path.join(project, "stacks", `Pulumi.${STACK}.yaml`), "utf8");
    const p = await PulumiProvisioner.open(STACK, opts);
    const plan = cellsOf("fluent-bit-clickhouse-batch-count.yaml").get("batch=200,requests=10")!;
    const outputs = await p.up({ config: cellConfig(spec, plan) });
    const cell = cellJson(plan);
    expect(cell).toContain('"fluent-bit":{"version":"4.0.3","service":{"flush":1}');

    expect(standIn.calls()[0]!.argv).toEqual(["version"]);
    const configFile = standIn.state().stacks[STACK]!.configFile!;
    expect(path.basename(path.dirname(configFile.path))).toMatch(/^ib-pulumi-config-/);
    expect(standIn.commandLines()).toEqual([
      `stack select --stack ${STACK} --non-interactive`,
      `stack init ${STACK} --non-interactive`,
      `up --yes --skip-preview --config-file ${configFile.path} --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `stack output --json --stack ${STACK} --non-interactive`,
      `stack output --json --show-secrets --stack ${STACK} --non-interactive`,
      `stack history --json --show-secrets --page-size 1 --page 1 --stack ${STACK} --non-interactive`,
    ]);
    // every call ran in the project directory, marked as driven by the Automation API
    for (const c of standIn.calls().slice(1)) {
      expect(c.cwd).toBe(project);
      expect(c.env.PULUMI_AUTOMATION_API).toBe("true");
    }
    // the config file: the stack file's config with the cell's keys added (--path: components is one map)
    const handed = parseYaml(configFile.text) as { config: Record<string, unknown> };
    expect(handed.config).toEqual({
      ...(parseYaml(before) as { config: Record<string, unknown> }).config,
      "ingestbench:components": { sink: "clickhouse", collector: "fluent-bit" },
      "ingestbench:cell": cell,
    });
    // the CLI wrote into the config file, which is gone; the tracked stack file was never written
    expect(existsSync(path.dirname(configFile.path))).toBe(false);
    expect(readFileSync(path.join(project, "stacks", `Pulumi.${STACK}.yaml`), "utf8")).toBe(before);

    expect(outputs.platform).toBe("docker");
    expect(outputs.hosts.sink!.limits.applied.cfsQuotaUs).toBe(200000);
    const targets = runTargets(outputs, { sink: "clickhouse", collector: "fluent-bit" });
    expect(targets.entry.component).toBe("fluent-bit");
    expect(targets.entry.inStack).toEqual({ host: "10.77.0.11", port: 9880, scheme: "http" });
    expect(targets.entry.fromHarness).toEqual({ host: "127.0.0.1", port: 49153 });
    expect(targets.sink.fromHarness).toEqual({ host: "127.0.0.1", port: 49155 });
  });

  it("selects an existing stack without init, and refresh/destroy/cancel issue their command lines", async () => {
    const { standIn, opts } = setup({
      stacks: { [STACK]: { config: {}, outputs: dockerOutputs(), resourceCount: 14 } },
      current: null,
    });
    const p = await PulumiProvisioner.open(STACK, opts);
    await p.refresh();
    await p.cancel();
    await p.destroy();
    expect(standIn.commandLines()).toEqual([
      `stack select --stack ${STACK} --non-interactive`,
      `refresh --skip-preview --yes --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `stack history --json --show-secrets --page-size 1 --page 1 --stack ${STACK} --non-interactive`,
      `cancel --yes --stack ${STACK} --non-interactive`,
      `destroy --yes --skip-preview --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `stack history --json --show-secrets --page-size 1 --page 1 --stack ${STACK} --non-interactive`,
    ]);
    expect(standIn.state().stacks[STACK]!.resourceCount).toBe(0);
    await expect(p.outputs()).rejects.toThrow(/has no outputs: it is not deployed/);
  });

  it("rejects outputs that break the contract, naming the field", async () => {
    const bad = dockerOutputs();
    (bad.hosts as Record<string, { limits: { enforced: unknown } }>).sink!.limits.enforced = "yes";
    const { opts } = setup({ deploy: { [STACK]: { outputs: bad, resourceCount: 3 } } });
    const p = await PulumiProvisioner.open(STACK, opts);
    const err = await p.up().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvisioningError);
    expect((err as ProvisioningError).code).toBe("E_STACK_OUTPUTS");
    expect((err as Error).message).toMatch(
      /hosts\.sink\.limits\.enforced: Expected boolean, received string/,
    );
  });

  it("destroys the stack when up fails, and rethrows up's error with the CLI's message", async () => {
    const { standIn, opts } = setup({
      fail: {
        up: {
          stderr: "error: docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock",
          exitCode: 255,
        },
      },
    });
    const p = await PulumiProvisioner.open(STACK, opts);
    let ran = false;
    const err = await withPulumiStack(p, {}, async () => {
      ran = true;
    }).catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect((err as ProvisioningError).code).toBe("E_PULUMI_UP");
    expect((err as Error).message).toMatch(/Cannot connect to the Docker daemon/);
    expect(standIn.commandLines().filter((l) => l.startsWith("destroy "))).toHaveLength(1);
  });

  it("destroys the stack when the work on it fails", async () => {
    const { standIn, opts } = setup();
    const p = await PulumiProvisioner.open(STACK, opts);
    await expect(
      withPulumiStack(p, {}, async () => {
        throw new Error("generator died");
      }),
    ).rejects.toThrow("generator died");
    const lines = standIn.commandLines();
    expect(lines.findIndex((l) => l.startsWith("destroy "))).toBeGreaterThan(
      lines.findIndex((l) => l.startsWith("up ")),
    );
    expect(standIn.state().stacks[STACK]!.resourceCount).toBe(0);
  });

  it("on abort (Ctrl-C) interrupts up with SIGINT, cancels the lock it left and destroys the stack", async () => {
    const { standIn, opts } = setup({ hang: ["up"], lockOnInterrupt: true });
    const p = await PulumiProvisioner.open(STACK, opts);
    const ac = new AbortController();
    const t0 = Date.now();
    const done = withPulumiStack(p, { signal: ac.signal }, async () => "never");
    // wait until the stand-in is inside `up`, then abort as the SIGINT handler does
    while (!standIn.commandLines().some((l) => l.startsWith("up ")))
      await new Promise((r) => setTimeout(r, 20));
    ac.abort("SIGINT");
    const err = await done.catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("E_INTERRUPTED");
    expect(Date.now() - t0).toBeLessThan(30_000); // the stand-in would hang 60 s without the SIGINT
    const lines = standIn.commandLines();
    const up = lines.findIndex((l) => l.startsWith("up "));
    expect(lines.slice(up + 1)).toEqual([
      `destroy --yes --skip-preview --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `cancel --yes --stack ${STACK} --non-interactive`,
      `destroy --yes --skip-preview --exec-kind auto.local --stack ${STACK} --non-interactive`,
      `stack history --json --show-secrets --page-size 1 --page 1 --stack ${STACK} --non-interactive`,
    ]);
    expect(standIn.state().stacks[STACK]!.locked).toBe(false);
  });

  it("a locked stack is not unlocked without being asked: the error says how", async () => {
    const { standIn, opts } = setup({
      stacks: { [STACK]: { config: {}, outputs: dockerOutputs(), resourceCount: 14, locked: true } },
    });
    const p = await PulumiProvisioner.open(STACK, opts);
    const err = await p.destroy().catch((e: unknown) => e);
    expect((err as ProvisioningError).code).toBe("E_PULUMI_LOCKED");
    expect((err as Error).message).toMatch(/ingestbench down --stack docker-4c4g --cancel/);
    expect(standIn.commandLines().some((l) => l.startsWith("cancel"))).toBe(false);
  });

  it("refuses a CLI older than the SDK's minimum version (3.2.0-alpha) as the SDK checks it", async () => {
    const { opts } = setup({ version: "3.1.0" });
    const err = await PulumiProvisioner.open(STACK, opts).catch((e: unknown) => e);
    expect((err as ProvisioningError).code).toBe("E_PULUMI_CLI");
    expect((err as Error).message).toMatch(/Minimum version requirement failed.*3\.2\.0-alpha.*3\.1\.0/);
  });

  it("without a Pulumi CLI on PATH: ProvisioningError (exit 3) naming what is missing and how to install it", async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "ib-no-pulumi-"));
    try {
      writeFileSync(path.join(empty, "not-pulumi"), "");
      project = projectCopy();
      const err = await PulumiProvisioner.open(STACK, {
        projectDir: project,
        env: { ...process.env, PATH: empty },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProvisioningError);
      expect((err as ProvisioningError).exitCode).toBe(3);
      expect((err as Error).message).toContain(`the Pulumi CLI (\`pulumi\`) is not on PATH (${empty})`);
      expect((err as Error).message).toContain("curl -fsSL https://get.pulumi.com | sh");
      expect((err as Error).message).toContain("https://www.pulumi.com/docs/install/");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("cellConfig refuses a component on a host the stack does not have", () => {
    const project2 = projectCopy();
    try {
      const spec = loadStack(path.join(project2, "stacks", `Pulumi.${STACK}.yaml`));
      const plan = cellsOf("fluent-bit-clickhouse-batch-count.yaml").get("batch=200,requests=10")!;
      expect(() =>
        cellConfig(
          { ...spec, hosts: { loadgen: spec.hosts.loadgen!, sink: spec.hosts.sink! } },
          { ...plan, collector: { name: "vector", config: {} } },
        ),
      ).toThrow(/runs vector on host "collector"; the stack has loadgen, sink/);
    } finally {
      rmSync(project2, { recursive: true, force: true });
    }
  });

  it("a chunk_limit_records cell travels as ingestbench:cell JSON text, and the program's schema and renderer get 5000 back", async () => {
    const { standIn, opts } = setup();
    const spec = loadStack(path.join(repoRoot, "stacks", "Pulumi.azure-d4s-v5-two-collectors.yaml"));
    const plan = cellsOf("fluentd-griddb-chunk-limit-records.yaml").get("chunk_limit_records=5000")!;
    const config = cellConfig(spec, plan);
    // both collector hosts run the cell's collector
    expect(
      Object.fromEntries(
        Object.entries(config)
          .filter(([k]) => k.startsWith("ingestbench:components."))
          .map(([k, v]) => [k, v.value]),
      ),
    ).toEqual({
      "ingestbench:components.sink": "griddb",
      "ingestbench:components.collector-1": "fluentd",
      "ingestbench:components.collector-2": "fluentd",
    });
    const p = await PulumiProvisioner.open(STACK, opts);
    await p.up({ config });
    const handed = (
      parseYaml(standIn.state().stacks[STACK]!.configFile!.text) as { config: Record<string, string> }
    ).config;
    expect(handed["ingestbench:cell"]).toBe(cellJson(plan));
    expect(handed["ingestbench:cell"]).toContain(
      '"buffer":{"@type":"memory","chunk_limit_records":5000,"chunk_limit_size":"64MB"',
    );
    expect(handed["ingestbench:cell"]).toContain(
      '"griddb":{"version":"5.6.0","cluster":"myCluster","database":"public","container":"fluentdStress","containerType":"COLLECTION"}',
    );
    // what the config file holds is what Pulumi hands the program (top-level config values are strings): the stack
    // schema decodes it and the docker program renders fluent.conf with Fluentd's own setting name
    const program = fromPulumiConfig("azure-d4s-v5-two-collectors", {
      ...configOfFileText(spec.file),
      "ingestbench:cell": handed["ingestbench:cell"]!,
    });
    expect(program.platform.cell?.collector?.name).toBe("fluentd");
    const rendered = hostPipelines(
      [
        ["collector-1", catalogEntry("fluentd"), "10.0.0.11"],
        ["sink", catalogEntry("griddb"), "10.0.0.12"],
      ],
      pipelineOf(program.platform),
    );
    expect(rendered["collector-1"]!.config!.text).toMatch(
      /<buffer tag>[\s\S]*\n    chunk_limit_records 5000\n/,
    );
  });
});

/** A stack file's config as Pulumi hands it to the program: strings as they are, the rest as JSON text. */
function configOfFileText(file: string): Record<string, string> {
  const doc = parseYaml(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  return Object.fromEntries(
    Object.entries(doc.config).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}
