/**
 * DockerHost: one host of a docker stack (loadgen, collector, sink...) as a Pulumi ComponentResource.
 *
 * Children (all `{ parent: this }`):
 * - `${name}-image`     docker.RemoteImage: the pinned image (tag, and digest once the catalog has it), kept locally;
 *                       absent when the pairing needs a built image (Fluentd with fluent-plugin-griddb for a GridDB
 *                       sink): the stack builds it once (DockerStack) and every host of the pairing runs that one
 * - `${name}-data`      docker.Volume for the component's data directory (absent on RAM-disk hosts: tmpfs instead)
 * - `${name}-container` docker.Container: CPU quota/period, memory (no swap), blkio device caps, tmpfs, the ports
 *                       published on 127.0.0.1, fixed address on the stack network, owner/expiry labels;
 *                       `uploads`: the catalog's static settings files and the collector config rendered from
 *                       the scenario cell (./pipeline.ts)
 * - `${name}-shaper`    docker.Container with NET_ADMIN in the host container's network namespace, running the
 *                       tc script of shaper.ts (only when the host has a network cap)
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { catalog, type CatalogBuild, type CatalogImage, heapMiB, imageRef } from "../catalog.ts";
import type { AppliedLimits, HostSpec } from "../../core/limits.ts";
import { containerLimits } from "./flags.ts";
import type { ComponentEndpoints, HostConfigOutput, PublishedPort } from "../../core/outputs.ts";
import { hostPorts, type HostPipeline } from "./pipeline.ts";
import { shaperScript } from "./shaper.ts";

/** Arguments of a DockerHost. */
export interface DockerHostArgs {
  /** stack name (container names and labels) */
  stack: string;
  /** the host as the stack file defines it: name, requested values and parsed limits */
  host: HostSpec;
  /** what the host runs: a catalog entry (sink, collector, or the load generator's runtime) */
  component: CatalogImage;
  /** name of the stack's docker network */
  network: pulumi.Input<string>;
  /** this host's fixed IPv4 address on that network */
  address: string;
  /** block device holding Docker's data root, for blkio caps; undefined: disk caps are not applied (recorded) */
  blkioDevice?: string;
  /** labels on every resource: owner, expiry, stack, managed-by */
  labels: Record<string, string>;
  /** the shaper's image entry (a network-capped host); default the catalog's `shaper` */
  shaperImage?: CatalogImage;
  /** the collector config rendered for this host and the image build its pairing needs (./pipeline.ts) */
  pipeline?: HostPipeline;
  /** the stack's build of `pipeline.build` (one per stack, shared by its hosts); required when pipeline.build is set */
  builtImage?: docker.Image;
  /** environment variables holding passwords (infra/secrets.ts secretEnvOf), secret Outputs: the container's envs become secret in state */
  secretEnv?: Record<string, pulumi.Output<string>>;
}

/** The repository root: build contexts in the catalog are relative to it. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * A catalog build as a docker.Image: built by the stack's Docker engine from `<repo>/<context>/Dockerfile`, named
 * `<repository>:<tag>`, kept in that engine (skipPush: the stack's containers run on the same engine).
 */
export function buildImage(
  name: string,
  build: CatalogBuild,
  opts: pulumi.CustomResourceOptions,
): docker.Image {
  return new docker.Image(
    name,
    {
      imageName: `${build.repository}:${build.tag}`,
      build: {
        context: path.join(REPO_ROOT, build.context),
        dockerfile: path.join(REPO_ROOT, build.context, "Dockerfile"),
      },
      skipPush: true,
    },
    opts,
  );
}

const SHAPER = "shaper";

/** Container labels as @pulumi/docker takes them. */
export function labelList(labels: Record<string, string>): { label: string; value: string }[] {
  return Object.entries(labels).map(([label, value]) => ({ label, value }));
}

export class DockerHost extends pulumi.ComponentResource {
  /** the host container's name */
  readonly containerName: string;
  /** fixed address on the stack network */
  readonly address: string;
  /** the image reference run by the host container */
  readonly image: string;
  /** limits: requested, handed to the engine, enforced, notes */
  readonly limits: AppliedLimits;
  /** the component's endpoints (data, metrics, published) */
  readonly endpoints: pulumi.Output<ComponentEndpoints>;
  /** the rendered config uploaded into the container, and the built image, when any */
  readonly config: HostConfigOutput | undefined;
  readonly container: docker.Container;
  readonly shaper: docker.Container | undefined;

