import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { isBuiltin } from "node:module";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GeneratorProcess } from "../../../harness/generators/process.ts";
import type { GeneratorContext } from "../../../harness/generators/types.ts";
import {
  bundleGenerator,
  installGenerator,
  OPTIONAL_EXTERNALS,
  REMOTE_ROOT,
  type GeneratorBundle,
} from "../../../harness/remote/bundle.ts";
import { dockerExecShell } from "../../../harness/remote/shell.ts";
import { createDockerCliStandIn, type DockerCliStandIn } from "../../helpers/docker-cli-stand-in.ts";
import { startSyslogReceiver } from "../../helpers/syslog-receiver.ts";

const CONTAINER = "ib-test-loadgen";

function ctx(port: number, genId: number): GeneratorContext {
  return {
    target: { host: "127.0.0.1", port, params: {} },
    fields: [
      { name: "ts", type: "timestamp" },
      { name: "msg", type: "string", size: 64 },
    ],
    genId,
  };
}

/** The environment without anything that would let a child load tsx or this project's node_modules. */
function bareEnv(extraPath?: string): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _o, NODE_PATH: _p, ...rest } = process.env;
  return extraPath ? { ...rest, PATH: `${extraPath}${path.delimiter}${rest.PATH ?? ""}` } : rest;
}

/**
 * Every module specifier the bundle loads, found by esbuild's own parser (comments and strings are not imports):
 * import statements, dynamic imports and require calls, including esbuild's `__require` shim calls. The
 * createRequire banner is taken out first, so that `require(...)` parses as a require call again.
 */
