/**
 * The provisioner's outputs schema against what the real Pulumi program exports: each docker and azure stack file in stacks/
 * is run through infra/index.ts under Pulumi's own mocks (`pulumi.runtime.setMocks`, no CLI or engine), its outputs
 * are JSON round-tripped as `pulumi stack output --json` would print them, and parseStackOutputs must accept them.
 * This catches the harness and the program drifting apart on the contract (core/outputs.ts).
 */
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { listStacks, loadStack } from "../../../infra/stack/schema.ts";
import { parseStackOutputs, runTargets, type OutputMap } from "../../../harness/provision/outputs.ts";
import { configOfFile, runPulumiProgram } from "../../helpers/pulumi-program.ts";
import { repoRoot } from "./fixtures.ts";

// GridDB has no default password: the program takes it from INGESTBENCH_GRIDDB_PASSWORD (infra/secrets.ts) here
process.env.INGESTBENCH_GRIDDB_PASSWORD ??= "pw-outputs-contract-test";
// nor have PostgreSQL and ClickHouse (their catalog secretEnv)
process.env.INGESTBENCH_POSTGRES_PASSWORD ??= "pw-pg-outputs-contract-test";
process.env.INGESTBENCH_CLICKHOUSE_PASSWORD ??= "pw-ch-outputs-contract-test";

const stacksDir = path.join(repoRoot, "stacks");
const dockerStacks = listStacks(stacksDir).filter((s) => loadStack(s, stacksDir).platform === "docker");

describe("outputs of the Pulumi program (under pulumi.runtime.setMocks) pass the provisioner's contract check", () => {
  it("there are docker stacks to check", () => {
    expect(dockerStacks.length).toBeGreaterThanOrEqual(2);
  });

  for (const name of dockerStacks) {
    it(`stack ${name}`, async () => {
      const spec = loadStack(name, stacksDir);
      const run = await runPulumiProgram(name, configOfFile(spec.file));
      await vi.waitFor(
        () => expect(Object.keys(run.outputs.hosts)).toHaveLength(Object.keys(spec.hosts).length),
        { timeout: 5000 },
      );
      await run.settle();
      const printed = JSON.parse(JSON.stringify(run.outputs)) as Record<string, unknown>;
      const map: OutputMap = Object.fromEntries(
        Object.entries(printed).map(([k, v]) => [k, { value: v, secret: false }]),
      );
      const outputs = parseStackOutputs(name, map);
      expect(outputs.platform).toBe("docker");
      expect(Object.keys(outputs.hosts).sort()).toEqual(Object.keys(spec.hosts).sort());
      // the sink's data endpoint is resolvable (published ports are null under mocks: Docker picks them at creation)
      const sinkComponent = outputs.hosts.sink?.component;
      expect(sinkComponent).toBeTruthy();
      const t = runTargets(outputs, { sink: sinkComponent!, collector: null });
      expect(t.sink.inStack.host).toBe(outputs.hosts.sink!.address);
      expect(t.sink.fromHarness).toBeNull();
    });
  }

  // azure: with the caller's address and key set as a user does before `pulumi up`, and a public address per VM as
  // Azure would assign it; collector hosts carry the config cloud-init writes (hosts.<h>.config)
  const azureStacks = listStacks(stacksDir).filter((s) => loadStack(s, stacksDir).platform === "azure");
  for (const name of azureStacks) {
    it(`stack ${name}`, async () => {
      const spec = loadStack(name, stacksDir);
      const cfg = configOfFile(spec.file);
      const azure = {
        ...(JSON.parse(cfg["ingestbench:azure"]!) as Record<string, unknown>),
        allowFrom: "100.64.12.34/32",
        sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIContractTestKeyOnly000000000000000000000000 t@ib",
      };
      let n = 0;
      const run = await runPulumiProgram(
        name,
        { ...cfg, "ingestbench:azure": JSON.stringify(azure) },
        (type) => (type === "azure-native:network:PublicIPAddress" ? { ipAddress: `20.50.0.${++n}` } : {}),
      );
      await vi.waitFor(
        () => expect(Object.keys(run.outputs.hosts)).toHaveLength(Object.keys(spec.hosts).length),
        { timeout: 5000 },
      );
      await run.settle();
      const printed = JSON.parse(JSON.stringify(run.outputs)) as Record<string, unknown>;
      const map: OutputMap = Object.fromEntries(
        Object.entries(printed).map(([k, v]) => [k, { value: v, secret: false }]),
      );
      const outputs = parseStackOutputs(name, map);
      expect(outputs.platform).toBe("azure");
      expect(Object.keys(outputs.hosts).sort()).toEqual(Object.keys(spec.hosts).sort());
      for (const [h, out] of Object.entries(outputs.hosts)) {
        if (/^collector(-\d+)?$/.test(h)) expect(out.config, h).toMatchObject({ source: "defaults" });
        else expect(out.config, h).toBeUndefined();
      }
      const sinkComponent = outputs.hosts.sink!.component;
      const t = runTargets(outputs, { sink: sinkComponent, collector: null });
      expect(t.sink.inStack.host).toBe(outputs.hosts.sink!.address);
    });
  }
});
