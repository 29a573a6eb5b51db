// `ingestbench --help` and every command's `--help` fit a screen: at most 40 lines, none over 100 columns, printed
// through the entry point's own runCli (harness/cli/index.ts) at commander's width for a pipe (80); the top-level
// help lists one line per command and has an Examples section, and every flag each command had before the help was
// shortened still parses. The prose that left the help lives in docs/commands.md and docs/statistics.md.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { program, runCli } from "../../harness/cli/index.ts";
import { createContext } from "../../harness/cli/context.ts";
import { projectRoot } from "../helpers/bench.ts";

/** `ingestbench <args>` in this process: exit code and stdout. */
async function help(...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const ctx = createContext({
    stdout: { write: (s: string) => ((out += s), true) },
    stderr: { write: () => true },
  });
  const code = await runCli([process.execPath, "bin/ingestbench.js", ...args], ctx);
  return { code, out };
}

/** Every command and subcommand, as the words that name it ("results query"), commander's own `help` aside. */
function commandPaths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands
    .filter((c) => c.name() !== "help")
    .flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

const lines = (text: string): string[] => text.replace(/\n+$/, "").split("\n");
const tooWide = (text: string): string[] => lines(text).filter((l) => [...l].length > 100);

/** The flags each command took before its help was cut to a screen (none may be lost). */
const FLAGS: Record<string, string[]> = {
  bench: [
    "--stack",
    "--stacks",
    "--results",
    "--replicates",
    "--lock-wait",
    "--duration",
    "--warmup",
    "--progress",
    "--quiet",
  ],
  compare: [
    "--scenario",
    "--scenarios",
    "--metric",
    "--stacks",
    "--stack",
    "--results",
    "--baseline",
    "--contender",
    "--variants",
    "--force",
    "--json",
    "--wide",
    "--columns",
  ],
  report: ["--results", "--scenario", "--stacks", "--out", "--markdown"],
  "results query": ["--results", "--json"],
  validate: ["--json"],
  stacks: ["--json"],
  plugins: ["--json"],
  capacity: [
    "--stack",
    "--stacks",
    "--results",
    "--cell",
    "--start-rate",
    "--factor",
    "--tolerance",
    "--max-steps",
    "--step-duration",
    "--warmup",
    "--p99-bound",
    "--max-lag-slope",
    "--min-share",
    "--lock-wait",
    "--progress",
    "--quiet",
  ],
  aa: [
    "--stack",
    "--results",
    "--replicates",
    "--lock-wait",
    "--duration",
    "--warmup",
    "--stacks-dir",
    "--force",
    "--progress",
    "--quiet",
  ],
  nightly: [
    "--results",
    "--replicates",
    "--lock-wait",
    "--stacks-dir",
    "--force",
    "--window",
    "--require-history",
    "--json",
    "--out",
    "--markdown",
    "--progress",
    "--quiet",
  ],
  gc: ["--all", "--kill-live", "--dry-run", "--json"],
  up: ["--stack", "--scenario", "--cell", "--json", "--quiet", "--lock-wait"],
  run: [
    "--stack",
    "--results",
    "--replicates",
    "--lock-wait",
    "--duration",
    "--warmup",
    "--progress",
    "--quiet",
  ],
  down: ["--stack", "--cancel", "--quiet", "--lock-wait"],
};

describe("help that fits a screen", () => {
  it("ingestbench --help: at most 40 lines, one line per command, an Examples section of runnable commands", async () => {
    const { code, out } = await help("--help");
    expect(code).toBe(0);
    expect(lines(out).length, out).toBeLessThanOrEqual(40);
    expect(tooWide(out)).toEqual([]);
    const names = program()
      .commands.map((c) => c.name())
      .filter((n) => n !== "help");
    const list = out.slice(out.indexOf("\nCommands:\n"), out.indexOf("\nExamples:\n"));
    for (const name of names)
      expect(list.match(new RegExp(`^  ${name} +\\S.*$`, "gm")), name).toHaveLength(1);
    // no command's summary wraps onto a second line
    expect(lines(list).filter((l) => /^ {3,}\S/.test(l))).toEqual([]);
    // the examples: the quickstart, then commands of this CLI with real files and stacks of the repository
    const examples = lines(out.slice(out.indexOf("\nExamples:\n") + "\nExamples:\n".length)).filter((l) =>
      /^ {2}\S/.test(l),
    );
    expect(examples.length).toBeGreaterThanOrEqual(5);
    expect(examples.length).toBeLessThanOrEqual(8);
    expect(examples[0]).toMatch(/^ {2}npm run bench\b/);
    for (const cmd of ["bench", "compare", "report", "validate", "stacks", "plugins", "gc"])
      expect(
        examples.some((l) => l.startsWith(`  ingestbench ${cmd}`)),
        cmd,
      ).toBe(true);
    for (const l of examples.slice(1)) {
      const args = l.replace(/#.*$/, "").trim().split(/\s+/).slice(1);
      expect(names, l).toContain(args[0]);
      for (const file of args.filter((a) => /^(scenarios|stacks)\/[^*]+\.yaml$/.test(a)))
        expect(() => readFileSync(path.join(projectRoot, file)), file).not.toThrow();
    }
    expect(out).toMatch(/docs\/commands\.md/);
  });

  it("every command's --help is at most 40 lines, none over 100 columns, and points to docs/ for more", async () => {
    const paths = commandPaths(program());
    expect(paths.map((p) => p.join(" "))).toEqual(expect.arrayContaining(Object.keys(FLAGS)));
    const long: string[] = [];
    for (const words of paths) {
      const { code, out } = await help(...words, "--help");
      expect(code, words.join(" ")).toBe(0);
      expect(out, words.join(" ")).toMatch(new RegExp(`^Usage: ingestbench ${words.join(" ")} `));
      if (lines(out).length > 40) long.push(`${words.join(" ")}: ${lines(out).length} lines`);
      long.push(...tooWide(out).map((l) => `${words.join(" ")}: ${[...l].length} columns: ${l}`));
    }
    expect(long).toEqual([]);
    // the statistics and method prose moved out, with a pointer left behind
    expect((await help("nightly", "--help")).out).toMatch(/docs\/statistics\.md/);
    expect((await help("nightly", "--help")).out).not.toMatch(/Mann–Kendall|Theil–Sen|Holm-adjusted/);
    const commands = readFileSync(path.join(projectRoot, "docs/commands.md"), "utf8");
    expect(commands).toMatch(/Holm-adjusted one-sided p-value/);
    expect(readFileSync(path.join(projectRoot, "docs/statistics.md"), "utf8")).toMatch(
      /Mann–Kendall test, Theil–Sen/,
    );
    expect(commands).toMatch(/### ingestbench capacity\n\nFind the highest offered rate/);
  });

  it("every flag each command had still parses", () => {
    const byPath = new Map(commandPaths(program()).map((p) => [p.join(" "), p]));
    for (const [name, flags] of Object.entries(FLAGS)) {
      let cmd: Command = program();
      for (const w of byPath.get(name)!) cmd = cmd.commands.find((c) => c.name() === w)!;
      expect(
        cmd.options.map((o) => o.long),
        name,
      ).toEqual(expect.arrayContaining(flags));
    }
  });

  it("real entry point: `node bin/ingestbench.js --help` exits 0 with the same text", async () => {
    const r = spawnSync(process.execPath, ["bin/ingestbench.js", "--help"], {
      cwd: projectRoot,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, COLUMNS: "80" },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe((await help("--help")).out);
  });
});
