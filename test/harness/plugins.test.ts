// `ingestbench plugins` (harness/cli/commands/plugins.ts), run in this process through the CLI's own runCli: one
// row per registered plugin with its kind, version, platforms and evidence, in words and in --json, within 100
// columns, and its help within 15 lines.
import { describe, expect, it } from "vitest";
import { runCli } from "../../harness/cli/index.ts";
import { createContext } from "../../harness/cli/context.ts";
import {
  pluginRows,
  pluginsTable,
  pluginsWords,
  type PluginRow,
} from "../../harness/cli/commands/plugins.ts";
import { allPlugins } from "../../plugins/registry.ts";

async function cliHere(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx = createContext({
    stdout: { write: (s: string) => ((out += s), true) },
    stderr: { write: (s: string) => ((err += s), true) },
  });
  const code = await runCli([process.execPath, "bin/ingestbench.js", ...args], ctx);
  return { code, out, err };
}

describe("ingestbench plugins", () => {
  it("--json: one row per registered plugin, with its platforms and evidence as its descriptor says", async () => {
    const r = await cliHere("plugins", "--json");
    expect([r.code, r.err]).toEqual([0, ""]);
    const rows = JSON.parse(r.out) as PluginRow[];
    expect(rows.map((x) => `${x.kind}:${x.name}`)).toEqual(allPlugins.map((p) => `${p.kind}:${p.name}`));
    const row = (name: string) => rows.find((x) => x.name === name)!;
    expect(row("postgres")).toEqual({
      kind: "sink",
      name: "postgres",
      version: "18.4",
      platforms: ["local", "docker", "azure"],
      evidence: { level: "real-ci", version: "18.4" },
      verified: "real in CI",
    });
    expect(row("rsyslog")).toMatchObject({ platforms: ["local"], verified: "real in CI" });
    for (const p of allPlugins) {
      const x = row(p.name);
      expect(x.evidence, p.name).toEqual(p.evidence);
      expect(x.platforms.includes("local"), p.name).toBe(p.local !== undefined);
      expect(x.platforms.includes("docker") && x.platforms.includes("azure"), p.name).toBe(
        p.image !== undefined,
      );
      // a plugin with vectors only shows the version its image pins
      if (p.evidence.level === "vectors") expect(x.version, p.name).toBe(p.image?.version ?? null);
      else expect(x.version, p.name).toBe(p.evidence.version);
    }
  });

  it("prints the table within 100 columns, a row per plugin under the headers, evidence in words", async () => {
    const r = await cliHere("plugins");
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]!.split(/\s{2,}/)).toEqual(pluginsWords().headers);
    expect(lines).toHaveLength(1 + allPlugins.length);
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(100);
    expect(lines.find((l) => l.startsWith("collector  syslog-ng"))!.split(/\s{2,}/)).toEqual([
      "collector",
      "syslog-ng",
      "3.38",
      "local, docker, azure",
      "real in CI",
    ]);
    expect(lines.find((l) => /^sink\s+loki\s/.test(l))).toMatch(/docker, azure\s+protocol vectors only$/);
  });

  it("says run-once evidence with its machine and date, wrapping it under its column past 100 columns", () => {
    const base = allPlugins.find((p) => p.name === "fluentd")!;
    const rows = pluginRows([
      {
        ...base,
        evidence: {
          level: "run-once",
          version: "1.12.0",
          machine: "Intel(R) Xeon(R) Processor, 2 cores, kernel 6.18.44-fc-v1300, cgroup v1",
          date: "2026-12-07",
        },
      },
    ]);
    expect(rows[0]!.verified).toBe(
      "run once on Intel(R) Xeon(R) Processor, 2 cores, kernel 6.18.44-fc-v1300, cgroup v1 2026-12-07",
    );
    const lines = pluginsTable(rows).split("\n");
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(100);
    expect(lines.length).toBeGreaterThan(2); // the evidence went on
    const col = lines[0]!.indexOf("verified");
    expect(lines.slice(2).every((l) => l.slice(0, col).trim() === "" && l[col] !== " ")).toBe(true);
    expect(
      lines
        .slice(1)
        .map((l) => l.slice(col))
        .join(" "),
    ).toBe(rows[0]!.verified);
  });

  it("its help fits 15 lines", async () => {
    const r = await cliHere("plugins", "--help");
    expect(r.code).toBe(0);
    expect(r.out.trimEnd().split("\n").length).toBeLessThanOrEqual(15);
  });
});
