/**
 * AzureHost: one host of an azure stack (loadgen, collector, sink...) as a Pulumi ComponentResource: a VM of the
 * host's size running the host's container under the docker platform's limit flags.
 *
 * Children (all `{ parent: this }`, all tagged):
 * - `${name}-ip`       network.PublicIPAddress (Standard, static): how the harness reaches the host (NSG: allowFrom only)
 * - `${name}-nic`      network.NetworkInterface: fixed private address on the stack subnet, accelerated networking
 *                      (required by Dsv5/Ebsv5)
 * - `${name}-data`     compute.Disk: Premium SSD v2 (PremiumV2_LRS) with diskIOPSReadWrite / diskMBpsReadWrite from
 *                      the host's disk caps (./disk.ts), in the VM's zone; Docker's data root lives on it
 * - `${name}-vm`       compute.VirtualMachine: the stack's vmSize for the host, Ubuntu 24.04, SSH key only, customData =
 *                      the cloud-init of ./cloud-init.ts
 * - `${name}-shutdown` devtestlab.GlobalSchedule `shutdown-computevm-<vm>`: daily auto-shutdown at the stack's expiry
 *                      time of day (UTC), so a forgotten VM stops costing compute
 *
 * The host's files: the collector config rendered from the scenario cell (infra/docker/pipeline.ts, the same text
 * the docker platform uploads) and the catalog's static settings files are written by cloud-init and bind-mounted
 * read-only into the container; an image a pairing needs built (catalog `build`, e.g. Fluentd with
 * fluent-plugin-griddb) is built on the VM from the same build context, written by cloud-init.
 *
 * The container limits come from infra/docker/flags.ts (containerLimits, the blkio device being the data disk) and
 * the network cap from infra/docker/shaper.ts, run by a NET_ADMIN shaper container on the VM's network (eth0).
 */
import * as compute from "@pulumi/azure-native/compute/index.js";
import * as devtestlab from "@pulumi/azure-native/devtestlab/index.js";
import * as network from "@pulumi/azure-native/network/index.js";
import { readdirSync, readFileSync, statSync } from "node:fs";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { catalog, type CatalogBuild, type CatalogImage, heapMiB, imageRef } from "../catalog.ts";
import { containerLimits } from "../docker/flags.ts";
import type { ComponentEndpoints, HostConfigOutput } from "../../core/outputs.ts";
import { hostPorts, type HostPipeline } from "../docker/pipeline.ts";
import { shaperScript } from "../docker/shaper.ts";
import type { AppliedLimits, HostSpec } from "../../core/limits.ts";
import {
  cloudConfig,
  cloudInitScripts,
  DATA_DISK_DEVICE,
  NODE_EXPORTER_PORT,
  vmBuildDir,
  vmConfigPath,
  type VmFile,
} from "./cloud-init.ts";
import { premiumV2Disk } from "./disk.ts";
import { dockerRunLine } from "./docker-run.ts";
import type { VmSizeName } from "./sizes.ts";

/** The OS image of every VM (Canonical's Ubuntu 24.04 LTS, Gen2). */
export const OS_IMAGE = {
  publisher: "Canonical",
  offer: "ubuntu-24_04-lts",
  sku: "server",
  version: "latest",
} as const;

export interface AzureHostArgs {
  stack: string;
  host: HostSpec;
  component: CatalogImage;
  vmSize: VmSizeName;
  /** fixed private address on the stack subnet */
  address: string;
  resourceGroupName: pulumi.Input<string>;
  location: string;
  zone: string;
  subnetId: pulumi.Input<string>;
  dataDiskGiB: number;
  adminUsername: string;
  sshPublicKey: string;
  /** daily auto-shutdown time, "HHmm" UTC */
  shutdownTime: string;
  tags: Record<string, string>;
  /** the collector config rendered for this host and the image build its pairing needs (infra/docker/pipeline.ts) */
  pipeline?: HostPipeline;
  /** environment variables holding passwords (infra/secrets.ts secretEnvOf), secret Outputs: written into a 0600 env file on the VM by cloud-init; customData is then a secret */
  secretEnv?: Record<string, pulumi.Output<string>>;
}

const SHAPER = "shaper";
/** The repository root: catalog build contexts are relative to it. */
const REPO_ROOT = nodePath.resolve(nodePath.dirname(fileURLToPath(import.meta.url)), "../..");

/** The files of a catalog build context, as cloud-init writes them into `vmBuildDir` (executables keep 0755). */
export function buildContextFiles(build: CatalogBuild): VmFile[] {
  const root = nodePath.join(REPO_ROOT, build.context);
  const out: VmFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const file = nodePath.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile()) {
        out.push({
          path: `${vmBuildDir(build.repository)}/${nodePath.relative(root, file).split(nodePath.sep).join("/")}`,
          content: readFileSync(file, "utf8"),
          permissions: (statSync(file).mode & 0o111) !== 0 ? "0755" : "0644",
        });
      }
    }
  };
  walk(root);
  return out;
}

