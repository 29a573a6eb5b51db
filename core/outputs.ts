/**
 * The stack outputs contract of the Pulumi program (infra/index.ts), the same for every platform. The harness's
 * provisioner (Automation API, harness/provision/provisioner.ts) reads these and nothing else:
 *
 * | output      | meaning |
 * |-------------|---------|
 * | `platform`  | "docker" / "azure" / "local" |
 * | `stack`     | the stack name |
 * | `message`   | set when the program deployed nothing (local stacks) |
 * | `network`   | the stack's data-plane network: name and IPv4 subnet |
 * | `hosts`     | per host: data-plane `address` (azure adds the VM's `publicAddress`, for SSH), `container`, `component`, `image` and `limits` (requested, applied, enforced, notes); collectors add `config` (file, sha256 of the rendered text, source "stack config" or "defaults", and `built` when the image was built) |
 * | `endpoints` | per component, a list (two collectors of one kind are two entries), each: the host it runs on, its `data` endpoint (address:port on the stack network), `metrics` when it has one, and `published` ports on 127.0.0.1 for the harness (external port chosen by Docker) |
 * | `versions`  | per component: `pinned` version, `image` reference (tag, and digest once resolved), `digestResolved` |
 *
 * `limits.applied` on docker holds the values handed to the Docker engine (cfsQuotaUs, cfsPeriodUs, memoryBytes,
 * readIops, writeIops, readBytesPerSec, writeBytesPerSec, tmpfsBytes, tbfRateBytesPerSec, tbfBurstBytes, ...), not a
 * read-back: reading them back (`docker inspect`, `tc -s qdisc` in the shaper's log) is the provisioner's job.
 */
import type { AppliedLimits, Platform } from "./limits.ts";

export interface EndpointOutput {
  /** address on the stack network (or host name alias) */
  host: string;
  port: number;
  /** protocol spoken, e.g. "http", "postgres", "forward" */
  scheme: string;
}

export interface PublishedPort {
  internal: number;
  /** host-side port, chosen by Docker at creation; null until known (e.g. under preview or mocks) */
  external: number | null;
  ip: string;
  protocol: string;
}

export interface ComponentEndpoints {
  host: string;
  data: EndpointOutput | null;
  metrics: EndpointOutput | null;
  published: PublishedPort[];
}

/** A collector's rendered config as uploaded (infra/docker/pipeline.ts), and its built image when any. */
export interface HostConfigOutput {
  /** path in the container */
  file: string;
  /** sha256 (hex) of the uploaded text: the harness can compare it with what the container reads */
  sha256: string;
  /** "stack config": rendered from the cell's blocks; "defaults": no blocks given, schema defaults used */
  source: "stack config" | "defaults";
  built?: { context: string; image: string; adds: string };
}

export interface HostOutput {
  /** the host's address on the stack network (data plane) */
  address: string;
  /** azure: the VM's public address, where the harness reaches it (SSH, published ports); absent on docker */
  publicAddress?: string;
  container: string;
  component: string;
  image: string;
  limits: AppliedLimits;
  config?: HostConfigOutput;
}

export interface VersionOutput {
  pinned: string;
  image: string;
  digestResolved: boolean;
  /** the command the image answers its version to (core/catalog.ts versionCommand), when it differs by image */
  versionCommand?: string[];
}

export interface StackOutputs {
  platform: Platform;
  stack: string;
  message?: string;
  network: { name: string; subnet: string } | null;
  hosts: Record<string, HostOutput>;
  endpoints: Record<string, ComponentEndpoints[]>;
  versions: Record<string, VersionOutput>;
}

/**
 * Where this machine reaches a component's port (`port` inside the container; default its data endpoint's): its
 * published port — on docker 127.0.0.1 at the external port Docker chose, on azure the VM's public address (the NSG
 * admits this machine's allowFrom). null when the outputs do not say (no data endpoint, a port not published, or
 * published under preview/mocks).
 */
export function harnessAddress(
  outputs: StackOutputs,
  ep: ComponentEndpoints,
  port: number | undefined = ep.data?.port,
): { host: string; port: number } | null {
  if (port === undefined || outputs.platform === "local") return null;
  const pub = ep.published.find((p) => p.internal === port && p.external !== null);
  return pub && pub.external !== null && pub.ip !== "" ? { host: pub.ip, port: pub.external } : null;
}
