/**
 * How the harness runs commands inside a deployed host's container: on the docker platform through the Docker CLI
 * (`docker exec`, honouring DOCKER_HOST), on azure through SSH to the host's VM and `docker exec` there.
 *
 * Both shells only build an argv prefix; starting, waiting and error reporting are shared. Two properties matter to
 * callers:
 * - `docker exec` without `-t` does not forward signals: killing the local client (docker or ssh) leaves the
 *   process in the container running. What does reach it is stdin EOF (`-i`: the daemon closes the exec's stdin
 *   when the attached stream ends), so every exec here keeps stdin attached and processes started with `spawn`
 *   are meant to stop when it closes (the generator child does, see harness/generators/child.ts); `kill()` of a
 *   spawned client with SIGTERM or SIGINT therefore closes its stdin instead, and only SIGKILL kills the client.
 * - `run` has a timeout; on timeout it kills the local client, which for the same reason may leave the remote
 *   command running (a one-shot command with stdin closed usually ends by itself).
 * - `upload` of `{ file }` hands the open local file to the client (docker or ssh) as its stdin, which reads it
 *   from disk: the bytes never pass through the harness, so a 60 GiB replay file (write-up 004, docs/write-ups.md)
 *   costs the harness no more memory than a small one. (execa's `inputFile` would pipe a read stream through the
 *   harness instead: bounded too, but its 64 KiB chunks wait for the garbage collector, about 33 MiB of RSS on
 *   Node 20 for 64 MiB as for 1 GiB.) Its timeout grows with the file's size (`fileUploadTimeoutMs`).
 *
 * Errors: ProvisioningError "E_REMOTE_EXEC" for a missing CLI (ENOENT), a non-zero exit, a signal or a timeout, and
 * for a local file to upload that cannot be read.
 */
import { spawn as spawnChild, type ChildProcess } from "node:child_process";
import { open } from "node:fs/promises";
import { execa, type Options as ExecaOptions } from "execa";
import { quote } from "shell-quote";
import { ProvisioningError } from "../../core/errors.ts";
import { findOnPath } from "../../core/which.ts";
import type { SpawnFn } from "../generators/process.ts";
import type { SpawnOptions } from "../../core/hosts.ts";
import { PASSWORD_SINKS, passwordEnvName, redact } from "../../core/secrets.ts";

/** Default `run` timeout, milliseconds. */
export const DEFAULT_RUN_TIMEOUT_MS = 30_000;
/** The slowest transfer a file upload is allowed before it times out, bytes per second: 8 MiB/s (64 Mbit/s), an
 *  assumed floor for an SSH stream to an azure VM or a Docker engine's exec stream, not a measured one. */
export const UPLOAD_FLOOR_BYTES_PER_SEC = 8 * 1024 * 1024;

/**
 * Timeout of a file upload of `bytes` bytes, milliseconds: DEFAULT_RUN_TIMEOUT_MS (30 s, for starting the exec and
 * the rename) plus the time to move the bytes at the assumed floor rate UPLOAD_FLOOR_BYTES_PER_SEC, i.e. 30 s + 1 s
 * per 8 MiB, rounded up to a whole millisecond (a 60 GiB file: 30 s + 7680 s).
 */
export function fileUploadTimeoutMs(bytes: number): number {
  return DEFAULT_RUN_TIMEOUT_MS + Math.ceil((bytes * 1000) / UPLOAD_FLOOR_BYTES_PER_SEC);
}

/** What `HostShell.upload` writes: the bytes themselves (text as UTF-8), or `{ file }`, a local file (path on this
 *  machine, absolute or relative to the working directory) streamed from disk. */
export type UploadContent = string | Uint8Array | { file: string };

/** Characters of stderr quoted in an E_REMOTE_EXEC message. */
const STDERR_TAIL = 2000;

