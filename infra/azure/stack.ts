/**
 * AzureStack: a whole azure stack as a Pulumi ComponentResource: the stack's resource group (`ib-<stack>`), its
 * network (./network.ts) and one AzureHost (./host.ts) per host, every resource tagged
 * { owner, expiry, ingestbench-stack }. Outputs follow core/outputs.ts's contract exactly, with platform
 * "azure": `hosts.<h>.address` is the VM's private address on the stack subnet (the data plane, as the docker
 * network's address), `publicAddress` where the harness reaches the VM (SSH, published ports), `container` the
 * VM's (and its container's) name, `limits.applied.vmSize` its size, `config`
 * (collector hosts) the config rendered from `ingestbench:cell` and written by cloud-init (./host.ts); each
 * endpoint's `published` ports are on the VM's public address (`ip`; `external` = `internal`, containers run on
 * the VM's network), reachable from ingestbench:azure.allowFrom only, as is node_exporter on port 9100.
 *
 * Deploy-time checks (after the schema's): an sshPublicKey is given, and allowFrom is not a documentation address
 * (RFC 5737: the committed stack files carry 203.0.113.10/32 as a stand-in for the user's own address).
 */
import * as resources from "@pulumi/azure-native/resources/index.js";
import * as pulumi from "@pulumi/pulumi";
import { catalogEntry, imageRef } from "../catalog.ts";
import type { StackOutputs } from "../../core/outputs.ts";
import { hostPipelines, hostPorts, pipelineOf } from "../docker/pipeline.ts";
import { isDocumentationAddress, type AzureOptions, type PulumiStack } from "../stack/schema.ts";
import { NODE_EXPORTER_PORT } from "./cloud-init.ts";
import { DEFAULT_DATA_DISK_GIB } from "./disk.ts";
import { AzureHost } from "./host.ts";
import { AzureNetwork, hostAddress, SUBNET } from "./network.ts";
import { secretEnvOf } from "../secrets.ts";

export interface AzureStackArgs {
  /** the validated stack (infra/stack/schema.ts); its platform must be azure */
  stack: PulumiStack;
  /** deployment time, ms since the epoch (expiry tag and shutdown time); default Date.now() */
  now?: number;
}

/** Tags on every resource: owner, expiry (ISO 8601 UTC, deploy time + ingestbench:expiry) and the stack. */
export function stackTags(stack: PulumiStack, now: number): Record<string, string> {
  return {
    owner: stack.platform.owner,
    expiry: expiryOf(stack, now)
      .toISOString()
      .replace(/\.\d{3}Z$/, "Z"),
    "ingestbench-stack": stack.spec.name,
  };
}

function expiryOf(stack: PulumiStack, now: number): Date {
  return new Date(Math.ceil((now + stack.spec.expiryMs) / 60_000) * 60_000);
}

/**
 * The azure block of an azure stack, after the checks that only `pulumi up` needs: an SSH key, and a caller's
 * address that is not the committed documentation stand-in.
 * @throws Error saying which `pulumi config set` fixes it
 */
export function deployChecks(stack: PulumiStack): { azure: AzureOptions; sshPublicKey: string } {
  const { spec, platform } = stack;
  const azure = platform.azure;
  if (spec.platform !== "azure" || azure === undefined)
    throw new Error(`ingestbench: stack ${spec.name} is not an azure stack`);
  const sshPublicKey = azure.sshPublicKey;
  if (sshPublicKey === undefined) {
    throw new Error(
      `ingestbench: stack ${spec.name}: ingestbench:azure.sshPublicKey is not set; set it with ` +
        `pulumi config set --path ingestbench:azure.sshPublicKey "$(cat ~/.ssh/id_ed25519.pub)" --stack ${spec.name}`,
    );
  }
  if (isDocumentationAddress(azure.allowFrom)) {
    throw new Error(
      `ingestbench: stack ${spec.name}: ingestbench:azure.allowFrom is ${azure.allowFrom}, a documentation address (RFC 5737) standing in for yours; ` +
        `set your public address: pulumi config set --path ingestbench:azure.allowFrom <your-ip>/32 --stack ${spec.name}`,
    );
  }
  return { azure, sshPublicKey };
}

export class AzureStack extends pulumi.ComponentResource {
  readonly resourceGroup: resources.ResourceGroup;
  readonly network: AzureNetwork;
  readonly hosts: Record<string, AzureHost>;
  readonly outputs: pulumi.Output<StackOutputs>;

