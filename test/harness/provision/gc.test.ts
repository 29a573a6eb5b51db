/**
 * gc of Pulumi stacks past their expiry, against a RECORDING STAND-IN for the Pulumi CLI (no real CLI, no cloud):
 * exactly the expired stacks are destroyed, --dry-run destroys none, and without a CLI the Pulumi part is skipped
 * with its reason while `ingestbench gc` still collects local leftovers (exit 0).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { collectExpiredStacks, stackVerdict } from "../../../harness/provision/gc.ts";
import {
  createPulumiCliStandIn,
  type PulumiCliStandIn,
  type StandInStack,
} from "../../helpers/pulumi-cli-stand-in.ts";
import { projectCopy, repoRoot } from "./fixtures.ts";

const NOW = Date.parse("2026-11-29T12:00:00.000Z");
const hoursAgo = (h: number) => new Date(NOW - h * 3_600_000).toISOString();
const stack = (s: Partial<StandInStack>): StandInStack => ({
  config: {},
  outputs: { platform: "docker" },
  resourceCount: 9,
  ...s,
});

let standIn: PulumiCliStandIn | undefined;
let project: string | undefined;
afterEach(() => {
  standIn?.cleanup();
  if (project) rmSync(project, { recursive: true, force: true });
  standIn = project = undefined;
});

function setup() {
  standIn = createPulumiCliStandIn({
    stacks: {
      "old-default": stack({ lastUpdate: hoursAgo(5) }), // default 4h: expired 1h ago
      "short-expiry": stack({ lastUpdate: hoursAgo(2), config: { "ingestbench:expiry": "90m" } }),
      "fresh-default": stack({ lastUpdate: hoursAgo(1) }),
      "long-expiry": stack({ lastUpdate: hoursAgo(5), config: { "ingestbench:expiry": "8h" } }),
      "already-empty": stack({ lastUpdate: hoursAgo(10), resourceCount: 0 }),
      "being-updated": stack({ lastUpdate: hoursAgo(10), updateInProgress: true }),
      "never-updated": stack({}),
      "bad-expiry": stack({ lastUpdate: hoursAgo(10), config: { "ingestbench:expiry": "soon" } }),
    },
  });
  project = projectCopy([]);
  return { standIn, opts: { projectDir: project, env: standIn.env, nowMs: NOW } };
}

describe("gc of Pulumi stacks (recording Pulumi CLI stand-in)", () => {
  it("destroys exactly the stacks whose last update + ingestbench:expiry is past", async () => {
    const { standIn, opts } = setup();
    const report = await collectExpiredStacks(opts);
    expect(report.errors).toEqual([]);
    expect(report.destroyed).toEqual(["old-default", "short-expiry"]);
    expect(report.stacks.filter((s) => s.expired).map((s) => s.name)).toEqual([
      "old-default",
      "short-expiry",
    ]);
    const verdict = Object.fromEntries(report.stacks.map((s) => [s.name, s]));
    expect(verdict["short-expiry"]!.expiresAt).toBe(new Date(NOW - 30 * 60_000).toISOString());
    expect(verdict["fresh-default"]!.expiresAt).toBe(new Date(NOW + 3 * 3_600_000).toISOString());
    expect(verdict["being-updated"]!.reason).toBe("an update is in progress");
    expect(verdict["already-empty"]!.reason).toBe("no resources deployed");
    expect(verdict["never-updated"]!.reason).toBe("never updated");
    expect(verdict["bad-expiry"]!.reason).toMatch(/ingestbench:expiry "soon" is not a duration/);

    const lines = standIn.commandLines();
    expect(lines[0]).toBe("stack ls --json --non-interactive");
    expect(lines).toContain("config --show-secrets --json --stack long-expiry --non-interactive");
    expect(lines.filter((l) => l.startsWith("destroy "))).toEqual([
      "destroy --yes --skip-preview --exec-kind auto.local --stack old-default --non-interactive",
      "destroy --yes --skip-preview --exec-kind auto.local --stack short-expiry --non-interactive",
    ]);
    const state = standIn.state().stacks;
    expect(state["old-default"]!.resourceCount).toBe(0);
    expect(state["long-expiry"]!.resourceCount).toBe(9);
  });

  it("--dry-run lists the same stacks and destroys none", async () => {
    const { standIn, opts } = setup();
    const report = await collectExpiredStacks({ ...opts, dryRun: true });
    expect(report.stacks.filter((s) => s.expired).map((s) => s.name)).toEqual([
      "old-default",
      "short-expiry",
    ]);
    expect(report.destroyed).toEqual([]);
    expect(standIn.commandLines().some((l) => l.startsWith("destroy") || l.startsWith("stack select"))).toBe(
      false,
    );
  });

  it("stackVerdict: the expiry boundary itself counts as expired", () => {
    expect(
      stackVerdict({ name: "s", current: false, lastUpdate: hoursAgo(4), resourceCount: 1 }, {}, NOW).expired,
    ).toBe(true);
    expect(
      stackVerdict(
        {
          name: "s",
          current: false,
          lastUpdate: new Date(NOW - 4 * 3_600_000 + 1000).toISOString(),
          resourceCount: 1,
        },
        {},
        NOW,
      ).expired,
    ).toBe(false);
  });

  it("without a Pulumi CLI: `ingestbench gc` collects local leftovers, says why Pulumi stacks were skipped, exits 0", () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "ib-no-pulumi-"));
    try {
      // PATH keeps the system tools gc needs (ip) but has no pulumi: the CLI's own PATH, minus any pulumi
      const pathVar = [
        empty,
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
      ].join(":");
      const r = spawnSync(process.execPath, ["bin/ingestbench.js", "gc", "--json"], {
        cwd: repoRoot,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, PATH: pathVar },
      });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as {
        runs: unknown[];
        netns: unknown[];
        pulumi: { skipped?: string; destroyed: string[] };
      };
      expect(Array.isArray(out.runs) && Array.isArray(out.netns)).toBe(true); // the local part ran
      expect(out.pulumi.skipped).toMatch(
        /^Pulumi stacks not collected: the Pulumi CLI \(`pulumi`\) is not on PATH/,
      );
      expect(out.pulumi.skipped).toContain("curl -fsSL https://get.pulumi.com | sh");
      expect(out.pulumi.destroyed).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
