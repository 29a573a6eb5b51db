/**
 * AzureNetwork: an azure stack's network as a Pulumi ComponentResource: a virtual network (10.20.0.0/16), one
 * subnet (10.20.1.0/24) whose hosts get fixed private addresses, and the network security group on that subnet.
 *
 * The NSG admits inbound traffic from `allowFrom` only (SSH 22, node_exporter 9100 and the components' ports),
 * then traffic inside the virtual network (host to host: loadgen → collector → sink), and denies everything else
 * with an explicit rule (Azure's default rules would too: DenyAllInBound at 65500; the explicit rule keeps the
 * policy readable in the resource itself).
 */
import * as network from "@pulumi/azure-native/network/index.js";
import * as pulumi from "@pulumi/pulumi";

/** The stack's address plan: fixed, so host addresses are known before deployment (as on docker). */
export const ADDRESS_SPACE = "10.20.0.0/16";
export const SUBNET = "10.20.1.0/24";
/** Host i's private address (Azure reserves .0 to .3 of a subnet). */
export function hostAddress(i: number): string {
  return `10.20.1.${10 + i}`;
}

export interface AzureNetworkArgs {
  stack: string;
  resourceGroupName: pulumi.Input<string>;
  location: string;
  /** the caller's CIDR (ingestbench:azure.allowFrom) */
  allowFrom: string;
  /** TCP ports the caller may reach (SSH, node_exporter, components) */
  tcpPorts: number[];
  /** UDP ports the caller may reach (components with UDP data ports) */
  udpPorts: number[];
  tags: Record<string, string>;
}

export class AzureNetwork extends pulumi.ComponentResource {
  /** the virtual network's name in Azure, `ib-<stack>-vnet` */
  readonly vnetName: string;
  readonly vnet: network.VirtualNetwork;
  readonly nsg: network.NetworkSecurityGroup;
  readonly subnet: network.Subnet;

  constructor(name: string, args: AzureNetworkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ingestbench:azure:Network", name, {}, opts);
    const { resourceGroupName, location, tags } = args;
    this.vnetName = `ib-${args.stack}-vnet`;
    this.vnet = new network.VirtualNetwork(
      `${name}-vnet`,
      {
        virtualNetworkName: this.vnetName,
        resourceGroupName,
        location,
        addressSpace: { addressPrefixes: [ADDRESS_SPACE] },
        tags,
      },
      { parent: this },
    );
    const fromCaller = (n: string, priority: number, protocol: "Tcp" | "Udp", ports: number[]) => ({
      name: n,
      priority,
      direction: "Inbound",
      access: "Allow",
      protocol,
      sourceAddressPrefix: args.allowFrom,
      sourcePortRange: "*",
      destinationAddressPrefix: "*",
      destinationPortRanges: [...new Set(ports)].sort((a, b) => a - b).map(String),
    });
    const rules = [fromCaller("allow-caller-tcp", 100, "Tcp", args.tcpPorts)];
    if (args.udpPorts.length > 0) rules.push(fromCaller("allow-caller-udp", 110, "Udp", args.udpPorts));
    this.nsg = new network.NetworkSecurityGroup(
      `${name}-nsg`,
      {
        networkSecurityGroupName: `ib-${args.stack}-nsg`,
        resourceGroupName,
        location,
        securityRules: [
          ...rules,
          {
            name: "allow-vnet",
            priority: 200,
            direction: "Inbound",
            access: "Allow",
            protocol: "*",
            sourceAddressPrefix: ADDRESS_SPACE,
            sourcePortRange: "*",
            destinationAddressPrefix: ADDRESS_SPACE,
            destinationPortRange: "*",
          },
          {
            name: "deny-all-inbound",
            priority: 4096,
            direction: "Inbound",
            access: "Deny",
            protocol: "*",
            sourceAddressPrefix: "*",
            sourcePortRange: "*",
            destinationAddressPrefix: "*",
            destinationPortRange: "*",
          },
        ],
        tags,
      },
      { parent: this },
    );
    this.subnet = new network.Subnet(
      `${name}-subnet`,
      {
        subnetName: `ib-${args.stack}-subnet`,
        resourceGroupName,
        virtualNetworkName: this.vnet.name,
        addressPrefix: SUBNET,
        networkSecurityGroup: { id: this.nsg.id },
      },
      { parent: this },
    );
    this.registerOutputs({ vnet: this.vnetName, subnet: SUBNET });
  }
}