async function bundleImports(
  code: string,
): Promise<{ specifiers: Map<string, Set<string>>; warnings: string[] }> {
  const banner = "const require = __ibCreateRequire(import.meta.url);";
  expect(code).toContain(banner);
  const specifiers = new Map<string, Set<string>>();
  const result = await build({
    stdin: {
      contents: code.replace(banner, "").replace(/\b__require\(/g, "require("),
      loader: "js",
      sourcefile: "generator.mjs",
    },
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    logLevel: "silent",
    plugins: [
      {
        name: "record-imports",
        setup(b) {
          b.onResolve({ filter: /.*/ }, (a) => {
            specifiers.set(a.path, (specifiers.get(a.path) ?? new Set()).add(a.kind));
            return { path: a.path, external: true };
          });
        },
      },
    ],
  });
  return {
    specifiers,
    warnings: result.warnings.map((w) => `${w.text}: ${w.location?.lineText.trim().slice(0, 120) ?? ""}`),
  };
}

describe("generator bundle (esbuild) run by plain node", () => {
  let bundle: GeneratorBundle;
  let tmp: string;
  beforeAll(async () => {
    bundle = await bundleGenerator();
    tmp = mkdtempSync(path.join(os.tmpdir(), "ib-bundle-test-"));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("is one ESM file, hashed and cached per process", async () => {
    expect(await bundleGenerator()).toBe(bundle);
    expect(bundle.bytes).toBe(Buffer.byteLength(bundle.code));
    expect(bundle.sha256).toBe(createHash("sha256").update(bundle.code).digest("hex"));
    expect(bundle.code).toContain('import { createRequire as __ibCreateRequire } from "node:module"');
  });

  it("imports nothing outside node built-ins (optional native add-ons excepted)", async () => {
    const { specifiers, warnings } = await bundleImports(bundle.code);
    // the scan does see the bundle's imports: ESM ones (syslog's socket) and CJS ones (pg's lazy pg-native)
    expect(specifiers.get("node:net")?.has("import-statement")).toBe(true);
    expect(specifiers.get("pg-native")?.has("require-call")).toBe(true);
    // "node:" specifiers never resolve to a package; node:sqlite is undici's lazily loaded cache store (Node >= 22.5)
    const outside = [...specifiers.keys()].filter(
      (s) => !isBuiltin(s) && !s.startsWith("node:") && !OPTIONAL_EXTERNALS.includes(s),
    );
    expect(outside).toEqual([]);
    // no require() esbuild could not follow (a non-literal require would name a module this scan cannot see)
    expect(warnings.filter((w) => !w.startsWith("Using direct eval"))).toEqual([]);

    // and it tells a package import from a comment or a string
    const probe = await bundleImports(
      [
        'import { createRequire as __ibCreateRequire } from "node:module"; const require = __ibCreateRequire(import.meta.url);',
        '// require("in-a-comment")',
        "const s = \"import x from 'in-a-string'\";",
        'const lp = __require("left-pad");',
        'const u = await import("undici");',
      ].join("\n"),
    );
    expect([...probe.specifiers.keys()].sort()).toEqual(["left-pad", "node:module", "undici"]);
  });

  it("the syslog generator from the bundle (plain `node file.mjs '<spec>'`, no tsx) sends a fixed workload the server receives exactly", async () => {
    const file = path.join(tmp, "generator.mjs");
    writeFileSync(file, bundle.code);
    const r = await startSyslogReceiver();
    try {
      const spec = {
        name: "syslog",
        config: { batch: 250, requests: 12, connections: 2 },
        ctx: ctx(r.port, 5),
      };
      // cwd and file outside the project: nothing can be resolved from its node_modules
      const gen = new GeneratorProcess(
        spawn(process.execPath, [file, JSON.stringify(spec)], {
          cwd: tmp,
          env: bareEnv(),
          stdio: ["pipe", "pipe", "pipe"],
        }),
      );
      const final = await gen.done;
      await r.idle();
      expect(final.errors).toEqual([]);
      expect(final).toMatchObject({ genId: 5, sent: 3000, accepted: 3000, rejected: 0, requests: 12 });
      expect(r.seqs).toHaveLength(3000);
      expect([...r.seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    } finally {
      r.server.close();
    }
  });
});

describe("installGenerator + dockerExecShell.spawn (through the RECORDING STAND-IN for the Docker CLI)", () => {
  let docker: DockerCliStandIn;
  beforeAll(() => {
    docker = createDockerCliStandIn({
      containers: { [CONTAINER]: { paths: { [REMOTE_ROOT]: "loadgen-opt-ingestbench" } } },
    });
  });
  afterAll(() => docker.cleanup());

  it("uploads the bundle once, skips the upload when sha256sum matches, and closing stdin stops the remote generator with a final report", async () => {
    const bundle = await bundleGenerator();
    const shell = dockerExecShell("loadgen", CONTAINER, { env: bareEnv(docker.binDir) });
    const remoteFile = `${REMOTE_ROOT}/generator-${bundle.sha256.slice(0, 12)}.mjs`;

    const program = await installGenerator(shell);
    expect(program).toEqual({ command: "node", args: [remoteFile] });
    const first = docker.calls();
    // check (absent) → upload (bundle through stdin) → check (matches)
    expect(first.map((c) => c.argv.slice(0, 6))).toEqual([
      ["exec", "-i", CONTAINER, "sh", "-c", 'if [ -f "$1" ]; then sha256sum "$1"; fi'],
      ["exec", "-i", CONTAINER, "sh", "-c", expect.stringContaining("cat >") as unknown as string],
      ["exec", "-i", CONTAINER, "sh", "-c", 'if [ -f "$1" ]; then sha256sum "$1"; fi'],
    ]);
    expect(first.map((c) => c.argv.at(-1))).toEqual([remoteFile, remoteFile, remoteFile]);
    expect(first[1]!.stdinBytes).toBe(bundle.bytes);
    expect(
      createHash("sha256")
        .update(readFileSync(docker.hostPath(CONTAINER, remoteFile)))
        .digest("hex"),
    ).toBe(bundle.sha256);

    expect(await installGenerator(shell)).toEqual(program);
    const second = docker.calls().slice(first.length);
    expect(second.map((c) => c.argv.slice(3, 5))).toEqual([["sh", "-c"]]); // the check only, no upload
    expect(second[0]!.stdinBytes).toBe(0);

    const r = await startSyslogReceiver();
    try {
      const spec = { name: "syslog", config: { batch: 200, rate: 20_000 }, ctx: ctx(r.port, 9) };
      const child = shell.spawn(program.command, [...program.args, JSON.stringify(spec)], {
        cwd: REMOTE_ROOT,
      });
      const gen = new GeneratorProcess(child);
      await gen.ready;
      await new Promise<void>((resolve) => {
        const onProgress = (p: { sent: number }): void => {
          if (p.sent >= 2000) {
            gen.off("progress", onProgress);
            resolve();
          }
        };
        gen.on("progress", onProgress);
      });
      // only stdin EOF: a signal to the local docker client would not reach a real container's process
      child.stdin!.end();
      const final = await gen.done;
      await r.idle();
      expect(final.errors).toEqual([]);
      expect(final.genId).toBe(9);
      expect(final.sent).toBeGreaterThanOrEqual(2000);
      expect(final.accepted).toBe(final.sent);
      expect(r.seqs).toHaveLength(final.sent);
      expect(Math.max(...r.seqs)).toBe(final.sent - 1);
      expect(child.exitCode).toBe(0);
      const exec = docker.calls().at(-1)!;
      expect(exec.argv.slice(0, 7)).toEqual(["exec", "-i", "-w", REMOTE_ROOT, CONTAINER, "node", remoteFile]);
      expect(JSON.parse(exec.argv[7]!)).toEqual(spec);
      expect(exec.exitCode).toBe(0);
    } finally {
      r.server.close();
    }
  });
});
