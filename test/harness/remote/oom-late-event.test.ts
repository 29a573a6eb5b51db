// checkOom (harness/remote/oom.ts) when containerd delivered the OOM event after the container's exit: the engine
// then answers `docker inspect` with State.OOMKilled false (containerd issues 8893 and 12372), and the event log is the
// evidence. The engine's answers are scripted here (the same command lines run against the real engine in
// readback.test.ts, where the order of the two events cannot be chosen).
import { describe, expect, it } from "vitest";
import { checkOom } from "../../../harness/remote/oom.ts";
import type { HostShell } from "../../../harness/remote/shell.ts";

/** A container that is gone (its cgroup unreadable), as `docker inspect` and `docker events` describe it. */
function goneContainer(
  state: Record<string, unknown>,
  events: string | Error,
): { shell: HostShell; calls: string[][] } {
  const calls: string[][] = [];
  const shell = {
    host: "sink",
    container: "ib-c",
    run: async () => {
      throw new Error("the container is not running");
    },
    engine: async (args: string[]) => {
      calls.push(args);
      if (args[0] === "inspect") return JSON.stringify([{ State: state }]);
      if (args[0] === "events") {
        if (events instanceof Error) throw events;
        return events;
      }
      throw new Error(`unexpected ${args.join(" ")}`);
    },
  } as unknown as HostShell;
  return { shell, calls };
}

const exited = {
  OOMKilled: false,
  Status: "exited",
  ExitCode: 137,
  StartedAt: "2026-12-05T05:00:00.123456789Z",
};

describe("checkOom: an OOM event the engine had after the exit", () => {
  it("a container that exited with 137 is looked up in the event log since the run began; its oom events are counted as kills, not as the main process's", async () => {
    const { shell, calls } = goneContainer(exited, "oom\noom\n");
    const k = await checkOom(shell, 0, 16 * 2 ** 20, "2026-12-05T05:01:00.000Z");
    expect(k).toMatchObject({ host: "sink", container: "ib-c", oomKilled: false, kills: 2 });
    expect(k!.evidence).toBe(
      "docker events ib-c: 2 oom, then exit code 137 (State.OOMKilled false: the engine had the exit before the OOM event)",
    );
    const ev = calls.find((a) => a[0] === "events")!;
    expect(ev.slice(0, 3)).toEqual(["events", "--since", "2026-12-05T05:01:00.000Z"]);
    // without the run's start, from the container's own
    const own = goneContainer(exited, "oom\n");
    expect((await checkOom(own.shell, 0, null))!.kills).toBe(1);
    expect(own.calls.find((a) => a[0] === "events")!.slice(0, 3)).toEqual([
      "events",
      "--since",
      exited.StartedAt,
    ]);
    expect(ev).toContain("--until");
    expect(ev.join(" ")).toContain("--filter container=ib-c --filter event=oom --format {{.Action}}");
  });

  it("no oom event, an event log that does not answer, another exit code or OOMKilled already true: no lookup or no kill", async () => {
    expect(await checkOom(goneContainer(exited, "").shell, 0, null)).toBeNull();
    expect(await checkOom(goneContainer(exited, new Error("timed out")).shell, 0, null)).toBeNull();
    const other = goneContainer({ ...exited, ExitCode: 1 }, "oom\n");
    expect(await checkOom(other.shell, 0, null)).toBeNull();
    expect(other.calls.some((a) => a[0] === "events")).toBe(false);
    const inspected = goneContainer({ ...exited, OOMKilled: true }, "oom\n");
    expect((await checkOom(inspected.shell, 0, null))!.evidence).toBe(
      "docker inspect ib-c State.OOMKilled true (status exited)",
    );
    expect(inspected.calls.some((a) => a[0] === "events")).toBe(false);
  });
});
