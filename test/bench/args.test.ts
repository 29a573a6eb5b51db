// The bench scripts' flags (bench/args.ts benchArgs), through a real script started as `npm run bench:*` starts it:
// --help prints the usage and exits 0 before anything runs; an unknown flag is exit 2 with the parser's message and
// the usage, not a stack trace.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const run = (script: string, ...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", path.join("bench", script), ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });

describe("bench script flags", () => {
  it("--help prints the usage with every flag and exits 0; an unknown flag exits 2 naming it, with the usage and no stack", () => {
    const help = run("generators.ts", "--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^npm run bench:generators -- \[flags\]/);
    for (const flag of [
      "--seconds",
      "--warmup",
      "--batch",
      "--connections",
      "--syslog-batch",
      "--only",
      "--processes",
      "--help",
    ])
      expect(help.stdout).toContain(flag);
    const bad = run("capacity.ts", "--stack", "x");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^Unknown option '--stack'/);
    expect(bad.stderr).toContain("npm run bench:capacity -- [flags]");
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it("a bad value is exit 2 with its flag, the reason and the usage before anything runs: numbers, names, durations, sizes, row counts, stacks", () => {
    const cases: Array<[string, string[], RegExp]> = [
      ["generators.ts", ["--seconds", "abc"], /^bench:generators: --seconds abc: must be a number >= 0.5/],
      ["generators.ts", ["--processes", "0"], /^bench:generators: --processes 0: must be a number >= 1/],
      ["generators.ts", ["--only", "pg-copy,nope"], /^bench:generators: --only nope: not one of /],
      [
        "harness.ts",
        ["--skip-runs", "--rows", "12x"],
        /^bench:harness: --rows 12x: a list of positive whole row counts/,
      ],
      ["harness.ts", ["--sink", "mysql"], /^bench:harness: --sink mysql: clickhouse or postgres/],
      ["harness.ts", ["--soak", "5parsecs"], /^bench:harness: --soak 5parsecs: "5parsecs" is not a duration/],
      ["harness.ts", ["--lock-wait", "5x"], /^bench:harness: --lock-wait 5x: "5x" is not a duration/],
      [
        "harness.ts",
        ["--replay-stack", "nosuch"],
        /^bench:harness: --replay-stack nosuch: no stacks\/Pulumi\.nosuch\.yaml/,
      ],
      ["harness.ts", ["--replay", "4XB"], /^bench:harness: --replay 4XB: "4XB" is not a size/],
      ["harness.ts", ["--replay", "0"], /^bench:harness: --replay 0: at least 1 MiB/],
      [
        "harness.ts",
        ["--replay-through", "foo"],
        /^bench:harness: --replay-through foo: a list of pg-copy, syslog/,
      ],
      [
        "harness.ts",
        ["--replay", "1GiB", "--pg-settings", "file_extend_method"],
        /^bench:harness: --pg-settings file_extend_method: "file_extend_method" is not name=value/,
      ],
      [
        "harness.ts",
        ["--pg-settings", "a=b"],
        /^bench:harness: --pg-settings: the settings of the pg-copy replay's server; give --replay SIZE/,
      ],
      [
        "harness.ts",
        ["--results", "/etc/passwd"],
        /^bench:harness: --results \/etc\/passwd: not a directory/,
      ],
      [
        "harness.ts",
        ["--replay", "1GiB", "--replay-through", "syslog", "--pg-settings", "a=b"],
        /^bench:harness: --pg-settings: the settings of the pg-copy replay's server; --replay-through has no pg-copy/,
      ],
    ];
    for (const [script, args, message] of cases) {
      const r = run(script, ...args);
      expect(r.status, `${script} ${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain(`npm run bench:${script.replace(".ts", "")} -- [flags]`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).toBe(""); // nothing ran: not even the machine line
    }
  });
});
