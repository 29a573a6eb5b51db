/**
 * DockerStack: a whole docker stack as a Pulumi ComponentResource: the stack's bridge network
 * (`${name}-network`, a fixed /24 derived from the stack name) and one DockerHost per host (`${name}-<host>`).
 * Each host runs the catalog component `ingestbench:components` names for it; hosts without one run the load
 * generator's runtime image (the harness execs the generator inside). Collector hosts get their config rendered
 * from the scenario cell (./pipeline.ts) against the stack's sink host; an image a pairing needs built (catalog
 * `build`) is built once per stack (`${name}-build-<repository>`) and run by every host of that pairing, so two
 * collectors cannot drift apart (000's second node ran another plugin version).
 */
import { createHash } from "node:crypto";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { catalogEntry, imageRef } from "../catalog.ts";
import type { PulumiStack } from "../stack/schema.ts";
import { buildImage, DockerHost, labelList } from "./host.ts";
import type { StackOutputs } from "../../core/outputs.ts";
import { resolveImage, pinnedVersion, type ResolvedImage } from "./images.ts";
import { componentName, hostPipelines, pipelineOf, type CellPipeline } from "./pipeline.ts";
import { secretEnvOf } from "../secrets.ts";

/** Arguments of a DockerStack. */
export interface DockerStackArgs {
  /** the validated stack (infra/stack/schema.ts: loadPulumiStack or fromPulumiConfig) */
  stack: PulumiStack;
  /** the scenario cell; default: read from the stack's platform config (pipelineOf) */
  cell?: CellPipeline;
}

/**
 * The stack's 10.215.x.0/24 subnet, x a hash of the stack name (0..254), so stacks rarely overlap: 10.215.0.0/16 is
 * the block of ingestbench's Docker engine (scripts/docker-engine.sh; 10.215.255.0/24 is its default bridge), beside
 * the local platform's 10.213/10.214 (infra/local/netns.ts), so a docker stack's bridge never takes a local run's
 * addresses on the same machine.
 */
export function stackSubnet(stack: string): { subnet: string; gateway: string; address(i: number): string } {
  const x = createHash("sha256").update(stack).digest()[0]! % 255;
  return {
    subnet: `10.215.${x}.0/24`,
    gateway: `10.215.${x}.1`,
    address: (i: number) => `10.215.${x}.${10 + i}`,
  };
}

/** Labels on every resource of a stack. */
export function stackLabels(stack: PulumiStack): Record<string, string> {
  return {
    "ingestbench.managed-by": "pulumi",
    "ingestbench.stack": stack.spec.name,
    "ingestbench.owner": stack.platform.owner,
    "ingestbench.expiry-seconds": String(Math.round(stack.spec.expiryMs / 1000)),
  };
}

export class DockerStack extends pulumi.ComponentResource {
  readonly network: docker.Network;
  readonly hosts: Record<string, DockerHost>;
  /** the stack outputs (outputs.ts) */
  readonly outputs: pulumi.Output<StackOutputs>;

  constructor(name: string, args: DockerStackArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ingestbench:docker:Stack", name, {}, opts);
    const { spec, platform } = args.stack;
    const labels = stackLabels(args.stack);
    const net = stackSubnet(spec.name);

    // render the collector configs first: a pairing that cannot be rendered fails before any resource is made
    const components = platform.components as Record<string, unknown>;
    const componentOf = (host: string) => componentName(components, host);
    const cell = args.cell ?? pipelineOf(platform);
    // upstream or Debian-built images (ingestbench:docker.images), the variant the cell's version pins (./images.ts)
    const source = platform.docker.images ?? "upstream";
    const images: Record<string, ResolvedImage> = Object.fromEntries(
      Object.keys(spec.hosts).map((h) => [
        h,
        resolveImage(componentOf(h), source, pinnedVersion(cell.blocks, componentOf(h))),
      ]),
    );
    const shaperImage = resolveImage("shaper", source, undefined).entry;
    const pipelines = hostPipelines(
      Object.values(spec.hosts).map(
        (h, i) => [h.name, images[h.name]!.entry, net.address(i)] as [string, ResolvedImage["entry"], string],
      ),
      cell,
    );

    this.network = new docker.Network(
      `${name}-network`,
      {
        name: `ib-${spec.name}`,
        driver: "bridge",
        ipamConfigs: [{ subnet: net.subnet, gateway: net.gateway }],
        labels: labelList(labels),
      },
      { parent: this },
    );

    const builds = new Map<string, docker.Image>();
    for (const p of Object.values(pipelines)) {
      if (p.build && !builds.has(p.build.repository)) {
        builds.set(
          p.build.repository,
          buildImage(`${name}-build-${p.build.repository.replace(/[^a-z0-9]+/g, "-")}`, p.build, {
            parent: this,
          }),
        );
      }
    }

    this.hosts = {};
    // passwords as Pulumi secrets (config secret or INGESTBENCH_<SINK>_PASSWORD), never the catalog's (infra/secrets.ts)
    const cellSink = spec.hosts.sink ? componentOf("sink") : undefined;
    Object.values(spec.hosts).forEach((host, i) => {
      const build = pipelines[host.name]!.build;
      const component = images[host.name]!.entry;
      this.hosts[host.name] = new DockerHost(
        `${name}-${host.name}`,
        {
          stack: spec.name,
          host,
          component,
          network: this.network.name,
          address: net.address(i),
          ...(platform.docker.blkioDevice !== undefined ? { blkioDevice: platform.docker.blkioDevice } : {}),
          labels,
          shaperImage,
          pipeline: pipelines[host.name]!,
          ...(build ? { builtImage: builds.get(build.repository)! } : {}),
          secretEnv: secretEnvOf(component, cellSink),
        },
        { parent: this },
      );
    });

    const hosts = Object.values(this.hosts);
    const endpointsByComponent = pulumi.all(hosts.map((h) => h.endpoints)).apply((eps) => {
      const out: StackOutputs["endpoints"] = {};
      hosts.forEach((h, i) => {
        const component = componentOf(Object.keys(this.hosts)[i]!);
        (out[component] ??= []).push(eps[i]!);
      });
      return out;
    });
    this.outputs = pulumi
      .all([this.network.name, endpointsByComponent])
      .apply(([networkName, endpoints]): StackOutputs => {
        const out: StackOutputs = {
          platform: "docker",
          stack: spec.name,
          network: { name: networkName, subnet: net.subnet },
          hosts: {},
          endpoints,
          versions: {},
        };
        for (const [hostName, h] of Object.entries(this.hosts)) {
          const name = componentOf(hostName);
          const entry = images[hostName]!.entry;
          out.hosts[hostName] = {
            address: h.address,
            container: h.containerName,
            component: name,
            image: h.image,
            limits: h.limits,
            ...(h.config ? { config: h.config } : {}),
          };
          // a built image has no registry digest: digestResolved stays false; a version command only when the image's
          // differs from the plugin's (a Debian-built ClickHouse 18.16)
          out.versions[name] = {
            pinned: entry.version,
            image: h.image,
            digestResolved: h.image === imageRef(entry) && entry.digest !== null,
            ...(entry.versionCommand &&
            JSON.stringify(entry.versionCommand) !== JSON.stringify(catalogEntry(name).versionCommand)
              ? { versionCommand: [...entry.versionCommand] }
              : {}),
          };
        }
        return out;
      });

    this.registerOutputs({ outputs: this.outputs });
  }
}
