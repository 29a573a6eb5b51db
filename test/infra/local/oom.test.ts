// A real OOM kill under a local host's memory cap (cgroup v1 memory.limit_in_bytes here): a process in the host's
// cgroup allocates past its cap, the kernel's OOM killer ends it, and the host's oom_kill counter
// (infra/local/cgroup.ts readOomKillCount) says so; a host that stayed under its cap counts 0. The run turns such a
// count into E_OOM_KILLED naming host, cap and source (harness/runner/local-site.ts oomKills, harness/runner/site.ts oomMessage).
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import type { StackSpec } from "../../../core/limits.ts";
import { readOomKillCount } from "../../../infra/local/cgroup.ts";
import { withLocalStack } from "../../../infra/local/platform.ts";
import { oomMessage } from "../../../harness/runner/site.ts";

const CAP = 48 * 2 ** 20;
const STACK: StackSpec = {
  name: "local-oom-test",
  file: "stacks/Pulumi.local-oom-test.yaml",
  platform: "local",
  expiryMs: 3600_000,
  hosts: {
    capped: { name: "capped", requested: { memory: "48MiB" }, limits: { memoryBytes: CAP } },
    free: { name: "free", requested: {}, limits: {} },
  },
};

describe("OOM kills on the local platform (real cgroup)", () => {
  it("counts the kernel's OOM kill of a process that allocates past its host's memory cap, and names it", async () => {
    await withLocalStack(STACK, async (local) => {
      const capped = local.hosts.capped!;
      expect(await readOomKillCount(capped.cgroup)).toMatchObject({ count: 0 });
      // 256 MiB touched page by page (bytearray zero-fills) under a 48 MiB cap: the OOM killer ends it with SIGKILL
      const child = capped.spawn("python3", ["-c", "b = bytearray(256 * 2**20)"]);
      const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
      expect({ code, signal }).toEqual({ code: null, signal: "SIGKILL" });
      const c = await readOomKillCount(capped.cgroup);
      expect(c!.count).toBeGreaterThanOrEqual(1);
      expect(c!.file).toMatch(/memory\.(oom_control|events)$/);
      // the host that ran nothing capped counts none
      expect((await readOomKillCount(local.hosts.free!.cgroup))?.count ?? 0).toBe(0);
      const message = oomMessage([
        {
          host: "capped",
          container: "cgroup",
          limitBytes: CAP,
          oomKilled: false,
          kills: c!.count,
          evidence: `cgroup ${capped.cgroup.version} ${c!.file} oom_kill ${c!.count}`,
        },
      ]);
      expect(message).toMatch(
        /^host capped: the kernel OOM-killed \d+ process\(es\) in cgroup under its memory cap of 50331648 bytes \(cgroup v1 .*memory\.oom_control oom_kill \d+\)$/,
      );
    });
  });
});