/** How the harness runs commands inside one deployed host's container. */
export interface HostShell {
  /** stack host name, e.g. "loadgen" */
  readonly host: string;
  /** for messages: "docker exec ib-docker-4c4g-loadgen" / "ssh azureuser@10.20.1.4 … docker exec ib-…-loadgen" */
  readonly describe: string;
  /** start a process inside the container; stdio per options.stdio (default all "pipe"); cwd → `docker exec -w`;
   *  env → `-e K=V`; options.user → `-u`. stdin is ALWAYS kept open (`-i`) so that closing it reaches the process
   *  (the generator child stops gracefully on stdin EOF: killing a `docker exec` client does not kill the process in
   *  the container). A stdin of "ignore" is therefore still a pipe, never written, closed when the caller exits.
   *  @throws ProvisioningError "E_REMOTE_EXEC" synchronously when the local CLI (docker / ssh) is not on PATH */
  spawn: SpawnFn;
  /** run to completion, return stdout. @throws ProvisioningError "E_REMOTE_EXEC" naming host, the command line, exit
   *  code and the stderr tail; on timeout (default 30 s) kill the client and throw the same code saying so. */
  run(
    command: string,
    args: string[],
    opts?: { input?: string | Uint8Array; timeoutMs?: number },
  ): Promise<string>;
  /** write a file in the container (mkdir -p of its directory, content through stdin, chmod when `mode` given, e.g.
   *  0o644); the file appears atomically (written beside it, then renamed), so a concurrent reader never sees half
   *  of it. Bytes or text are sent whole under the default 30 s timeout; `{ file }` is streamed from the local file
   *  (never read into memory: any size), under fileUploadTimeoutMs(its size in bytes), 30 s + 1 s per 8 MiB.
   *  @throws ProvisioningError "E_REMOTE_EXEC" as `run` (a timed-out file upload says its size and the floor rate);
   *  also, before anything runs, when the local `file` cannot be read or is not a regular file (naming its path) */
  upload(remotePath: string, content: UploadContent, mode?: number): Promise<void>;
  /** a Docker CLI command against the engine that runs this host's container (`docker update …`), not inside it;
   *  returns stdout. @throws ProvisioningError "E_REMOTE_EXEC" as `run` */
  engine(args: string[], opts?: { timeoutMs?: number }): Promise<string>;
  /** the container's name on its engine */
  readonly container: string;
}

export interface DockerShellOptions {
  /** Docker CLI, default "docker" on PATH */
  docker?: string;
  /** the CLI's whole environment (PATH, DOCKER_HOST, DOCKER_CONTEXT…), default process.env */
  env?: NodeJS.ProcessEnv;
}

export interface SshShellOptions {
  /** the VM's admin user (the azure platform's `adminUsername`, infra/azure/stack.ts; its default is "ingestbench") */
  user: string;
  /** private key file, `ssh -i` */
  identityFile?: string;
  /** SSH port, `ssh -p` (default: the client's, 22) */
  port?: number;
  /** ssh client, default "ssh" */
  ssh?: string;
  /** the client's whole environment (PATH, SSH_AUTH_SOCK…), default process.env */
  env?: NodeJS.ProcessEnv;
  /** docker on the VM, default "sudo docker" (split on spaces) */
  remoteDocker?: string;
}

/** The local program and the argv before `<container> <command> <args…>`'s docker exec flags are appended. */
interface ExecTransport {
  /** local binary (docker or ssh) */
  bin: string;
  /** what a missing `bin` means, for the ENOENT message */
  needs: string;
  env: NodeJS.ProcessEnv | undefined;
  /** the docker client runs on this machine (docker exec), not on a VM (ssh): `-e NAME` takes this client's variable */
  local: boolean;
  describe: string;
  /** the full local argv for `docker <dockerArgs>` (e.g. exec flags container command args, or update …) */
  argv(dockerArgs: string[]): string[];
}

/** `docker exec` flags for `options` (stdin always attached; no tty, so output stays binary-safe). */
function execFlags(
  options: Pick<SpawnOptions, "cwd" | "env" | "user"> | undefined,
  forwarded: readonly string[] = [],
): string[] {
  const flags = ["-i"];
  if (options?.cwd) flags.push("-w", options.cwd);
  for (const [k, v] of Object.entries(options?.env ?? {})) flags.push("-e", `${k}=${v}`);
  // sink passwords (core/secrets.ts) by name only: `-e NAME` hands the client's value over, never on a command line
  for (const name of forwarded) flags.push("-e", name);
  if (options?.user) flags.push("-u", options.user);
  return flags;
}

