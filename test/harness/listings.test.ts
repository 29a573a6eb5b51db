// The listings as tables. `ingestbench stacks` on the repository's own stacks/: every stack and host is a line, each host's caps
// in units (cores, GiB/MiB, IOPS and MiB/s or tmpfs, Mbit/s and delay), azure hosts with their VM size and its
// vCPUs and memory, no line over 100 columns; --json keeps the stack files' own values.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hostCells, stackEntries, stackListing, stacksTable } from "../../harness/cli/commands/stacks.ts";
import { parseCpu } from "../../core/units.ts";
import { projectRoot } from "../helpers/bench.ts";

const STACKS = path.join(projectRoot, "stacks");

describe("ingestbench stacks: a table", () => {
  const listing = stackListing(STACKS);
  const table = stacksTable(listing);
  const lines = table.split("\n");

  it("lists every stack of stacks/ and each of its hosts, in at most 100 columns", () => {
    expect(listing.length).toBeGreaterThanOrEqual(10);
    expect(listing.every((l) => l.entry.ok)).toBe(true);
    expect(lines.filter((l) => [...l].length > 100)).toEqual([]);
    expect(lines[0]).toMatch(/^stack \/ host +CPU \(cores\) +memory +disk +network +VM size$/);
    for (const { entry } of listing) {
      if (!entry.ok) continue;
      const at = lines.indexOf(`${entry.name} (${entry.platform})`);
      expect(at, entry.name).toBeGreaterThan(0);
      expect(lines.slice(at + 1, at + 1 + entry.hosts.length).map((l) => l.trim().split(/ {2,}/)[0])).toEqual(
        entry.hosts.map((h) => h.name),
      );
    }
    expect(lines.at(-1)).toMatch(/^– no cap; \(VM\)/);
  });

  it("shows the caps in units: the quarter-core sink, a tmpfs, a network cap, azure VM sizes", () => {
    const row = (stack: string, host: string): string[] => {
      const at = lines.indexOf(stack);
      const l = lines.slice(at + 1).find((x) => x.startsWith(`  ${host} `))!;
      return l.trim().split(/ {2,}/);
    };
    expect(row("local-quarter-core (local)", "sink")).toEqual([
      "sink",
      "0.25",
      "2 GiB",
      "3000 IOPS, 120 MiB/s",
      "96 Mbit/s",
    ]);
    expect(row("local-quarter-core (local)", "loadgen")).toEqual(["loadgen", "1", "–", "–", "–"]);
    expect(row("docker-debian-faults (docker)", "sink")).toEqual([
      "sink",
      "1",
      "2 GiB",
      "tmpfs 512 MiB",
      "–",
    ]);
    expect(row("docker-debian-network-bound (docker)", "sink")[4]).toBe("2.4 Mbit/s"); // 300KB/s
    expect(row("azure-quarter-core (azure)", "sink")).toEqual([
      "sink",
      "0.25",
      "2 GiB",
      "3000 IOPS, 120 MiB/s",
      "96 Mbit/s",
      "Standard_E2bs_v5",
    ]);
    // an azure host without caps: its VM size's own vCPUs and memory (infra/azure/sizes.ts)
    expect(row("azure-d2s-v5 (azure)", "collector")).toEqual([
      "collector",
      "2 (VM)",
      "8 GiB (VM)",
      "–",
      "–",
      "Standard_D2s_v5",
    ]);
    // an oversubscribed stack says so under its hosts, in the table's width
    const at = lines.indexOf("local-2-cores (local)");
    expect(lines.slice(at).find((l) => l.startsWith("  !! "))).toMatch(
      /^ {2}!! oversubscribed: CPU caps of loadgen \+ collector \+ sink add up to/,
    );
  });

  it("every unit the stack files may use: delay, loss, per-direction caps, a CPU quota", () => {
    expect(
      hostCells(
        {
          cpu: parseCpu("25000 100000"),
          memoryBytes: 1536 * 2 ** 20,
          disk: { readIops: 100, writeBytesPerSec: 10 * 2 ** 20 },
          network: { bandwidthBytesPerSec: 125_000_000, delayMs: 50, lossPercent: 1 },
        },
        null,
      ),
    ).toEqual(["0.25", "1.5 GiB", "IOPS r 100 w –, r – w 10 MiB/s", "1 Gbit/s, +50 ms, 1 % loss", ""]);
  });

  it("a broken stack file is one line naming it, the others still listed; --json is the entries as before", () => {
    const broken = stacksTable([
      {
        entry: { name: "bad", ok: false, error: "stacks/Pulumi.bad.yaml:3:5: cpu: not a number\nmore" },
        limits: {},
      },
      ...listing.slice(0, 1),
    ]);
    expect(broken.split("\n")[1]).toBe("bad: INVALID (stacks/Pulumi.bad.yaml:3:5: cpu: not a number)");
    expect(broken).toContain(`${listing[0]!.entry.name} (`);
    expect(stackEntries(STACKS)).toEqual(listing.map((l) => l.entry));
  });
});
// `ingestbench plugins` with each plugin's evidence: test/harness/plugins.test.ts
