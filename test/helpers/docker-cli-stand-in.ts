/**
 * A RECORDING STAND-IN for the Docker CLI: installs test/helpers/docker-cli-stand-in.mjs as `<dir>/bin/docker` in
 * a temp dir, with its state (`state.json`: the "containers", each a name with a map of container paths to host
 * directories) and its record of invocations (`calls.jsonl`: argv, cwd, stdin length, exit code). Put `env.PATH`
 * first on PATH (or pass `env` to dockerExecShell) and `docker exec` runs the command on this machine with the
 * container paths mapped. There is no daemon, no image, no isolation: what it proves is the command lines the
 * harness issues, the bytes it moves through stdin/stdout and how it reads exit codes and Docker's error
 * messages — not what a real container does with them. See the .mjs header for the exact behaviour (including the
 * one place it is kinder than Docker: signals sent to the client are forwarded).
 */
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "docker-cli-stand-in.mjs");

/** One "container": container path prefix → host directory. A relative host path lives under the stand-in's dir
 *  (`<dir>/<hostPath>`) and is created, and removed by cleanup(). */
export interface StandInContainer {
  paths: Record<string, string>;
}

/** One recorded invocation, written when it ended. */
export interface DockerStandInCall {
  /** arguments after `docker` */
  argv: string[];
  cwd: string;
  /** bytes the client read from its stdin and passed to the process (0 without -i) */
  stdinBytes: number;
  exitCode: number;
}

export interface DockerCliStandIn {
  dir: string;
  binDir: string;
  /** process.env with binDir first on PATH */
  env: NodeJS.ProcessEnv;
  calls(): DockerStandInCall[];
  /** each call as a command line, "docker exec -i …" (arguments joined by spaces) */
  commandLines(): string[];
  /** replace the containers (relative host paths resolved and created as at creation) */
  setContainers(containers: Record<string, StandInContainer>): void;
  /** the host directory a container path maps to (for asserting on uploaded files) */
  hostPath(container: string, containerPath: string): string;
  cleanup(): void;
}

/** Install the stand-in with these containers. */
export function createDockerCliStandIn(opts: {
  containers: Record<string, StandInContainer>;
}): DockerCliStandIn {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ib-docker-stand-in-"));
  const binDir = path.join(dir, "bin");
  mkdirSync(binDir);
  const bin = path.join(binDir, "docker");
  copyFileSync(SCRIPT, bin);
  chmodSync(bin, 0o755);
  const statePath = path.join(dir, "state.json");
  const callsPath = path.join(dir, "calls.jsonl");
  writeFileSync(callsPath, "");
  let containers: Record<string, StandInContainer> = {};
  const setContainers = (next: Record<string, StandInContainer>): void => {
    containers = Object.fromEntries(
      Object.entries(next).map(([name, c]) => [
        name,
        {
          paths: Object.fromEntries(
            Object.entries(c.paths).map(([from, to]) => {
              const host = path.resolve(dir, to);
              mkdirSync(host, { recursive: true });
              return [from, host];
            }),
          ),
        },
      ]),
    );
    writeFileSync(statePath, JSON.stringify({ containers }, null, 2));
  };
  setContainers(opts.containers);
  const calls = (): DockerStandInCall[] =>
    readFileSync(callsPath, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as DockerStandInCall);
  return {
    dir,
    binDir,
    env: { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}` },
    calls,
    commandLines: () => calls().map((c) => ["docker", ...c.argv].join(" ")),
    setContainers,
    hostPath(container, containerPath) {
      const paths = containers[container]?.paths ?? {};
      const prefix = Object.keys(paths)
        .sort((a, b) => b.length - a.length)
        .find((p) => containerPath === p || containerPath.startsWith(`${p}/`));
      if (prefix === undefined)
        throw new Error(`stand-in: ${containerPath} is not under a mapped path of ${container}`);
      return paths[prefix]! + containerPath.slice(prefix.length);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
