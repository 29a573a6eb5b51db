/**
 * Before a docker stack with Debian-built images (`ingestbench:docker: { images: debian }`) is deployed: the
 * engine DOCKER_HOST names answers, and every image the planned cells run is on it. Those images come from no
 * registry (scripts/build-images.sh builds them on the engine), so a missing one would otherwise fail `pulumi up`
 * halfway; here it is refused with its name and the command that builds it.
 */
import { spawnSync } from "node:child_process";
import { ProvisioningError } from "../../core/errors.ts";
import { checkImagePin } from "../runner/pair-check.ts";
import { resolveImage, type ResolvedImage } from "../../infra/docker/images.ts";
import type { PulumiStack } from "../../infra/stack/schema.ts";
import type { CellPlan } from "../runner/cell-plan.ts";
import { collectorHosts } from "../runner/versions.ts";

/**
 * The images the cells run on the stack's hosts (sink, collector hosts, loadgen for the others, the shaper when a
 * host has a network cap), as the Pulumi program resolves them (infra/docker/images.ts); one per reference.
 * @throws ConfigurationError E_STACK_FIELD when a cell's version has no image of the stack's source
 */
export function cellImages(stack: PulumiStack, plans: readonly CellPlan[]): ResolvedImage[] {
  const source = stack.platform.docker.images ?? "upstream";
  const hosts = Object.keys(stack.spec.hosts);
  const collectors = new Set(collectorHosts(hosts));
  const out = new Map<string, ResolvedImage>();
  const add = (r: ResolvedImage) => out.set(r.ref, r);
  for (const plan of plans) {
    for (const h of hosts) {
      const block = h === "sink" ? plan.sink : collectors.has(h) ? plan.collector : undefined;
      if (!block) {
        add(resolveImage("loadgen", source, undefined));
        continue;
      }
      const image = resolveImage(block.name, source, block.config.version);
      checkImagePin(stack.spec.name, plan.scenario, block.name, block.config.version, image);
      add(image);
    }
  }
  if (Object.values(stack.spec.hosts).some((h) => h.limits.network !== undefined))
    add(resolveImage("shaper", source, undefined));
  return [...out.values()];
}

/** The hint for an engine that does not answer. */
export const DOCKER_ENGINE_HINT =
  "start ingestbench's own engine with `bash scripts/docker-engine.sh start` (installs Debian's docker.io if absent), then " +
  '`eval "$(bash scripts/docker-engine.sh env)"` to point DOCKER_HOST at it';

/**
 * Every Debian-built image in `images` is on the engine (`docker image inspect`); upstream ones are pulled by the
 * deployment and not checked.
 * @throws ProvisioningError E_DOCKER_ENGINE when no engine answers (the hint says how to start one);
 *         E_IMAGE_MISSING naming each missing image and `bash scripts/build-images.sh <names>`
 */
export function requireImages(
  stackName: string,
  images: readonly ResolvedImage[],
  env: NodeJS.ProcessEnv = process.env,
): void {
  const built = images.filter((i) => i.build !== undefined);
  if (built.length === 0) return;
  const docker = env.INGESTBENCH_DOCKER ?? "docker";
  const run = (args: string[]) => spawnSync(docker, args, { env, encoding: "utf8", timeout: 30_000 });
  const v = run(["version", "--format", "{{.Server.Version}}"]);
  if (v.status !== 0) {
    const why =
      (v.stderr ?? "").trim().split("\n").pop() ||
      (v.error as Error | undefined)?.message ||
      `exit ${v.status}`;
    throw new ProvisioningError(
      "E_DOCKER_ENGINE",
      `stack ${stackName}: no Docker engine answers at ${env.DOCKER_HOST ?? "the default socket"} (${why}): ${DOCKER_ENGINE_HINT}`,
    );
  }
  const missing = built.filter((i) => run(["image", "inspect", "--format", "{{.Id}}", i.ref]).status !== 0);
  if (missing.length > 0) {
    throw new ProvisioningError(
      "E_IMAGE_MISSING",
      `stack ${stackName} runs Debian-built images that are not on the engine at ${env.DOCKER_HOST ?? "the default socket"}: ${missing.map((i) => i.ref).join(", ")}; ` +
        `build them with \`bash scripts/build-images.sh ${missing.map((i) => i.build).join(" ")}\` (no registry has them); checked before deploying anything`,
    );
  }
}
