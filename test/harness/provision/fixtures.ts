/**
 * Shared fixtures of the provisioner tests: a throwaway project directory (Pulumi.yaml and one stack file copied
 * from the repo, so that `config set-all` never touches the repo's stacks/) and the outputs a docker-4c4g
 * deployment of Fluent Bit → ClickHouse exports (shape of core/outputs.ts).
 */
import { copyFileSync, mkdirSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** A temp project dir with Pulumi.yaml and stacks/Pulumi.<stack>.yaml copied from the repo. */
export function projectCopy(stacks: string[] = ["docker-4c4g"]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ib-pulumi-project-"));
  copyFileSync(path.join(repoRoot, "Pulumi.yaml"), path.join(dir, "Pulumi.yaml"));
  mkdirSync(path.join(dir, "stacks"));
  for (const s of stacks)
    copyFileSync(
      path.join(repoRoot, "stacks", `Pulumi.${s}.yaml`),
      path.join(dir, "stacks", `Pulumi.${s}.yaml`),
    );
  return dir;
}

const limits = (applied: Record<string, number>) => ({
  requested: {},
  applied,
  enforced: true,
  notes: [] as string[],
});

/** Outputs of docker-4c4g running fluent-bit on `collector` and clickhouse on `sink`. */
export function dockerOutputs(stack = "docker-4c4g"): Record<string, unknown> {
  return {
    platform: "docker",
    stack,
    network: { name: `ib-${stack}`, subnet: "10.77.0.0/24" },
    hosts: {
      loadgen: {
        address: "10.77.0.10",
        container: `ib-${stack}-loadgen`,
        component: "loadgen",
        image: "node:20.20-bookworm-slim",
        limits: limits({ cfsQuotaUs: 50000, cfsPeriodUs: 100000, memoryBytes: 536870912 }),
      },
      collector: {
        address: "10.77.0.11",
        container: `ib-${stack}-collector`,
        component: "fluent-bit",
        image: "fluent/fluent-bit:4.0.3",
        limits: limits({ cfsQuotaUs: 150000, cfsPeriodUs: 100000, memoryBytes: 1073741824 }),
      },
      sink: {
        address: "10.77.0.12",
        container: `ib-${stack}-sink`,
        component: "clickhouse",
        image: "clickhouse/clickhouse-server:25.8",
        limits: limits({ cfsQuotaUs: 200000, cfsPeriodUs: 100000, memoryBytes: 2147483648 }),
      },
    },
    endpoints: {
      "fluent-bit": [
        {
          host: "collector",
          data: { host: "10.77.0.11", port: 9880, scheme: "http" },
          metrics: { host: "10.77.0.11", port: 2020, scheme: "http" },
          published: [
            { internal: 9880, external: 49153, ip: "127.0.0.1", protocol: "tcp" },
            { internal: 2020, external: 49154, ip: "127.0.0.1", protocol: "tcp" },
          ],
        },
      ],
      clickhouse: [
        {
          host: "sink",
          data: { host: "10.77.0.12", port: 8123, scheme: "http" },
          metrics: { host: "10.77.0.12", port: 9363, scheme: "prometheus" },
          published: [{ internal: 8123, external: 49155, ip: "127.0.0.1", protocol: "tcp" }],
        },
      ],
    },
    versions: {
      "fluent-bit": { pinned: "4.0.3", image: "fluent/fluent-bit:4.0.3", digestResolved: false },
      clickhouse: { pinned: "25.8", image: "clickhouse/clickhouse-server:25.8", digestResolved: false },
    },
  };
}