  constructor(name: string, args: DockerHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ingestbench:docker:Host", name, {}, opts);
    const { stack, host, component } = args;
    const hostLabels = {
      ...args.labels,
      "ingestbench.host": host.name,
      "ingestbench.component": component.name,
    };
    this.containerName = `ib-${stack}-${host.name}`;
    this.address = args.address;
    const build = args.pipeline?.build;
    this.image = build ? `${build.repository}:${build.tag}` : imageRef(component);

    if (build && !args.builtImage)
      throw new Error(`DockerHost ${name}: pipeline.build ${this.image} needs the stack's builtImage`);
    const image: docker.RemoteImage | docker.Image =
      build && args.builtImage
        ? args.builtImage
        : new docker.RemoteImage(`${name}-image`, { name: this.image, keepLocally: true }, { parent: this });
    const imageName = image instanceof docker.Image ? image.imageName : image.name;
    const rendered = args.pipeline?.config;
    this.config = rendered
      ? {
          file: rendered.file,
          sha256: rendered.sha256,
          source: rendered.source,
          ...(build ? { built: { context: build.context, image: this.image, adds: build.adds } } : {}),
        }
      : undefined;
    const uploads = [
      ...(component.uploads ?? []),
      ...(rendered ? [{ file: rendered.file, content: rendered.text }] : []),
    ];
    const command = rendered?.command ?? component.command;

    const translated = containerLimits(host, args.blkioDevice, component.dataDir);
    this.limits = translated.limits;

    const onTmpfs = host.limits.disk?.tmpfsBytes !== undefined;
    const volume = onTmpfs
      ? undefined
      : new docker.Volume(
          `${name}-data`,
          { name: `${this.containerName}-data`, labels: labelList(hostLabels) },
          { parent: this },
        );

    const heap = String(heapMiB(host.limits.memoryBytes));
    const envs: pulumi.Input<string>[] = Object.entries(component.env).map(
      ([k, v]) => `${k}=${component.heapFromMemory ? v.replaceAll("{heapMiB}", heap) : v}`,
    );
    for (const [k, v] of Object.entries(args.secretEnv ?? {})) envs.push(pulumi.interpolate`${k}=${v}`);
    const ports = hostPorts(component, args.pipeline);
    const published = ports.map((p) => ({ internal: p.port, ip: "127.0.0.1", protocol: p.protocol }));

    this.container = new docker.Container(
      `${name}-container`,
      {
        name: this.containerName,
        hostname: host.name,
        image: imageName,
        ...(command ? { command } : {}),
        envs,
        ...(uploads.length > 0
          ? { uploads: uploads.map((u) => ({ file: u.file, content: u.content })) }
          : {}),
        ...translated.args,
        ...(volume ? { mounts: [{ type: "volume", source: volume.name, target: component.dataDir }] } : {}),
        networksAdvanced: [{ name: args.network, ipv4Address: args.address, aliases: [host.name] }],
        ports: published,
        labels: labelList(hostLabels),
        restart: "no",
        mustRun: true,
        destroyGraceSeconds: 30,
      },
      { parent: this, dependsOn: volume ? [image, volume] : [image] },
    );

    if (translated.shaping) {
      const shaperImage = args.shaperImage ?? catalog[SHAPER]!;
      const shaperPull = new docker.RemoteImage(
        `${name}-shaper-image`,
        { name: imageRef(shaperImage), keepLocally: true },
        { parent: this },
      );
      this.shaper = new docker.Container(
        `${name}-shaper`,
        {
          name: `${this.containerName}-shaper`,
          image: shaperPull.name,
          networkMode: pulumi.interpolate`container:${this.container.name}`,
          capabilities: { adds: ["NET_ADMIN"] },
          entrypoints: ["/bin/sh", "-c"],
          command: [shaperScript(translated.shaping)],
          labels: labelList({ ...hostLabels, "ingestbench.role": "shaper" }),
          restart: "no",
          mustRun: true,
          destroyGraceSeconds: 5,
        },
        { parent: this, dependsOn: [this.container, shaperPull] },
      );
    } else {
      this.shaper = undefined;
    }

    const data = ports.find((p) => p.role === "data");
    const metrics = ports.find((p) => p.role === "metrics");
    this.endpoints = this.container.ports.apply((ports) => ({
      host: host.name,
      data: data ? { host: args.address, port: data.port, scheme: data.scheme } : null,
      metrics: metrics ? { host: args.address, port: metrics.port, scheme: metrics.scheme } : null,
      published: published.map((p): PublishedPort => {
        const actual = (ports ?? []).find((q) => q.internal === p.internal);
        return { internal: p.internal, external: actual?.external ?? null, ip: p.ip, protocol: p.protocol };
      }),
    }));

    this.registerOutputs({
      containerName: this.containerName,
      address: this.address,
      image: this.image,
      limits: this.limits,
      endpoints: this.endpoints,
      config: this.config,
    });
  }
}
