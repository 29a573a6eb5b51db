/**
 * The cloud-init user data of an azure host (VM customData): a `#cloud-config` document (cloud-init's
 * "Cloud config examples": write_files, runcmd) that writes three bash scripts and runs them in order:
 *
 * 1. data-disk.sh: formats the Premium SSD v2 data disk (LUN 0, /dev/disk/azure/scsi1/lun0, whole device, ext4,
 *    so blkio caps can name it) and mounts it at /var/lib/docker: Docker's data root and the hosts' volumes live on
 *    the capped disk.
 * 2. install.sh: Docker (Ubuntu's docker.io) and node_exporter (Ubuntu's prometheus-node-exporter, port 9100);
 *    vm.max_map_count=262144 (Elasticsearch's documented requirement for production hosts).
 * 3. containers.sh: pulls the pinned images (or builds the image a pairing needs, from the catalog's build context
 *    written under /opt/ingestbench/build/) and starts the host's container, and its shaper when the host has a
 *    network cap, with the docker run lines of ./docker-run.ts (the docker platform's flags).
 *
 * Config files (the collector config rendered from the scenario cell by infra/docker/pipeline.ts, and the
 * catalog's static settings files) are written by cloud-init's write_files under /opt/ingestbench/etc/<path in the
 * container> and bind-mounted read-only at their path in the container: the docker platform uploads the same text.
 *
 * Every script is `set -euo pipefail` and logs to /var/log/ingestbench-*.log; a failed step fails cloud-init
 * (visible in `cloud-init status --long`).
 */
import { stringify } from "yaml";
import { shellQuote } from "./docker-run.ts";

/** The data disk's stable device path on Azure Linux images (udev rules of the Azure guest agent / azure-vm-utils). */
export const DATA_DISK_DEVICE = "/dev/disk/azure/scsi1/lun0";
export const NODE_EXPORTER_PORT = 9100;

export interface CloudInitScripts {
  "data-disk.sh": string;
  "install.sh": string;
  "containers.sh": string;
}

const HEADER = "#!/usr/bin/env bash\nset -euo pipefail\n";

/**
 * The three scripts, in the order they run. `dockerRuns`: ./docker-run.ts lines; `images` (pulled first),
 * `builds` (built next, from a context cloud-init wrote: [image, directory on the VM]) and `volumes` (created
 * before the runs): plain names.
 */
export function cloudInitScripts(o: {
  images: string[];
  builds?: Array<[string, string]>;
  volumes: string[];
  dockerRuns: string[];
}): CloudInitScripts {
  const dataDisk = [
    HEADER,
    `dev=${DATA_DISK_DEVICE}`,
    'for _ in $(seq 1 60); do [ -e "$dev" ] && break; sleep 2; done',
    '[ -e "$dev" ] || { echo "ingestbench: data disk $dev did not appear" >&2; exit 1; }',
    "# a fresh disk has no filesystem; a redeployed VM keeps its disk's",
    'blkid "$dev" >/dev/null 2>&1 || mkfs.ext4 -q -L ibdata "$dev"',
    "mkdir -p /var/lib/docker",
    "grep -q 'LABEL=ibdata' /etc/fstab || echo 'LABEL=ibdata /var/lib/docker ext4 defaults,nofail 0 2' >> /etc/fstab",
    "mountpoint -q /var/lib/docker || mount /var/lib/docker",
    "",
  ].join("\n");
  const install = [
    HEADER,
    "export DEBIAN_FRONTEND=noninteractive",
    "apt-get update -q",
    "apt-get install -y -q docker.io prometheus-node-exporter",
    "systemctl enable --now docker prometheus-node-exporter",
    "# Elasticsearch's documented production setting for mmapfs (harmless for the other components)",
    "sysctl -w vm.max_map_count=262144",
    "docker version --format '{{.Server.Version}}' > /var/lib/ingestbench-docker-version",
    "",
  ].join("\n");
  const containers = [
    HEADER,
    ...o.images.map((i) => `docker pull ${shellQuote(i)}`),
    ...(o.builds ?? []).map(
      ([image, dir]) => `docker build --quiet --tag ${shellQuote(image)} ${shellQuote(dir)}`,
    ),
    ...o.volumes.map((v) => `docker volume create ${shellQuote(v)} >/dev/null`),
    ...o.dockerRuns,
    "",
  ].join("\n");
  return { "data-disk.sh": dataDisk, "install.sh": install, "containers.sh": containers };
}

/** A file cloud-init writes onto the VM (write_files runs before runcmd). */
export interface VmFile {
  /** absolute path on the VM */
  path: string;
  content: string;
  /** octal mode, e.g. "0644" */
  permissions: string;
}

/** Where a file the container reads at `containerPath` is kept on the VM (bind-mounted from there). */
export function vmConfigPath(containerPath: string): string {
  return `/opt/ingestbench/etc${containerPath.startsWith("/") ? "" : "/"}${containerPath}`;
}

/** Where a catalog build context (infra/catalog.ts `build.context`) is written on the VM for `docker build`. */
export function vmBuildDir(repository: string): string {
  return `/opt/ingestbench/build/${repository.replace(/[^A-Za-z0-9._-]+/g, "-")}`;
}

/** The `#cloud-config` document: `files`, then the scripts under /opt/ingestbench, run in order by runcmd. */
export function cloudConfig(scripts: CloudInitScripts, files: readonly VmFile[] = []): string {
  const names = Object.keys(scripts) as (keyof CloudInitScripts)[];
  const doc = {
    write_files: [
      ...files.map((f) => ({
        path: f.path,
        permissions: f.permissions,
        owner: "root:root",
        content: f.content,
      })),
      ...names.map((n) => ({
        path: `/opt/ingestbench/${n}`,
        permissions: "0755",
        owner: "root:root",
        content: scripts[n],
      })),
    ],
    runcmd: names.map((n) => [
      "bash",
      "-c",
      `/opt/ingestbench/${n} >> /var/log/ingestbench-${n.replace(/\.sh$/, "")}.log 2>&1`,
    ]),
  };
  return `#cloud-config\n${stringify(doc, { lineWidth: 0 })}`;
}
