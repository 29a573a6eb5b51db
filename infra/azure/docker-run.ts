/**
 * `docker run` command lines for an azure host's cloud-init, from the SAME translation the docker platform uses
 * (infra/docker/flags.ts containerLimits → ContainerLimitArgs): this file only spells each @pulumi/docker argument
 * as the docker CLI flag it stands for (docker run reference: --cpu-period, --cpu-quota, --memory, --memory-swap,
 * --device-read-iops/--device-write-iops <path>:<rate>, --device-read-bps/--device-write-bps <path>:<bytes>,
 * --tmpfs <dir>:<options>).
 */
import type { ContainerLimitArgs, DeviceRate } from "../docker/flags.ts";

/** POSIX shell single-quoting: safe for any string. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

const device = (flag: string) => (v: DeviceRate[] | undefined) =>
  (v ?? []).map((d) => `${flag}=${d.path}:${d.rate}`);

/** One entry per ContainerLimitArgs key (the Record type makes tsc fail when flags.ts gains a key not spelled here). */
const FLAGS: { [K in keyof Required<ContainerLimitArgs>]: (v: ContainerLimitArgs[K]) => string[] } = {
  cpuPeriod: (v) => (v === undefined ? [] : [`--cpu-period=${v}`]),
  cpuQuota: (v) => (v === undefined ? [] : [`--cpu-quota=${v}`]),
  // the provider's memory/memorySwap are MiB; the CLI's "m" suffix is MiB too
  memory: (v) => (v === undefined ? [] : [`--memory=${v}m`]),
  memorySwap: (v) => (v === undefined ? [] : [`--memory-swap=${v}m`]),
  deviceReadIops: device("--device-read-iops"),
  deviceWriteIops: device("--device-write-iops"),
  deviceReadBps: device("--device-read-bps"),
  deviceWriteBps: device("--device-write-bps"),
  tmpfs: (v) => Object.entries(v ?? {}).map(([dir, opts]) => `--tmpfs=${dir}:${opts}`),
};

/** The limit flags of a container, in a fixed order (ContainerLimitArgs key order). */
export function limitFlags(args: ContainerLimitArgs): string[] {
  return (Object.keys(FLAGS) as (keyof ContainerLimitArgs)[]).flatMap((k) =>
    (FLAGS[k] as (v: unknown) => string[])(args[k]),
  );
}

/** A detached container on the host's network (the VM's own addresses, ports and host name: docker refuses --hostname with --network=host on older engines, and the VM is named after the host). */
export interface DockerRun {
  name: string;
  image: string;
  limits: ContainerLimitArgs;
  env?: Record<string, string>;
  /** a docker env file on the VM (mode 0600, the secret environment: infra/azure/host.ts), `--env-file` */
  envFile?: string;
  labels: Record<string, string>;
  /** [volume name, mount point] */
  volume?: [string, string];
  /** read-only bind mounts of single files: [path on the VM, path in the container] */
  files?: Array<[string, string]>;
  capAdd?: string[];
  entrypoint?: string;
  command?: string[];
}

/** `docker run -d ...` as one shell line (every argument quoted). */
export function dockerRunLine(r: DockerRun): string {
  const argv = ["docker", "run", "-d", `--name=${r.name}`, "--network=host", "--restart=no"];
  argv.push(...limitFlags(r.limits));
  for (const cap of r.capAdd ?? []) argv.push(`--cap-add=${cap}`);
  if (r.volume) argv.push(`--volume=${r.volume[0]}:${r.volume[1]}`);
  for (const [vm, inContainer] of r.files ?? []) argv.push(`--volume=${vm}:${inContainer}:ro`);
  for (const [k, v] of Object.entries(r.env ?? {})) argv.push(`--env=${k}=${v}`);
  if (r.envFile) argv.push(`--env-file=${r.envFile}`);
  for (const [k, v] of Object.entries(r.labels)) argv.push(`--label=${k}=${v}`);
  if (r.entrypoint) argv.push(`--entrypoint=${r.entrypoint}`);
  argv.push(r.image, ...(r.command ?? []));
  return argv.map(shellQuote).join(" ");
}
