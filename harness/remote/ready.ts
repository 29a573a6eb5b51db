/**
 * Waiting for a deployed component to serve: a container is "created" once its process started (docker.Container
 * returns then, as `docker run -d` does), not once the server in it listens, so the first connection of the
 * verifier or a generator could meet a PostgreSQL still in initdb (through the engine's port proxy: a reset).
 * The wait is read inside the container's own network namespace: `/proc/net/tcp` and `/proc/net/tcp6` (proc(5):
 * `local_address` is `<hex address>:<hex port>`, state `0A` is LISTEN), so it needs only `sh` and `cat` in the image.
 */
import { ProvisioningError } from "../../core/errors.ts";
import type { HostShell } from "./shell.ts";

/** Ports in LISTEN state in /proc/net/tcp[6] text (proc(5)). */
export function listeningPorts(procNetTcp: string): Set<number> {
  const ports = new Set<number>();
  for (const line of procNetTcp.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || f[3] !== "0A") continue;
    const port = Number.parseInt(f[1]!.split(":").pop() ?? "", 16);
    if (Number.isInteger(port)) ports.add(port);
  }
  return ports;
}

/**
 * Resolve once `port` is listening inside the container behind `shell`.
 * @throws ProvisioningError E_REMOTE_NOT_READY after `timeoutMs` (default 120 s) without a listener, naming the
 *         host, the port and what does listen; E_REMOTE_EXEC when the container cannot be read
 */
export async function waitListening(
  shell: HostShell,
  port: number,
  timeoutMs = 120_000,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = new Set<number>();
  for (;;) {
    const text = await shell.run("sh", ["-c", "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null || true"], {
      timeoutMs: 15_000,
    });
    seen = listeningPorts(text);
    if (seen.has(port)) return;
    if (Date.now() > deadline || signal?.aborted) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new ProvisioningError(
    "E_REMOTE_NOT_READY",
    `host "${shell.host}" (${shell.describe}): nothing listens on port ${port} after ${Math.round(timeoutMs / 1000)} s (listening: ${[...seen].sort((a, b) => a - b).join(", ") || "none"}); \`docker logs ${shell.container}\` says why`,
  );
}
