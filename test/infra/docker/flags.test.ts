/** The limits model as @pulumi/docker Container arguments (infra/docker/flags.ts). */
import { describe, expect, it } from "vitest";
import { containerLimits } from "../../../infra/docker/flags.ts";
import type { HostSpec } from "../../../core/limits.ts";

const host = (limits: HostSpec["limits"]): HostSpec => ({ name: "sink", requested: {}, limits });

describe("containerLimits", () => {
  it("rounds memory down to whole MiB (the provider's MB), forbids swap and says so", () => {
    const t = containerLimits(host({ memoryBytes: 2_000_000_000 }), undefined, "/data");
    expect(t.args).toEqual({ memory: 1907, memorySwap: 1907 });
    expect(t.limits.applied.memoryBytes).toBe(1907 * 1024 ** 2);
    expect(t.limits.notes.join("\n")).toMatch(/2000000000 B rounded down to 1907 MiB/);
    expect(t.limits.enforced).toBe(true);
  });

  it("puts separate read and write caps on the device, and nothing on a tmpfs host", () => {
    const t = containerLimits(
      host({
        disk: {
          readIops: 100,
          writeIops: 200,
          readBytesPerSec: 10_000_000,
          writeBytesPerSec: 20 * 1024 ** 2,
        },
      }),
      "/dev/nvme0n1",
      "/data",
    );
    expect(t.args).toEqual({
      deviceReadIops: [{ path: "/dev/nvme0n1", rate: 100 }],
      deviceWriteIops: [{ path: "/dev/nvme0n1", rate: 200 }],
      deviceReadBps: [{ path: "/dev/nvme0n1", rate: 10_000_000 }],
      deviceWriteBps: [{ path: "/dev/nvme0n1", rate: 20 * 1024 ** 2 }],
    });
    const ram = containerLimits(host({ disk: { tmpfsBytes: 1024 ** 3 } }), "/dev/vda", "/var/lib/clickhouse");
    expect(ram.args).toEqual({ tmpfs: { "/var/lib/clickhouse": `rw,size=${1024 ** 3},mode=1777` } });
  });

  it("hands network caps to the shaper with the local platform's tbf burst", () => {
    const t = containerLimits(
      host({ network: { bandwidthBytesPerSec: 1_000_000, lossPercent: 1 } }),
      undefined,
      "/data",
    );
    expect(t.shaping).toEqual({ rateBytesPerSec: 1_000_000, burstBytes: 32 * 1024, lossPercent: 1 });
    expect(t.args).toEqual({});
    expect(
      containerLimits(host({ cpu: { quotaUs: 25000, periodUs: 100000 } }), undefined, "/data").shaping,
    ).toBeUndefined();
  });
});
