/**
 * Pulumi program entry (Pulumi.yaml `main`): wires, exports, nothing else.
 *
 * The stack config Pulumi hands the program is validated by the one stack schema (infra/stack/schema.ts,
 * fromPulumiConfig); the stack outputs follow the contract in infra/docker/outputs.ts: platform, stack, message,
 * network, hosts (address, container, component, image, limits), endpoints per component, versions.
 *
 * - docker: a DockerStack (infra/docker/stack.ts): a network and one DockerHost per host.
 * - local:  nothing is deployed; local stacks are provisioned by the harness (`ingestbench bench --stack <name>`).
 * - azure:  not implemented yet (issue 4); `pulumi up` fails with that message before creating anything.
 */
import * as pulumi from "@pulumi/pulumi";
import { DockerStack } from "./docker/stack.ts";
import type { StackOutputs } from "./docker/outputs.ts";
import { fromPulumiConfig } from "./stack/schema.ts";

const validated = fromPulumiConfig(pulumi.getStack(), pulumi.runtime.allConfig());

function deploy(): pulumi.Output<StackOutputs> {
  switch (validated.spec.platform) {
    case "docker":
      return new DockerStack(`ib-${validated.spec.name}`, { stack: validated }).outputs;
    case "local":
      return pulumi.output<StackOutputs>({
        platform: "local",
        stack: validated.spec.name,
        message: `local stacks are not deployed with Pulumi: run them with \`ingestbench bench --stack ${validated.spec.name} <scenario.yaml>\``,
        network: null,
        hosts: {},
        endpoints: {},
        versions: {},
      });
    case "azure":
      throw new Error(
        `ingestbench: stack ${validated.spec.name}: the azure Pulumi program is not implemented yet (issue 4); docker stacks and local stacks work`,
      );
  }
}

const outputs = deploy();

export const platform = outputs.platform;
export const stack = outputs.stack;
export const message = outputs.message;
export const network = outputs.network;
export const hosts = outputs.hosts;
export const endpoints = outputs.endpoints;
export const versions = outputs.versions;
