/**
 * The shells into a deployed stack's hosts, from its outputs: on docker, `docker exec` into `hosts.<h>.container`
 * with the Docker CLI of this machine (DOCKER_HOST honoured); on azure, SSH to `hosts.<h>.publicAddress` as the VMs'
 * admin user (`ingestbench:azure.adminUsername`, default "ingestbench") and `docker exec` there.
 *
 * Environment: INGESTBENCH_DOCKER (Docker CLI, default "docker" on PATH), INGESTBENCH_SSH (ssh client, default
 * "ssh"), INGESTBENCH_SSH_IDENTITY (private key for the VMs; default: the ssh client's own keys and agent).
 */
import type { StackOutputs } from "../../core/outputs.ts";
import { ProvisioningError } from "../../core/errors.ts";
import { findOnPath } from "../../core/which.ts";
import { dockerExecShell, sshDockerShell, type HostShell } from "./shell.ts";

/** Where the shells come from: the CLIs' environment and the azure admin user. */
export interface ShellSource {
  env?: NodeJS.ProcessEnv;
  /** the azure VMs' admin user (the stack's `ingestbench:azure.adminUsername`); default "ingestbench" */
  adminUsername?: string;
}

/**
 * A shell factory for the hosts of a deployed stack; one shell per host, made on first use.
 * @throws ProvisioningError E_STACK_OUTPUTS (when called) for a host not in the outputs or a local stack
 */
export function shellsFor(outputs: StackOutputs, source: ShellSource = {}): (host: string) => HostShell {
  const env = source.env ?? process.env;
  const made = new Map<string, HostShell>();
  return (host: string): HostShell => {
    const known = made.get(host);
    if (known) return known;
    const h = outputs.hosts[host];
    if (!h)
      throw new ProvisioningError(
        "E_STACK_OUTPUTS",
        `stack ${outputs.stack}: no host "${host}" in the outputs (hosts: ${Object.keys(outputs.hosts).join(", ")})`,
      );
    let shell: HostShell;
    if (outputs.platform === "docker") {
      shell = dockerExecShell(host, h.container, {
        env,
        ...(env.INGESTBENCH_DOCKER ? { docker: env.INGESTBENCH_DOCKER } : {}),
      });
    } else if (outputs.platform === "azure") {
      if (!h.publicAddress)
        throw new ProvisioningError(
          "E_UNREACHABLE",
          `stack ${outputs.stack}: host ${host} has no publicAddress in the outputs: this machine cannot reach it over SSH`,
        );
      shell = sshDockerShell(host, h.publicAddress, h.container, {
        user: source.adminUsername ?? "ingestbench",
        env,
        ...(env.INGESTBENCH_SSH ? { ssh: env.INGESTBENCH_SSH } : {}),
        ...(env.INGESTBENCH_SSH_IDENTITY ? { identityFile: env.INGESTBENCH_SSH_IDENTITY } : {}),
      });
    } else {
      throw new ProvisioningError(
        "E_STACK_OUTPUTS",
        `stack ${outputs.stack}: a ${outputs.platform} stack has no deployed hosts to reach`,
      );
    }
    made.set(host, shell);
    return shell;
  };
}

/**
 * Checked before a docker or azure stack is deployed: the client the shells need is on PATH — the Docker CLI
 * (INGESTBENCH_DOCKER, default `docker`) for docker stacks, an ssh client (INGESTBENCH_SSH, default `ssh`) for azure.
 * @throws ProvisioningError E_REMOTE_EXEC naming the missing client and what it is for
 */
export function requireShellClient(
  platform: StackOutputs["platform"],
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (platform === "local") return;
  const [name, what] =
    platform === "docker"
      ? [
          env.INGESTBENCH_DOCKER ?? "docker",
          "the Docker CLI (https://docs.docker.com/engine/install/), to run the generators in the loadgen container and read each container's counters",
        ]
      : [env.INGESTBENCH_SSH ?? "ssh", "an ssh client (OpenSSH), to reach each VM's containers"];
  if (findOnPath(name, env.PATH) === null) {
    throw new ProvisioningError(
      "E_REMOTE_EXEC",
      `\`${name}\` is not on PATH: a ${platform} stack needs ${what}; checked before deploying anything`,
    );
  }
}
