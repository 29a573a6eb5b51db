/**
 * DockerStack: a whole docker stack as a Pulumi ComponentResource: the stack's bridge network
 * (`${name}-network`, a fixed /24 derived from the stack name) and one DockerHost per host (`${name}-<host>`).
 * Each host runs the catalog component `ingestbench:components` names for it; hosts without one run the load
 * generator's runtime image (the harness execs the generator inside).
 */
import { createHash } from "node:crypto";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { catalogEntry, imageRef } from "../catalog.ts";
import type { PulumiStack } from "../stack/schema.ts";
import { DockerHost, labelList } from "./host.ts";
import type { StackOutputs } from "./outputs.ts";

/** Arguments of a DockerStack. */
export interface DockerStackArgs {
  /** the validated stack (infra/stack/schema.ts: loadPulumiStack or fromPulumiConfig) */
  stack: PulumiStack;
}

/** Third octet of the stack's 10.213.x.0/24 subnet: a hash of the stack name, so stacks rarely overlap. */
export function stackSubnet(stack: string): { subnet: string; gateway: string; address(i: number): string } {
  const x = createHash("sha256").update(stack).digest()[0]!;
  return {
    subnet: `10.213.${x}.0/24`,
    gateway: `10.213.${x}.1`,
    address: (i: number) => `10.213.${x}.${10 + i}`,
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

    this.hosts = {};
    Object.values(spec.hosts).forEach((host, i) => {
      const component = catalogEntry(platform.components[host.name] ?? "loadgen");
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
        },
        { parent: this },
      );
    });

    const hosts = Object.values(this.hosts);
    const endpointsByComponent = pulumi.all(hosts.map((h) => h.endpoints)).apply((eps) => {
      const out: StackOutputs["endpoints"] = {};
      hosts.forEach((h, i) => {
        const component = platform.components[Object.keys(this.hosts)[i]!] ?? "loadgen";
        (out[component] ??= []).push(eps[i]!);
      });
      return out;
    });
    this.outputs = pulumi.all([this.network.name, endpointsByComponent]).apply(([networkName, endpoints]): StackOutputs => {
      const out: StackOutputs = {
        platform: "docker",
        stack: spec.name,
        network: { name: networkName, subnet: net.subnet },
        hosts: {},
        endpoints,
        versions: {},
      };
      for (const [hostName, h] of Object.entries(this.hosts)) {
        const componentName = platform.components[hostName] ?? "loadgen";
        const entry = catalogEntry(componentName);
        out.hosts[hostName] = { address: h.address, container: h.containerName, component: componentName, image: h.image, limits: h.limits };
        out.versions[componentName] = { pinned: entry.version, image: imageRef(entry), digestResolved: entry.digest !== null };
      }
      return out;
    });

    this.registerOutputs({ outputs: this.outputs });
  }
}
