/**
 * Pulumi program entry (Pulumi.yaml `main`): wires, exports, nothing else.
 *
 * The stack config Pulumi hands the program is validated by the one stack schema (infra/stack/schema.ts,
 * fromPulumiConfig); the stack outputs follow the contract in core/outputs.ts: platform, stack, message,
 * network, hosts (address, container, component, image, limits), endpoints per component, versions.
 *
 * - docker: a DockerStack (infra/docker/stack.ts): a network and one DockerHost per host.
 * - azure:  an AzureStack (infra/azure/stack.ts): a resource group, a virtual network with a subnet and a network
 *           security group open only to ingestbench:azure.allowFrom, and per host a VM of the stack's size with a
 *           Premium SSD v2 data disk at the host's disk caps, whose cloud-init starts the host's container with the
 *           docker platform's limit flags; tags and a daily auto-shutdown on every VM.
 * - local:  nothing is deployed; local stacks are provisioned by the harness (`ingestbench bench --stack <name>`).
 */
import * as pulumi from "@pulumi/pulumi";
import { AzureStack } from "./azure/stack.ts";
import { DockerStack } from "./docker/stack.ts";
import type { StackOutputs } from "../core/outputs.ts";
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
      return new AzureStack(`ib-${validated.spec.name}`, { stack: validated }).outputs;
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
