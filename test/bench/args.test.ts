// The bench scripts' flags (bench/args.ts benchArgs), through a real script started as `npm run bench:*` starts it:
// --help prints the usage and exits 0 before anything runs; an unknown flag is exit 2 with the parser's message and
// the usage, not a stack trace.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const run = (script: string, ...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", path.join("bench", script), ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });

describe("bench script flags", () => {
  it("--help prints the usage with every flag and exits 0; an unknown flag exits 2 naming it, with the usage and no stack", () => {
    const help = run("generators.ts", "--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^npm run bench:generators -- \[flags\]/);
    for (const flag of ["--seconds", "--warmup", "--batch", "--connections", "--syslog-batch", "--only", "--processes", "--help"]) expect(help.stdout).toContain(flag);
    const bad = run("capacity.ts", "--stack", "x");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^Unknown option '--stack'/);
    expect(bad.stderr).toContain("npm run bench:capacity -- [flags]");
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
