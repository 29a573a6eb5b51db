/**
 * Deployment registries: which harness process owns a deployment that is meant to go away with it, so that
 * `ingestbench gc` can tell the leftovers of a killed harness from a stack someone keeps up.
 *
 * `${os.tmpdir()}/ingestbench-runs/deployments/<stack>.json` (beside the local platform's run registries,
 * infra/local/platform.ts registryDir) is written before the first `pulumi up` of `ingestbench bench` (and of
 * `ingestbench up` until its deployment succeeds: a kept stack is the user's) and removed once the stack is
 * destroyed. It holds the owner's pid and start time (to detect pid reuse), the platform, the engine the
 * containers went to (DOCKER_HOST) and the run records the runs on it wrote, which gc marks interrupted.
 * `ingestbench run --stack` (the stack is up before and stays up) writes none.
 */
import fs from "node:fs/promises";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Platform } from "../../core/limits.ts";
import { isOwnerAlive, processStartTicks, registryDir } from "../../infra/local/platform.ts";

/** One deployment registry file. */
export interface DeploymentRegistry {
  stack: string;
  platform: Platform;
  ownerPid: number;
  /** field 22 of /proc/<ownerPid>/stat, as in infra/local/platform.ts RunRegistry */
  ownerStartTicks?: number;
  createdAt: string;
  /** the owner's DOCKER_HOST (docker stacks: the engine holding the containers); null: the engine's default */
  dockerHost: string | null;
  /** the command that deployed it, for the report ("bench", "up") */
  command: string;
  /** run.json files of runs on this deployment (gc marks those still "running" as interrupted) */
  resultRecords: string[];
}

/** Directory of deployment registries. */
export function deploymentDir(): string {
  return path.join(registryDir(), "deployments");
}

const fileOf = (stack: string) => path.join(deploymentDir(), `${stack}.json`);

function write(reg: DeploymentRegistry): void {
  mkdirSync(deploymentDir(), { recursive: true, mode: 0o1777 });
  const tmp = `${fileOf(reg.stack)}.${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(reg, null, 2)}\n`);
  renameSync(tmp, fileOf(reg.stack));
}

/** A registry this process holds; `release` removes it (the deployment is gone or is the user's now). */
export interface DeploymentHandle {
  readonly registry: DeploymentRegistry;
  /** add a run's run.json */
  addRecord(file: string): void;
  release(): Promise<void>;
}

/**
 * Register this process as the owner of `stack`'s deployment (synchronously, before anything is deployed).
 * @param env where DOCKER_HOST is read (the environment the deployment runs with)
 */
export function registerDeployment(
  stack: string,
  platform: Platform,
  command: string,
  env: NodeJS.ProcessEnv = process.env,
): DeploymentHandle {
  const registry: DeploymentRegistry = {
    stack,
    platform,
    ownerPid: process.pid,
    ownerStartTicks: processStartTicks(process.pid),
    createdAt: new Date().toISOString(),
    dockerHost: env.DOCKER_HOST ?? null,
    command,
    resultRecords: [],
  };
  write(registry);
  return {
    registry,
    addRecord(file) {
      registry.resultRecords.push(file);
      write(registry);
    },
    async release() {
      // only our own file: a later owner of the same stack name keeps its registry
      const now = await readDeployment(fileOf(stack));
      if (now && now.ownerPid === process.pid) await fs.rm(fileOf(stack), { force: true });
    },
  };
}

/** The registry at `file`, or null when it is gone or unreadable. */
export async function readDeployment(file: string): Promise<DeploymentRegistry | null> {
  try {
    const r = JSON.parse(await fs.readFile(file, "utf8")) as DeploymentRegistry;
    return typeof r.stack === "string" && typeof r.ownerPid === "number"
      ? { ...r, resultRecords: r.resultRecords ?? [] }
      : null;
  } catch {
    return null;
  }
}

/** Every deployment registry, with whether its owner still runs, and its file. */
export async function listDeployments(): Promise<
  Array<{ file: string; registry: DeploymentRegistry; alive: boolean }>
> {
  let names: string[];
  try {
    names = (await fs.readdir(deploymentDir())).filter((f) => f.endsWith(".json"));
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return [];
    throw err;
  }
  const out = [];
  for (const n of names) {
    const file = path.join(deploymentDir(), n);
    const registry = await readDeployment(file);
    if (registry) out.push({ file, registry, alive: isOwnerAlive(registry) });
  }
  return out;
}
