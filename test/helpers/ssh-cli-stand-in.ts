/**
 * A RECORDING STAND-IN for the OpenSSH client (and for `sudo` on the VM): installs `<tmp>/bin/ssh` and
 * `<tmp>/bin/sudo`. The ssh stand-in records its argv (`calls()`), then does what sshd does with a command: joins
 * the words after the destination (and after "--") with spaces and hands that string to the login shell — here,
 * `sh -c` on this machine. The sudo stand-in runs its arguments as they are (tests run as root). It connects to
 * nothing: what it proves is the command lines the harness issues and that its quoting survives a shell.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface SshCliStandIn {
  dir: string;
  binDir: string;
  /** argv of each ssh invocation, in order */
  calls(): string[][];
  /** `env` with binDir first on PATH */
  withPath(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  cleanup(): void;
}

export function createSshCliStandIn(): SshCliStandIn {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ib-ssh-stand-in-"));
  const binDir = path.join(dir, "bin");
  mkdirSync(binDir);
  const log = path.join(dir, "ssh-calls.jsonl");
  writeFileSync(log, "");
  const ssh = path.join(binDir, "ssh");
  writeFileSync(
    ssh,
    `#!/usr/bin/env node
import { appendFileSync } from "node:fs";
import { spawn } from "node:child_process";
const argv = process.argv.slice(2);
appendFileSync(${JSON.stringify(log)}, JSON.stringify(argv) + "\\n");
let i = 0;
while (i < argv.length && argv[i].startsWith("-")) i += ["-o", "-i", "-p"].includes(argv[i]) ? 2 : 1;
i++; // destination
if (argv[i] === "--") i++;
const child = spawn("sh", ["-c", argv.slice(i).join(" ")], { stdio: "inherit" });
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 255));
`,
  );
  chmodSync(ssh, 0o755);
  writeFileSync(path.join(binDir, "sudo"), '#!/bin/sh\nexec "$@"\n');
  chmodSync(path.join(binDir, "sudo"), 0o755);
  return {
    dir,
    binDir,
    calls: () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as string[]),
    withPath: (env) => ({ ...env, PATH: `${binDir}${path.delimiter}${env.PATH ?? ""}` }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
