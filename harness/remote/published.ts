/**
 * The host ports a docker container publishes now, read from its engine, and the stack outputs brought up to date
 * with them. infra/docker/host.ts publishes each port on 127.0.0.1 without a fixed host port, so the engine picks one
 * every time the container starts: after `docker restart` (a fault step, harness/remote/docker-steps.ts, or a
 * generator: none cell's start, ./site.ts) the port may be another one than the deploy's outputs hold (Engine 20.10
 * on this machine: 127.0.0.1:32768, then 127.0.0.1:32769 after a restart). The Docker Engine API's container inspect
 * (`docker inspect`, NetworkSettings.Ports) maps "<port>/<protocol>" to its bindings, each { HostIp, HostPort },
 * or null for a port exposed but not published.
 */
import type { PublishedPort, StackOutputs } from "../../core/outputs.ts";
import type { HostShell } from "./shell.ts";

/** One host binding of a container port. */
export interface HostBinding {
  ip: string;
  port: number;
}

/**
 * NetworkSettings.Ports (its JSON, as `docker inspect --format '{{json .NetworkSettings.Ports}}'` prints it) as
 * "<port>/<protocol>" → its host bindings; a port without bindings maps to []. Malformed entries are left out.
 * @throws SyntaxError when the text is not JSON
 */
export function parsePublishedPorts(json: string): Map<string, HostBinding[]> {
  const out = new Map<string, HostBinding[]>();
  const data = JSON.parse(json) as unknown;
  if (data === null || typeof data !== "object") return out;
  for (const [key, bindings] of Object.entries(data as Record<string, unknown>)) {
    const list: HostBinding[] = [];
    for (const b of Array.isArray(bindings) ? bindings : []) {
      const ip = (b as { HostIp?: unknown }).HostIp;
      const port = Number((b as { HostPort?: unknown }).HostPort);
      if (typeof ip === "string" && Number.isInteger(port) && port > 0) list.push({ ip, port });
    }
    out.set(key, list);
  }
  return out;
}

/**
 * Set each published port of `role`'s endpoints in `outputs` (changed in place) to the host port the container
 * publishes now, the binding on the same address (127.0.0.1) first. A port the engine no longer publishes (a
 * stopped container) becomes external null (harnessAddress then gives none).
 * @returns one line per port that moved, e.g. "5432/tcp now published at 127.0.0.1:32769 (was 32768)"
 */
export function applyPublished(
  outputs: StackOutputs,
  role: string,
  now: ReadonlyMap<string, HostBinding[]>,
): string[] {
  const component = outputs.hosts[role]?.component;
  const ep = (outputs.endpoints[component ?? ""] ?? []).find((e) => e.host === role);
  const moved: string[] = [];
  for (const p of ep?.published ?? []) {
    const key = `${p.internal}/${p.protocol}`;
    const bindings = now.get(key) ?? [];
    const b =
      bindings.find((x) => x.ip === p.ip) ?? bindings.find((x) => x.ip === "" || x.ip === "0.0.0.0") ?? null;
    const external: PublishedPort["external"] = b?.port ?? null;
    if (external === p.external) continue;
    moved.push(
      `${key} now ${external === null ? "not published" : `published at ${p.ip}:${external}`} (was ${p.external ?? "none"})`,
    );
    p.external = external;
  }
  return moved;
}

/**
 * Read `role`'s container's published ports from the engine and apply them to `outputs` (applyPublished).
 * @throws ProvisioningError E_REMOTE_EXEC when the engine cannot inspect the container (HostShell.engine)
 */
export async function refreshPublished(
  outputs: StackOutputs,
  role: string,
  shell: Pick<HostShell, "engine" | "container">,
): Promise<string[]> {
  const json = await shell.engine([
    "inspect",
    "--type",
    "container",
    "--format",
    "{{json .NetworkSettings.Ports}}",
    shell.container,
  ]);
  return applyPublished(outputs, role, parsePublishedPorts(json.trim() || "{}"));
}