function missingCli(t: ExecTransport, host: string, cause?: unknown): ProvisioningError {
  return new ProvisioningError(
    "E_REMOTE_EXEC",
    `host "${host}": cannot run "${t.bin}": not found on PATH; ${t.needs}`,
    { cause },
  );
}

/** One line for messages: the local argv, arguments over 200 characters abridged. */
function commandLine(bin: string, argv: string[]): string {
  return redact([bin, ...argv].map((a) => (a.length > 200 ? `${a.slice(0, 200)}…` : a)).join(" "));
}

function makeShell(host: string, t: ExecTransport, container: string): HostShell {
  const spawn: SpawnFn = (command, args, options?): ChildProcess => {
    if (findOnPath(t.bin, (t.env ?? process.env).PATH) === null) throw missingCli(t, host);
    const requested = options?.stdio ?? ["pipe", "pipe", "pipe"];
    const stdio = [0, 1, 2].map((i) => requested[i] ?? "pipe");
    if (stdio[0] === "ignore") stdio[0] = "pipe"; // see HostShell.spawn: stdin stays attached
    // docker exec on this machine's client: the sink passwords set here go in by name (over ssh the VM's docker
    // client has no such variable: docs/design.md "Secrets")
    const forwarded = t.local
      ? PASSWORD_SINKS.map(passwordEnvName).filter((n) => (t.env ?? process.env)[n])
      : [];
    const child = spawnChild(
      t.bin,
      t.argv(["exec", ...execFlags(options, forwarded), container, command, ...args]),
      {
        env: t.env ?? process.env,
        stdio: stdio as Array<"pipe" | "inherit" | "ignore">,
      },
    );
    // A signal to the local client never reaches the process in the container, and the Docker CLI (28) ends on
    // SIGTERM at once, dropping what the process still writes (a generator's final report). So a graceful stop
    // (SIGTERM, SIGINT) closes stdin, which does reach it; only SIGKILL ends the client itself.
    const kill = child.kill.bind(child);
    child.kill = (signal?: NodeJS.Signals | number): boolean => {
      if (signal === "SIGKILL" || signal === 9) return kill(signal);
      child.stdin?.end();
      return true;
    };
    return child;
  };

  /** `stdinFd` (an open file descriptor) becomes the client's stdin instead of `input` (a pipe the harness writes);
   *  `timedOutBecause` follows "timed out after N ms" in the message (why the timeout was N). */
  const docker = async (
    dockerArgs: string[],
    opts?: { input?: string | Uint8Array; stdinFd?: number; timeoutMs?: number; timedOutBecause?: string },
  ): Promise<string> => {
    const argv = t.argv(dockerArgs);
    const timeoutMs = opts?.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS;
    // a descriptor goes to child_process.spawn's stdio as is (execa lib/stdio/type.js: an integer is "native"; Node's
    // child_process docs: "a file descriptor that is open in the parent process"); execa's types list 0 and 3–9 only
    const stdin =
      opts?.stdinFd !== undefined
        ? { stdin: opts.stdinFd as unknown as ExecaOptions["stdin"] }
        : { input: opts?.input ?? "" };
    const r = await execa(t.bin, argv, {
      env: t.env ?? process.env,
      extendEnv: false,
      ...stdin,
      timeout: timeoutMs,
      forceKillAfterDelay: 2_000,
      reject: false,
      stripFinalNewline: false,
      encoding: "utf8",
    });
    if (r.failed && (r.cause as NodeJS.ErrnoException | undefined)?.code === "ENOENT")
      throw missingCli(t, host, r.cause);
    if (!r.failed) return r.stdout;
    const tail = r.stderr.trim().slice(-STDERR_TAIL);
    const how = r.timedOut
      ? `timed out after ${timeoutMs} ms${opts?.timedOutBecause ? ` (${opts.timedOutBecause})` : ""} (client killed; the command may still run in the container)`
      : r.exitCode !== undefined
        ? `exit code ${r.exitCode}`
        : r.signal
          ? `killed by ${r.signal}`
          : r.cause instanceof Error
            ? r.cause.message
            : r.shortMessage;
    throw new ProvisioningError(
      "E_REMOTE_EXEC",
      `host "${host}": ${commandLine(t.bin, argv)}: ${how}${tail ? `\n${tail}` : ""}`,
      { cause: r.cause },
    );
  };
  const exec = (command: string, args: string[], opts?: Parameters<typeof docker>[1]): Promise<string> =>
    docker(["exec", ...execFlags(undefined), container, command, ...args], opts);
  const run: HostShell["run"] = exec;
  const engine: HostShell["engine"] = (args, opts) => docker(args, opts);

  // "$1" = the target path: no interpolation of the path into the script, so any path survives; the temp file is
  // per shell pid so concurrent uploads of the same file do not mix, and removed when a step fails.
  const upload: HostShell["upload"] = async (remotePath, content, mode) => {
    const chmod = mode === undefined ? "" : ` && chmod ${mode.toString(8)} "$t"`;
    const script = `t="$1.part.$$"; { mkdir -p "$(dirname "$1")" && cat > "$t"${chmod} && mv -f "$t" "$1"; } || { rm -f "$t"; exit 1; }`;
    const argv = ["-c", script, "sh", remotePath];
    if (typeof content === "string" || content instanceof Uint8Array) {
      await exec("sh", argv, { input: content });
      return;
    }
    // opened here (and its size read from the open file), so that a missing file is named before anything runs
    const cannot = (err: unknown): ProvisioningError =>
      new ProvisioningError(
        "E_REMOTE_EXEC",
        `host "${host}": cannot upload local file ${content.file} to ${remotePath}: ${(err as Error).message}`,
        { cause: err },
      );
    const file = await open(content.file, "r").catch((err: unknown) => {
      throw cannot(err);
    });
    try {
      const s = await file.stat();
      if (!s.isFile()) throw cannot(new Error("not a regular file"));
      await exec("sh", argv, {
        stdinFd: file.fd,
        timeoutMs: fileUploadTimeoutMs(s.size),
        timedOutBecause: `a file upload of ${s.size} bytes from ${content.file}: 30 s + 1 s per 8 MiB, a floor of ${UPLOAD_FLOOR_BYTES_PER_SEC / 1024 / 1024} MiB/s`,
      });
    } finally {
      await file.close();
    }
  };

  return { host, container, describe: t.describe, spawn, run, upload, engine };
}