  constructor(name: string, args: AzureStackArgs, opts?: pulumi.ComponentResourceOptions) {
    // checked before anything (this component included) is registered
    const { azure, sshPublicKey } = deployChecks(args.stack);
    super("ingestbench:azure:Stack", name, {}, opts);
    const { spec, platform } = args.stack;
    const now = args.now ?? Date.now();
    const tags = stackTags(args.stack, now);
    const expiry = expiryOf(args.stack, now);
    const shutdownTime = `${String(expiry.getUTCHours()).padStart(2, "0")}${String(expiry.getUTCMinutes()).padStart(2, "0")}`;
    const componentOf = (host: string) => platform.components[host] ?? "loadgen";
    // the collector configs are rendered (from ingestbench:cell) against the sink's private address before any
    // resource exists: a pairing that cannot be rendered fails first, as on the docker platform
    const pipelines = hostPipelines(
      Object.values(spec.hosts).map(
        (h, i) =>
          [h.name, catalogEntry(componentOf(h.name)), hostAddress(i)] as [
            string,
            ReturnType<typeof catalogEntry>,
            string,
          ],
      ),
      pipelineOf(platform),
    );

    this.resourceGroup = new resources.ResourceGroup(
      `${name}-rg`,
      { resourceGroupName: `ib-${spec.name}`, location: azure.location, tags },
      { parent: this },
    );
    const ports = Object.keys(spec.hosts).flatMap((h) =>
      hostPorts(catalogEntry(componentOf(h)), pipelines[h]),
    );
    this.network = new AzureNetwork(
      `${name}-net`,
      {
        stack: spec.name,
        resourceGroupName: this.resourceGroup.name,
        location: azure.location,
        allowFrom: azure.allowFrom,
        tcpPorts: [22, NODE_EXPORTER_PORT, ...ports.filter((p) => p.protocol === "tcp").map((p) => p.port)],
        udpPorts: ports.filter((p) => p.protocol === "udp").map((p) => p.port),
        tags,
      },
      { parent: this },
    );

    this.hosts = {};
    // passwords as Pulumi secrets (config secret or INGESTBENCH_<SINK>_PASSWORD), never the catalog's (infra/secrets.ts)
    const cellSink = spec.hosts.sink ? componentOf("sink") : undefined;
    Object.values(spec.hosts).forEach((host, i) => {
      this.hosts[host.name] = new AzureHost(
        `${name}-${host.name}`,
        {
          stack: spec.name,
          host,
          component: catalogEntry(componentOf(host.name)),
          vmSize: azure.vmSizes[host.name]!, // the schema requires one per host
          address: hostAddress(i),
          resourceGroupName: this.resourceGroup.name,
          location: azure.location,
          zone: azure.zone ?? "1",
          subnetId: this.network.subnet.id,
          dataDiskGiB: azure.dataDiskGiB ?? DEFAULT_DATA_DISK_GIB,
          adminUsername: azure.adminUsername ?? "ingestbench",
          sshPublicKey,
          shutdownTime,
          tags,
          pipeline: pipelines[host.name]!,
          secretEnv: secretEnvOf(catalogEntry(componentOf(host.name)), cellSink),
        },
        { parent: this },
      );
    });

    const hosts = Object.entries(this.hosts);
    this.outputs = pulumi
      .all([pulumi.all(hosts.map(([, h]) => h.endpoints)), pulumi.all(hosts.map(([, h]) => h.publicAddress))])
      .apply(([eps, publicAddresses]): StackOutputs => {
        const vnetName = this.network.vnetName;
        const out: StackOutputs = {
          platform: "azure",
          stack: spec.name,
          network: { name: vnetName, subnet: SUBNET },
          hosts: {},
          endpoints: {},
          versions: {},
        };
        hosts.forEach(([hostName, h], i) => {
          const componentName = componentOf(hostName);
          const entry = catalogEntry(componentName);
          out.hosts[hostName] = {
            address: h.address,
            publicAddress: publicAddresses[i]!,
            container: h.vmName,
            component: componentName,
            image: h.image,
            limits: h.limits,
            ...(h.config ? { config: h.config } : {}),
          };
          (out.endpoints[componentName] ??= []).push(eps[i]!);
          // a built image has no registry digest: digestResolved stays false (as on the docker platform)
          out.versions[componentName] = {
            pinned: entry.version,
            image: h.image,
            digestResolved: h.image === imageRef(entry) && entry.digest !== null,
          };
        });
        return out;
      });
    this.registerOutputs({ outputs: this.outputs });
  }
}
