import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveProgram, type ProgramSpec } from "../../core/program.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "ib-program-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** a real executable that prints `text` on stderr (as java does) and exits `code` */
function program(name: string, text: string, code = 0): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\necho "${text} args:$*" >&2\nexit ${code}\n`);
  chmodSync(file, 0o755);
  return file;
}

const spec = (over: Partial<ProgramSpec> = {}): ProgramSpec => ({
  plugin: "demo",
  names: ["ib-demo-a", "ib-demo-b"],
  versionArgs: ["--version"],
  patterns: [/demo version (\d+\.\d+\.\d+)/],
  install: "get it from the demo project",
  ...over,
});

describe("core/program resolveProgram (real executables)", () => {
  it("takes the stack's path, a command line with its own arguments, then the build, then PATH in order", () => {
    const a = program("ib-demo-a", "demo version 1.2.3");
    program("ib-demo-b", "demo version 9.9.9");
    const env = { PATH: dir };
    const viaPath = resolveProgram(spec(), undefined, "here", env);
    expect(viaPath).toEqual({ argv: [a], version: "1.2.3", from: "PATH" });
    const viaBuild = resolveProgram(
      spec({ built: () => path.join(dir, "ib-demo-b") }),
      undefined,
      "here",
      env,
    );
    expect(viaBuild).toEqual({ argv: [path.join(dir, "ib-demo-b")], version: "9.9.9", from: "built" });
    const line = resolveProgram(spec(), `ib-demo-b --flag "two words"`, "here", env);
    expect(line).toEqual({
      argv: [path.join(dir, "ib-demo-b"), "--flag", "two words"],
      version: "9.9.9",
      from: "stack",
    });
  });

  it("a missing program is refused naming what was looked for and how to get it", () => {
    expect(() => resolveProgram(spec(), undefined, "stacks/x.yaml:3:5", { PATH: "/nonexistent" })).toThrow(
      /stacks\/x\.yaml:3:5: demo needs a program: none of ib-demo-a, ib-demo-b is on PATH; get it from the demo project/,
    );
    expect(() => resolveProgram(spec(), "/nowhere/demo --x", "at", { PATH: dir })).toThrow(
      /programs\.demo is "\/nowhere\/demo --x", but \/nowhere\/demo is not an executable/,
    );
  });

  it("a program that prints no version is refused with what it printed", () => {
    const odd = program("ib-odd", "something else", 3);
    expect(() => resolveProgram(spec(), odd, "at", { PATH: dir })).toThrow(
      /cannot read demo's version .*exit 3.*something else/,
    );
  });
});
