/**
 * Leftovers of docker stacks on a Docker engine, found by label and removed: what a harness killed mid-deploy,
 * mid-load or mid-drain left behind (its containers, the stack network, the data volumes, and the dangling images
 * of an interrupted image build).
 *
 * Every resource of a docker stack carries `ingestbench.stack=<stack>` and `ingestbench.managed-by=pulumi`
 * (./stack.ts stackLabels; ./host.ts adds host, component and role); containers also carry
 * `ingestbench.expiry-seconds`. Images built here from the Debian base carry `org.ingestbench=1`
 * (scripts/build-images.sh), and so does every image built FROM them: an untagged (dangling) one is what an
 * interrupted or superseded build left.
 *
 * Order: containers (forced, with their anonymous volumes), then networks and named volumes (which a container
 * in use would hold), then dangling images. Through the Engine API (dockerode), at DOCKER_HOST.
 */
import type Docker from "dockerode";

/** What one sweep removed (names; images by id), and what it could not. */
export interface DockerSweep {
  containers: string[];
  networks: string[];
  volumes: string[];
  images: string[];
  errors: string[];
}

/** The label every resource of docker stack `stack` carries (./stack.ts stackLabels). */
export const stackLabel = (stack: string): string => `ingestbench.stack=${stack}`;
/** The label of every image built from the project's Debian base (scripts/build-images.sh). */
export const BUILT_IMAGE_LABEL = "org.ingestbench=1";

/** A dockerode client for DOCKER_HOST (unix socket or tcp), or the engine's default socket. */
export async function dockerClient(env: NodeJS.ProcessEnv = process.env): Promise<Docker> {
  // loaded here, not at the top: dockerode costs ~0.5 s to import, which CLI calls without a docker stack skip
  const { default: Docker } = await import("dockerode");
  const host = env.DOCKER_HOST;
  if (host?.startsWith("unix://")) return new Docker({ socketPath: host.slice("unix://".length) });
  if (host?.startsWith("tcp://")) {
    const u = new URL(host);
    return new Docker({ host: u.hostname, port: Number(u.port || 2375) });
  }
  return new Docker();
}

/** Does an engine answer? Returns null when it does, else why not (for gc's `skipped`). */
export async function engineAnswers(docker: Docker): Promise<string | null> {
  try {
    await docker.ping();
    return null;
  } catch (err) {
    return (err as Error).message.split("\n")[0] ?? "no answer";
  }
}

const notFound = (err: unknown) => (err as { statusCode?: number }).statusCode === 404;

/**
 * Remove every container, network and volume labelled `label` (e.g. stackLabel("docker-x")), and with
 * `danglingImages` the dangling images labelled BUILT_IMAGE_LABEL or `label`. `dryRun`: only list them.
 * Never throws for the engine's answers: each failure is one line in `errors`.
 */
export async function sweepByLabel(
  docker: Docker,
  label: string,
  opts: { dryRun?: boolean; danglingImages?: boolean } = {},
): Promise<DockerSweep> {
  const out: DockerSweep = { containers: [], networks: [], volumes: [], images: [], errors: [] };
  const attempt = async (what: string, fn: () => Promise<unknown>, done: () => void) => {
    if (opts.dryRun) return done();
    try {
      await fn();
      done();
    } catch (err) {
      if (notFound(err)) return done();
      if ((err as { statusCode?: number }).statusCode === 409 && what.startsWith("removing dangling image"))
        return;
      out.errors.push(`${what}: ${(err as Error).message.split("\n")[0]}`);
    }
  };
  try {
    for (const c of await docker.listContainers({ all: true, filters: { label: [label] } })) {
      const name = c.Names[0]?.replace(/^\//, "") ?? c.Id;
      await attempt(
        `removing container ${name}`,
        () => docker.getContainer(c.Id).remove({ force: true, v: true }),
        () => out.containers.push(name),
      );
    }
    for (const n of await docker.listNetworks({ filters: { label: [label] } })) {
      await attempt(
        `removing network ${n.Name}`,
        () => docker.getNetwork(n.Id).remove(),
        () => out.networks.push(n.Name),
      );
    }
    const vols = (await docker.listVolumes({ filters: { label: [label] } })).Volumes ?? [];
    for (const v of vols) {
      await attempt(
        `removing volume ${v.Name}`,
        () => docker.getVolume(v.Name).remove(),
        () => out.volumes.push(v.Name),
      );
    }
    if (opts.danglingImages) {
      const seen = new Set<string>();
      for (const l of [label, BUILT_IMAGE_LABEL]) {
        for (const img of await docker.listImages({ filters: { dangling: ["true"], label: [l] } })) {
          if (seen.has(img.Id)) continue;
          seen.add(img.Id);
          // a dangling image a container uses (e.g. the step an ongoing build runs on) answers 409: kept, no error
          await attempt(
            `removing dangling image ${img.Id}`,
            () => docker.getImage(img.Id).remove(),
            () => out.images.push(img.Id),
          );
        }
      }
    }
  } catch (err) {
    out.errors.push(`listing resources labelled ${label}: ${(err as Error).message.split("\n")[0]}`);
  }
  return out;
}

/** One docker stack's resources on the engine: the stack and the oldest creation time and expiry of its containers. */
export interface LabelledStack {
  stack: string;
  /** ms since the epoch: the oldest container's creation */
  createdMs: number;
  /** ms: the smallest `ingestbench.expiry-seconds` of its containers (null: none labelled) */
  expiryMs: number | null;
}

/** The docker stacks with containers on the engine (label `ingestbench.stack`), with creation and expiry. */
export async function labelledStacks(docker: Docker): Promise<LabelledStack[]> {
  const by = new Map<string, LabelledStack>();
  for (const c of await docker.listContainers({ all: true, filters: { label: ["ingestbench.stack"] } })) {
    const stack = c.Labels["ingestbench.stack"]!;
    const exp = Number(c.Labels["ingestbench.expiry-seconds"]);
    const e = by.get(stack) ?? { stack, createdMs: c.Created * 1000, expiryMs: null };
    e.createdMs = Math.min(e.createdMs, c.Created * 1000);
    if (Number.isFinite(exp) && exp > 0)
      e.expiryMs = e.expiryMs === null ? exp * 1000 : Math.min(e.expiryMs, exp * 1000);
    by.set(stack, e);
  }
  return [...by.values()];
}
