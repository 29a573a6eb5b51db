/**
 * OOM kills in a deployed container under its memory cap, from two sources:
 *
 * - `docker inspect` State.OOMKilled: true once the container's main process was killed by the kernel's OOM killer
 *   (the engine sets it when the container exits after an OOM event; Docker Engine API, ContainerInspect, State).
 *   containerd can deliver the OOM event after the exit (containerd issues 8893, 12372), and the engine then leaves
 *   OOMKilled false; for a container that exited with 137 (SIGKILL) the engine's event log is read instead
 *   (`docker events --filter event=oom` since the run began), which has the event whatever its order. An `oom` event
 *   is any OOM kill in the container's cgroup, not only of its main process, and 137 is any SIGKILL, so this
 *   counts kills (the events) and does not say the main process was one. A process that reaches its cap within
 *   milliseconds of the container's start can be killed before the engine watches the cgroup: then only the kernel's
 *   log has it, and no verdict is given here;
 * - the container's cgroup, read inside it while it runs: cgroup v1 memory.oom_control `oom_kill N`, cgroup v2
 *   memory.events `oom_kill N` (the kernel's count of processes the OOM killer ended in this cgroup; a killed
 *   child, e.g. one PostgreSQL backend, leaves the container running and shows only here).
 *
 * Both need the engine to answer `docker inspect` for the container (else: no verdict). The counter is compared with its value when the run began (a container kept up across cells may carry kills of
 * an earlier cell), read with the limits (./readback.ts CGROUP_SCRIPT prints the same files).
 */
import { CGROUP_SCRIPT, parseCgroupFiles } from "./readback.ts";
import type { OomKill } from "../runner/site.ts";
import type { HostShell } from "./shell.ts";

export type { OomKill };

/** `oom_kill N` of memory.oom_control (v1) or memory.events (v2) in CGROUP_SCRIPT's output, with the file; null without one. */
export function oomKillCount(files: Map<string, string>): { count: number; file: string } | null {
  for (const [file, text] of files) {
    if (!/\/memory\.(oom_control|events)$/.test(file)) continue;
    const m = /^oom_kill (\d+)$/m.exec(text);
    if (m) return { count: Number(m[1]), file };
  }
  return null;
}

/** The cgroup's oom_kill counter of the container behind `shell`, or null when it cannot be read (e.g. stopped). */
export async function readOomCounter(
  shell: HostShell,
): Promise<{ count: number; file: string; version: string } | null> {
  try {
    const files = parseCgroupFiles(await shell.run("sh", ["-c", CGROUP_SCRIPT]));
    const c = oomKillCount(files);
    return c ? { ...c, version: files.get("version") ?? "?" } : null;
  } catch {
    return null;
  }
}

/**
 * Did the kernel OOM-kill anything in the container behind `shell` since `baseline` (the oom_kill count read at the
 * run's start; null: not read, counted from 0)? `since`: when the run began (RFC 3339, the harness's clock), the start
 * of the event log read for a container gone with 137 (default: the container's own start). Returns the evidence, or
 * null when no source shows a kill.
 */
export async function checkOom(
  shell: HostShell,
  baseline: number | null,
  limitBytes: number | null,
  since?: string,
): Promise<OomKill | null> {
  let oomKilled = false;
  let status = "?";
  let events = 0;
  try {
    const [info] = JSON.parse(await shell.engine(["inspect", "--type", "container", shell.container])) as {
      State: { OOMKilled?: boolean; Status?: string; ExitCode?: number; StartedAt?: string };
    }[];
    oomKilled = info?.State.OOMKilled === true;
    status = info?.State.Status ?? "?";
    const from = since ?? info?.State.StartedAt;
    if (!oomKilled && status === "exited" && info?.State.ExitCode === 137 && from)
      events = await oomEventsSince(shell, from);
  } catch {
    // no engine answers for this container: nothing says its cgroup is the container's own (a stand-in's or a
    // host's root cgroup counts every OOM kill of the machine), so no verdict
    return null;
  }
  const counter = await readOomCounter(shell);
  const kills = counter ? counter.count - (baseline ?? 0) : events > 0 ? events : null;
  if (!oomKilled && !(kills !== null && kills > 0)) return null;
  const parts = [];
  if (events > 0)
    parts.push(
      `docker events ${shell.container}: ${events} oom, then exit code 137 (State.OOMKilled false: the engine had the exit before the OOM event)`,
    );
  if (oomKilled) parts.push(`docker inspect ${shell.container} State.OOMKilled true (status ${status})`);
  if (counter)
    parts.push(
      `cgroup ${counter.version} ${counter.file} oom_kill ${counter.count}${baseline ? ` (${baseline} at the start)` : ""}`,
    );
  return {
    host: shell.host,
    container: shell.container,
    limitBytes,
    oomKilled,
    kills,
    evidence: parts.join("; "),
  };
}

/** How many `oom` events the engine's log has of the container behind `shell` since `since` (RFC 3339); 0 when it cannot say. */
async function oomEventsSince(shell: HostShell, since: string): Promise<number> {
  try {
    // --until: the log is read up to now and the command ends (without it, it follows new events)
    const out = await shell.engine(
      [
        "events",
        "--since",
        since,
        "--until",
        new Date().toISOString(),
        "--filter",
        `container=${shell.container}`,
        "--filter",
        "event=oom",
        "--format",
        "{{.Action}}",
      ],
      { timeoutMs: 10_000 },
    );
    return out.split("\n").filter((l) => l.trim() === "oom").length;
  } catch {
    return 0;
  }
}
