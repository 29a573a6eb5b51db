// The disk-full step's script on a real tmpfs (mounted here, 4 MiB), and the drop-connections helpers' parsing.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  describeDrop,
  describeFill,
  DISK_FILL_SCRIPT,
  dropPeers,
  parseDfLine,
} from "../../../harness/runner/step-scripts.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "ib-fill-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "ib-fill-test", dir]);
});
afterAll(() => {
  spawnSync("umount", [dir]);
  rmSync(dir, { recursive: true, force: true });
});

const fill = (level: number) => {
  const r = spawnSync("sh", ["-c", DISK_FILL_SCRIPT, "sh", dir, String(level)], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
};

describe("disk-full script (a real 4 MiB tmpfs)", () => {
  it("fills the volume to the level asked, then to the last block (ENOSPC), and says so from df", () => {
    const half = parseDfLine(
      fill(50)
        .split("\n")
        .find((l) => l.startsWith("after:"))!,
    )!;
    expect(half.totalKiB).toBe(4096);
    expect(half.usedKiB).toBeGreaterThanOrEqual(2048);
    expect(half.usedKiB).toBeLessThan(2048 + 64);
    const out = fill(100);
    const full = parseDfLine(out.split("\n").find((l) => l.startsWith("after:"))!)!;
    expect(full.availKiB).toBe(0);
    expect(describeFill(out)).toBe(
      `data volume ${dir}: 4096 of 4096 KiB used (100 %), 0 KiB free (ib-fill-test)`,
    );
    // a write now fails with ENOSPC, as the component's will
    expect(() => writeFileSync(path.join(dir, "more"), "x".repeat(8192))).toThrow(/ENOSPC/);
  });
});

describe("drop-connections helpers", () => {
  it("picks the peers in data flow, and counts what ss -K printed", () => {
    expect(dropPeers(["loadgen", "collector", "sink"], "collector", null)).toEqual(["sink"]);
    expect(dropPeers(["loadgen", "collector-1", "collector-2", "sink"], "sink", null)).toEqual([
      "collector-1",
      "collector-2",
    ]);
    expect(dropPeers(["loadgen", "sink"], "sink", null)).toEqual(["loadgen"]);
    expect(dropPeers(["loadgen", "sink"], "loadgen", null)).toEqual(["sink"]);
    expect(dropPeers(["loadgen", "collector", "sink"], "collector", "loadgen")).toEqual(["loadgen"]);
    const ss =
      "Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n0      0      10.213.0.3:40212 10.213.0.4:5432\n0      0      10.213.0.3:40214 10.213.0.4:5432\n";
    expect(describeDrop("collector", "sink", "10.213.0.4", ss)).toBe(
      "closed 2 TCP connection(s) of collector to sink (10.213.0.4): 10.213.0.3:40212 → 10.213.0.4:5432; 10.213.0.3:40214 → 10.213.0.4:5432",
    );
  });
});
