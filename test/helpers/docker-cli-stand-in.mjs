#!/usr/bin/env node
// RECORDING STAND-IN for the Docker CLI (`docker`), for tests only: installed as <dir>/bin/docker by
// test/helpers/docker-cli-stand-in.ts. There is no daemon and no container: "containers" are names in
// <dir>/state.json, each with a map of container paths to host directories, and an exec runs its command on this
// machine. Each invocation is appended to <dir>/calls.jsonl once it ends: { argv, cwd, stdinBytes, exitCode }.
//   exec [-i] [-t] [-w DIR] [-e K=V]… [-u U] CONTAINER CMD ARGS…
//       unknown CONTAINER: "Error response from daemon: No such container: NAME" on stderr, exit 1 (the daemon's
//       own message). Otherwise CMD runs with ARGS after every occurrence of a mapped container path (as a whole
//       path prefix) in ARGS and in -w is replaced by its host path; -e sets the environment; -u is recorded only
//       (no user switch). Without -i the process gets no stdin (as with docker, whose exec attaches stdin only
//       with -i). stdout/stderr are passed through byte for byte; the exit code is the process's, or 128+signal
//       number when it died of a signal (the CLI's convention). A CMD that cannot be found: the OCI runtime's
//       "exec: "CMD": executable file not found in $PATH", exit 127.
//       Unlike the real client, SIGTERM/SIGINT sent to the stand-in are forwarded to the process (so a test that
//       kills the client cannot leave one behind). The real `docker exec` client forwards nothing: harness code
//       must stop remote processes through stdin EOF, and tests should prove that path, not this one.
//   update --cpu-period=N --cpu-quota=N CONTAINER: recorded and acknowledged (prints the name), changes nothing.
// Anything else: "stand-in: unsupported command" and exit 1, so an unexpected command line fails the test.
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeSync } from "node:fs";
import { constants } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const dir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const argv = process.argv.slice(2);
let stdinBytes = 0;
let finished = false;

function finish(exitCode) {
  if (finished) return;
  finished = true;
  appendFileSync(
    path.join(dir, "calls.jsonl"),
    JSON.stringify({ argv, cwd: process.cwd(), stdinBytes, exitCode }) + "\n",
  );
  process.exit(exitCode);
}
function fail(message, exitCode = 1) {
  if (!finished) writeSync(2, `${message}\n`);
  finish(exitCode);
}

/** Replace `from` in `s` wherever it stands as a whole path prefix (followed by "/", the end, or a non-path char). */
function mapPaths(s, paths) {
  let out = s;
  // longest first, so /opt/a/b wins over /opt/a
  for (const [from, to] of Object.entries(paths).sort((a, b) => b[0].length - a[0].length)) {
    const esc = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(`(^|[^\\w./-])${esc}(?=/|$|[^\\w.-])`, "g"), (_m, pre) => `${pre}${to}`);
  }
  return out;
}

function exec(args) {
  let interactive = false;
  let workdir;
  const env = {};
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === "-i" || a === "--interactive") interactive = true;
    else if (a === "-t" || a === "--tty") {
      /* no tty here: output stays a pipe */
    } else if (a === "-it" || a === "-ti") interactive = true;
    else if (a === "-w" || a === "--workdir") workdir = args[++i];
    else if (a === "-e" || a === "--env") {
      const kv = args[++i] ?? "";
      const eq = kv.indexOf("=");
      if (eq < 0)
        env[kv] = process.env[kv] ?? ""; // `-e K` passes the client's K
      else env[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else if (a === "-u" || a === "--user") i++;
    else if (a.startsWith("-")) return fail(`stand-in: unsupported exec flag ${a}`);
    else break;
  }
  const container = args[i];
  const cmd = args[i + 1];
  if (!container || !cmd) return fail(`"docker exec" requires at least 2 arguments.`);
  const state = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8"));
  const c = state.containers?.[container];
  if (!c) return fail(`Error response from daemon: No such container: ${container}`);
  const paths = c.paths ?? {};
  const child = spawn(
    cmd,
    args.slice(i + 2).map((a) => mapPaths(a, paths)),
    {
      cwd: workdir === undefined ? undefined : mapPaths(workdir, paths),
      env: { ...process.env, ...env },
      stdio: [interactive ? "pipe" : "ignore", "inherit", "inherit"],
    },
  );
  child.on("error", (err) => {
    if (err.code === "ENOENT") {
      fail(
        `OCI runtime exec failed: exec failed: unable to start container process: exec: "${cmd}": executable file not found in $PATH: unknown`,
        127,
      );
    } else fail(`OCI runtime exec failed: ${err.message}`, 126);
  });
  if (interactive) {
    // with backpressure, as the real client: a process that reads slowly (or not at all) stalls the sender
    process.stdin.on("data", (d) => {
      stdinBytes += d.length;
      if (!child.stdin.write(d)) {
        process.stdin.pause();
        child.stdin.once("drain", () => process.stdin.resume());
      }
    });
    process.stdin.on("end", () => child.stdin.end());
    child.stdin.on("error", () => undefined); // EPIPE: the process stopped reading
  }
  for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => child.kill(sig));
  child.on("exit", (code, signal) => finish(code ?? 128 + (constants.signals[signal] ?? 0)));
}

/**
 * `update [--cpu-period N] [--cpu-quota N] CONTAINER`: recorded (calls.jsonl) and acknowledged as docker does, by
 * printing the container's name; nothing is changed on this machine. Unknown container: docker's message, exit 1.
 */
function update(args) {
  const container = args.at(-1);
  for (const a of args.slice(0, -1))
    if (!/^--cpu-(period|quota)=-?\d+$/.test(a)) return fail(`stand-in: unsupported update flag ${a}`);
  const state = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8"));
  if (!container || !state.containers[container])
    return fail(`Error response from daemon: No such container: ${container}`);
  writeSync(1, `${container}\n`);
  finish(0);
}

if (argv[0] === "exec") exec(argv.slice(1));
else if (argv[0] === "update") update(argv.slice(1));
else fail(`stand-in: unsupported command: ${argv.join(" ")}`);