export class AzureHost extends pulumi.ComponentResource {
  /** the VM's and container's name */
  readonly vmName: string;
  readonly address: string;
  readonly image: string;
  readonly limits: AppliedLimits;
  /** the cloud-init document handed to the VM (plain text; customData is its base64; with a secret environment, its env file values shown as [secret] and customData a Pulumi secret) */
  readonly cloudInit: string;
  readonly publicAddress: pulumi.Output<string>;
  readonly endpoints: pulumi.Output<ComponentEndpoints>;
  readonly vm: compute.VirtualMachine;
  readonly disk: compute.Disk;
  /** the collector config written onto the VM and mounted (outputs `hosts.<h>.config`), for collector hosts */
  readonly config: HostConfigOutput | undefined;

  constructor(name: string, args: AzureHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ingestbench:azure:Host", name, {}, opts);
    const { stack, host, component, resourceGroupName, location, tags } = args;
    this.vmName = `ib-${stack}-${host.name}`;
    this.address = args.address;
    const build = args.pipeline?.build;
    this.image = build ? `${build.repository}:${build.tag}` : imageRef(component);
    const rendered = args.pipeline?.config;
    this.config = rendered
      ? {
          file: rendered.file,
          sha256: rendered.sha256,
          source: rendered.source,
          ...(build ? { built: { context: build.context, image: this.image, adds: build.adds } } : {}),
        }
      : undefined;

    // the docker platform's translation, the data disk being the throttled device
    const translated = containerLimits(host, DATA_DISK_DEVICE, component.dataDir);
    const disk = premiumV2Disk(host.limits.disk, args.vmSize, args.dataDiskGiB);
    this.limits = {
      requested: translated.limits.requested,
      applied: {
        ...translated.limits.applied,
        vmSize: args.vmSize,
        diskSku: "PremiumV2_LRS",
        diskIOPSReadWrite: disk.diskIOPSReadWrite,
        diskMBpsReadWrite: disk.diskMBpsReadWrite,
        dataDiskGiB: disk.sizeGiB,
      },
      enforced: translated.limits.enforced,
      notes: [
        ...translated.limits.notes.filter((n) => !n.startsWith("applied = ")),
        ...disk.notes,
        "applied = the values handed to Azure (VM size, disk) and to the Docker engine by cloud-init; read them back on the VM (docker inspect, tc -s qdisc)",
      ],
    };

    const hostLabels = {
      "ingestbench.stack": stack,
      "ingestbench.owner": tags.owner ?? "",
      "ingestbench.host": host.name,
      "ingestbench.component": component.name,
    };
    const heap = String(heapMiB(host.limits.memoryBytes));
    const env = Object.fromEntries(
      Object.entries(component.env).map(([k, v]) => [
        k,
        component.heapFromMemory ? v.replaceAll("{heapMiB}", heap) : v,
      ]),
    );
    const onTmpfs = host.limits.disk?.tmpfsBytes !== undefined;
    const volume = `${this.vmName}-data`;
    // the same files the docker platform uploads: the catalog's settings files and the rendered collector config
    const uploads = [
      ...(component.uploads ?? []),
      ...(rendered ? [{ file: rendered.file, content: rendered.text }] : []),
    ];
    const files: VmFile[] = uploads.map((u) => ({
      path: vmConfigPath(u.file),
      content: u.content,
      permissions: "0644",
    }));
    const command = rendered?.command ?? component.command;
    // passwords go into a 0600 docker env file, never onto the docker run line; its content only in the secret customData
    const secretEnv = Object.entries(args.secretEnv ?? {});
    const envFile = secretEnv.length > 0 ? vmConfigPath(`/${this.vmName}.env`) : undefined;
    const runs = [
      dockerRunLine({
        name: this.vmName,
        image: this.image,
        limits: translated.args,
        env,
        ...(envFile ? { envFile } : {}),
        labels: hostLabels,
        ...(onTmpfs ? {} : { volume: [volume, component.dataDir] as [string, string] }),
        ...(uploads.length > 0
          ? { files: uploads.map((u) => [vmConfigPath(u.file), u.file] as [string, string]) }
          : {}),
        ...(command ? { command } : {}),
      }),
    ];
    const images = build ? [] : [this.image];
    if (build) files.push(...buildContextFiles(build));
    if (translated.shaping) {
      const shaperImage = imageRef(catalog[SHAPER]!);
      images.push(shaperImage);
      runs.push(
        dockerRunLine({
          name: `${this.vmName}-shaper`,
          image: shaperImage,
          limits: {},
          labels: { ...hostLabels, "ingestbench.role": "shaper" },
          capAdd: ["NET_ADMIN"],
          entrypoint: "/bin/sh",
          command: ["-c", shaperScript(translated.shaping, "eth0")],
        }),
      );
    }
    const scripts = cloudInitScripts({
      images,
      builds: build ? [[this.image, vmBuildDir(build.repository)]] : [],
      volumes: onTmpfs ? [] : [volume],
      dockerRuns: runs,
    });
    const envFileOf = (values: string[]): VmFile[] =>
      envFile
        ? [
            {
              path: envFile,
              permissions: "0600",
              content: secretEnv.map(([k], i) => `${k}=${values[i]}\n`).join(""),
            },
          ]
        : [];
    // the document as shown (tests, docs): the env file's values stand as [secret]
    this.cloudInit = cloudConfig(scripts, [...envFileOf(secretEnv.map(() => "[secret]")), ...files]);
    const customData: pulumi.Input<string> = envFile
      ? pulumi.secret(
          pulumi
            .all(secretEnv.map(([, v]) => v))
            .apply((values) =>
              Buffer.from(cloudConfig(scripts, [...envFileOf(values), ...files]), "utf8").toString("base64"),
            ),
        )
      : Buffer.from(this.cloudInit, "utf8").toString("base64");

    const ip = new network.PublicIPAddress(
      `${name}-ip`,
      {
        publicIpAddressName: `${this.vmName}-ip`,
        resourceGroupName,
        location,
        sku: { name: "Standard" },
        publicIPAllocationMethod: "Static",
        zones: [args.zone],
        tags,
      },
      { parent: this },
    );
    const nic = new network.NetworkInterface(
      `${name}-nic`,
      {
        networkInterfaceName: `${this.vmName}-nic`,
        resourceGroupName,
        location,
        enableAcceleratedNetworking: true,
        ipConfigurations: [
          {
            name: "ipconfig1",
            primary: true,
            subnet: { id: args.subnetId },
            privateIPAllocationMethod: "Static",
            privateIPAddress: args.address,
            publicIPAddress: { id: ip.id },
          },
        ],
        tags,
      },
      { parent: this },
    );
    this.disk = new compute.Disk(
      `${name}-data`,
      {
        diskName: `${this.vmName}-data`,
        resourceGroupName,
        location,
        zones: [args.zone],
        sku: { name: "PremiumV2_LRS" },
        creationData: { createOption: "Empty" },
        diskSizeGB: disk.sizeGiB,
        diskIOPSReadWrite: disk.diskIOPSReadWrite,
        diskMBpsReadWrite: disk.diskMBpsReadWrite,
        tags,
      },
      { parent: this },
    );
    this.vm = new compute.VirtualMachine(
      `${name}-vm`,
      {
        vmName: this.vmName,
        resourceGroupName,
        location,
        zones: [args.zone],
        hardwareProfile: { vmSize: args.vmSize },
        osProfile: {
          computerName: host.name,
          adminUsername: args.adminUsername,
          customData,
          linuxConfiguration: {
            disablePasswordAuthentication: true,
            ssh: {
              publicKeys: [
                { path: `/home/${args.adminUsername}/.ssh/authorized_keys`, keyData: args.sshPublicKey },
              ],
            },
          },
        },
        storageProfile: {
          imageReference: { ...OS_IMAGE },
          osDisk: {
            createOption: "FromImage",
            caching: "ReadWrite",
            managedDisk: { storageAccountType: "Premium_LRS" },
            deleteOption: "Delete",
          },
          // Premium SSD v2 has no host caching: caching None
          dataDisks: [
            {
              lun: 0,
              createOption: "Attach",
              caching: "None",
              managedDisk: { id: this.disk.id },
              deleteOption: "Detach",
            },
          ],
        },
        networkProfile: { networkInterfaces: [{ id: nic.id, primary: true }] },
        tags,
      },
      { parent: this },
    );
    new devtestlab.GlobalSchedule(
      `${name}-shutdown`,
      {
        name: `shutdown-computevm-${this.vmName}`,
        resourceGroupName,
        location,
        status: "Enabled",
        taskType: "ComputeVmShutdownTask",
        dailyRecurrence: { time: args.shutdownTime },
        timeZoneId: "UTC",
        targetResourceId: this.vm.id,
        notificationSettings: { status: "Disabled" },
        tags,
      },
      { parent: this },
    );

    this.publicAddress = ip.ipAddress.apply((a) => a ?? "");
    const ports = hostPorts(component, args.pipeline);
    const data = ports.find((p) => p.role === "data");
    const metrics = ports.find((p) => p.role === "metrics");
    this.endpoints = this.publicAddress.apply((pub) => ({
      host: host.name,
      data: data ? { host: args.address, port: data.port, scheme: data.scheme } : null,
      metrics: metrics ? { host: args.address, port: metrics.port, scheme: metrics.scheme } : null,
      // containers run on the VM's network: each port is reachable on the public address, from allowFrom only
      published: ports.map((p) => ({ internal: p.port, external: p.port, ip: pub, protocol: p.protocol })),
    }));
    this.registerOutputs({
      vmName: this.vmName,
      address: this.address,
      publicAddress: this.publicAddress,
      limits: this.limits,
      nodeExporterPort: NODE_EXPORTER_PORT,
      config: this.config,
    });
  }
}
