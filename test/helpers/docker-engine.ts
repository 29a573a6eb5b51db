/**
 * The project's real Docker engine for tests (scripts/docker-engine.sh: DOCKER_HOST=unix:///run/ingestbench/docker.sock
 * unless DOCKER_HOST is set), through dockerode. Tests that need it fail, not skip, when it does not answer: the
 * message says how to start it. Containers made here carry the label `ingestbench.test=<pid>` so a leftover is
 * findable (`docker ps -a --filter label=ingestbench.test`).
 */
import { statSync, readFileSync } from "node:fs";
import Docker from "dockerode";

/** The engine's socket (DOCKER_HOST's unix path, else the project's own engine). */
export const DOCKER_SOCKET = (process.env.DOCKER_HOST ?? "unix:///run/ingestbench/docker.sock").replace(
  /^unix:\/\//,
  "",
);
/** The environment a Docker CLI needs to reach that engine. */
export const DOCKER_ENV: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: `unix://${DOCKER_SOCKET}` };
/** A Debian-built image present on the engine (scripts/build-images.sh). */
export const BASE_IMAGE = "ingestbench/debian:bookworm";
/** The tc shaper image (iproute2), also built by scripts/build-images.sh. */
export const SHAPER_IMAGE = "ingestbench/debian-shaper:bookworm";

/** A dockerode client of the engine; throws (the test fails) with how to start it when it does not answer. */
export async function engine(): Promise<Docker> {
  const docker = new Docker({ socketPath: DOCKER_SOCKET });
  try {
    await docker.ping();
  } catch (err) {
    throw new Error(
      `no Docker engine at ${DOCKER_SOCKET} (${(err as Error).message}): start it with \`bash scripts/docker-engine.sh start\``,
    );
  }
  for (const image of [BASE_IMAGE, SHAPER_IMAGE]) {
    await docker
      .getImage(image)
      .inspect()
      .catch(() => {
        throw new Error(
          `image ${image} is not on the engine: build it with \`bash scripts/build-images.sh\``,
        );
      });
  }
  return docker;
}

/** The block device holding the engine's data root, as docker's --device-* flags and the blkio cgroup see it. */
export function dataRootDevice(
  dataRoot = process.env.INGESTBENCH_DOCKER_DATA_ROOT ?? "/var/lib/ingestbench/docker",
): { path: string; majorMinor: string } {
  const dev = statSync(dataRoot).dev;
  const majorMinor = `${Math.floor(dev / 256) & 0xfff}:${(dev & 0xff) | ((dev >> 12) & 0xfff00)}`;
  const name = /^DEVNAME=(.+)$/m.exec(readFileSync(`/sys/dev/block/${majorMinor}/uevent`, "utf8"))?.[1];
  if (!name) throw new Error(`no device name for ${majorMinor} (${dataRoot})`);
  // a partition is throttled through its disk: blkio takes whole devices only
  const parent = /^(.*?)(p?\d+)$/.exec(name);
  let disk = name;
  let mm = majorMinor;
  try {
    readFileSync(`/sys/dev/block/${majorMinor}/partition`);
    disk = parent ? parent[1]! : name;
    mm = readFileSync(`/sys/class/block/${disk}/dev`, "utf8").trim();
  } catch {
    // not a partition
  }
  return { path: `/dev/${disk}`, majorMinor: mm };
}

/** Create and start a container labelled `ingestbench.test`; `track` receives its removal (force, volumes). */
export async function runContainer(
  docker: Docker,
  opts: Docker.ContainerCreateOptions,
  track: (cleanup: () => Promise<unknown>) => void,
): Promise<Docker.Container> {
  const c = await docker.createContainer({
    ...opts,
    Labels: { "ingestbench.test": String(process.pid), ...(opts.Labels ?? {}) },
  });
  track(() =>
    c.remove({ force: true, v: true }).catch((e: { statusCode?: number }) => {
      if (e.statusCode !== 404) throw e;
    }),
  );
  await c.start();
  return c;
}
