/**
 * Installed programs on the local platform ("bring your own binary"): a local component (core/component.ts
 * `program`) runs a program the user installed, or the project's own build of it, under the host's caps. Which
 * program is chosen, in this order:
 * 1. the stack host's `programs.<plugin>` (stacks/Pulumi.<name>.yaml, `ingestbench:hosts.<host>.programs`): a path,
 *    a name on PATH, or a command line (`ruby /opt/fluentd-1.12.0/bin/fluentd`, split as a shell splits words);
 * 2. the project's own build (`ProgramSpec.built`, e.g. the OpenTelemetry Collector built from Go modules);
 * 3. the first of `ProgramSpec.names` on PATH.
 * The version is read from the program itself (`versionArgs`, `patterns`), before anything is provisioned
 * (harness/runner/local-site.ts checkRunnableLocally) and again when the component starts.
 */
import { spawnSync } from "node:child_process";
import { parse as parseShell } from "shell-quote";
import { ConfigurationError } from "./errors.ts";
import { findOnPath } from "./which.ts";

/** How long a program may take to print its version (a JVM's start included), ms. */
const VERSION_TIMEOUT_MS = 60_000;

/** What a local component needs to find and identify its program. */
export interface ProgramSpec {
  /** the plugin's name, also the key of the stack host's `programs` map, e.g. "otelcol" */
  plugin: string;
  /** names tried on PATH in order, e.g. ["otelcol-contrib", "otelcol"] */
  names: readonly string[];
  /** arguments that make the program print its version, e.g. ["--version"] */
  versionArgs: readonly string[];
  /** patterns over the version output (stdout then stderr); the first capture group is the version */
  patterns: readonly RegExp[];
  /** how to get the program, said when none is found, e.g. "apt-get install fluent-bit, or build it from source" */
  install: string;
  /** the project's own build of the pinned version: its path, or null when it is not built on this machine */
  built?: () => string | null;
}

/** A program found and identified. */
export interface Program {
  /** the command line: the program, then any arguments the user's command line put before ours */
  argv: string[];
  /** the version the program printed, e.g. "0.165.0" */
  version: string;
  /** where it came from: the stack's `programs` entry, the project's build, or PATH */
  from: "stack" | "built" | "PATH";
}

/**
 * Find the program for `spec` and read its version.
 * @param choice the stack host's `programs.<plugin>` value, when it sets one
 * @param where names the stack file and field for messages, e.g. "stacks/Pulumi.local-otelcol.yaml: hosts.collector"
 * @throws ConfigurationError E_PROGRAM_MISSING naming what was looked for and how to get it; E_PROGRAM_VERSION when
 *   the program runs but prints no version the patterns read
 */
export function resolveProgram(
  spec: ProgramSpec,
  choice: string | undefined,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): Program {
  const found = locate(spec, choice, where, env);
  return { ...found, version: readVersion(spec, found.argv, where, env) };
}

function locate(
  spec: ProgramSpec,
  choice: string | undefined,
  where: string,
  env: NodeJS.ProcessEnv,
): Omit<Program, "version"> {
  if (choice !== undefined) {
    const words = parseShell(choice, env).filter((w): w is string => typeof w === "string");
    const exe = words[0] !== undefined ? findOnPath(words[0], env.PATH) : null;
    if (exe === null) {
      throw new ConfigurationError(
        "E_PROGRAM_MISSING",
        `${where}: programs.${spec.plugin} is "${choice}", but ${words[0] ?? "(nothing)"} is not an executable file or a program on PATH; ${spec.install}`,
        { field: `programs.${spec.plugin}` },
      );
    }
    return { argv: [exe, ...words.slice(1)], from: "stack" };
  }
  const built = spec.built?.() ?? null;
  if (built !== null) return { argv: [built], from: "built" };
  for (const name of spec.names) {
    const exe = findOnPath(name, env.PATH);
    if (exe !== null) return { argv: [exe], from: "PATH" };
  }
  throw new ConfigurationError(
    "E_PROGRAM_MISSING",
    `${where}: ${spec.plugin} needs a program: none of ${spec.names.join(", ")} is on PATH${spec.built ? " and the project's own build is not on this machine" : ""}; ${spec.install}${spec.install.includes("programs") ? "" : `; or name one in the stack, e.g. \`programs: { ${spec.plugin}: /opt/bin/${spec.names[0]} }\` under the host`}`,
    { field: `programs.${spec.plugin}` },
  );
}

function readVersion(spec: ProgramSpec, argv: string[], where: string, env: NodeJS.ProcessEnv): string {
  const cmd = `\`${[...argv, ...spec.versionArgs].join(" ")}\``;
  const r = spawnSync(argv[0]!, [...argv.slice(1), ...spec.versionArgs], {
    env: { ...env, LC_ALL: "C" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: VERSION_TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  if (r.error) {
    const why =
      (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT"
        ? `did not answer in ${VERSION_TIMEOUT_MS / 1000} s (ended)`
        : `failed: ${r.error.message}`;
    throw new ConfigurationError("E_PROGRAM_VERSION", `${where}: ${cmd} ${why}`, { cause: r.error });
  }
  const out = `${r.stdout ?? ""}\n${r.stderr ?? ""}`;
  for (const re of spec.patterns) {
    const m = re.exec(out);
    if (m?.[1]) return m[1];
  }
  throw new ConfigurationError(
    "E_PROGRAM_VERSION",
    `${where}: cannot read ${spec.plugin}'s version from ${cmd} (exit ${r.status ?? r.signal}): ${out.trim().slice(0, 200)}`,
  );
}

/**
 * The program of `spec` on a started local host (core/hosts.ts LocalHost.programs), for a component's startLocal.
 * @throws ConfigurationError as resolveProgram
 */
export function hostProgram(
  host: { name: string; programs?: Readonly<Record<string, string>> },
  spec: ProgramSpec,
): Program {
  return resolveProgram(spec, host.programs?.[spec.plugin], `host ${host.name}`);
}