/** `docker exec -i [-w] [-e] [-u] <container> <command> <args…>` through the Docker CLI (honours DOCKER_HOST). */
export function dockerExecShell(host: string, container: string, opts?: DockerShellOptions): HostShell {
  const bin = opts?.docker ?? "docker";
  return makeShell(
    host,
    {
      bin,
      needs: "a docker stack needs the Docker CLI on PATH (it talks to the daemon named by DOCKER_HOST)",
      env: opts?.env,
      local: true,
      describe: `${bin} exec ${container}`,
      argv: (dockerArgs) => dockerArgs,
    },
    container,
  );
}

/** `ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new [-i] [-p] user@address -- <quoted docker exec …>`;
 *  the remote command string is built with shell-quote, so arguments with spaces/quotes/JSON survive the remote
 *  login shell (POSIX quoting). BatchMode: never prompt for a password or passphrase, fail instead. */
export function sshDockerShell(
  host: string,
  address: string,
  container: string,
  opts: SshShellOptions,
): HostShell {
  const bin = opts.ssh ?? "ssh";
  const remoteDocker = (opts.remoteDocker ?? "sudo docker").split(" ").filter(Boolean);
  const dest = `${opts.user}@${address}`;
  const sshArgs = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new"];
  if (opts.identityFile) sshArgs.push("-i", opts.identityFile);
  if (opts.port !== undefined) sshArgs.push("-p", String(opts.port));
  return makeShell(
    host,
    {
      bin,
      needs: "an azure stack needs an ssh client (OpenSSH) on PATH",
      env: opts.env,
      local: false,
      describe: `${bin} ${dest} ${remoteDocker.join(" ")} exec ${container}`,
      argv: (dockerArgs) => [...sshArgs, dest, "--", quote([...remoteDocker, ...dockerArgs])],
    },
    container,
  );
}
