import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  createReadStream,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import type { ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ProvisioningError } from "../../../core/errors.ts";
import {
  dockerExecShell,
  fileUploadTimeoutMs,
  sshDockerShell,
  type HostShell,
} from "../../../harness/remote/shell.ts";
import { createDockerCliStandIn, type DockerCliStandIn } from "../../helpers/docker-cli-stand-in.ts";
import { createSshCliStandIn, type SshCliStandIn } from "../../helpers/ssh-cli-stand-in.ts";

const CONTAINER = "ib-test-loadgen";

/** execa as the shell calls it, recorded (options included: the timeout and stdin source it passes); `timeoutOverrideMs`
 *  shortens the timeout actually handed to execa, so that a test can see a long timeout expire in milliseconds. */
const execaSpy = vi.hoisted(() => ({
  calls: [] as Array<{ file: string; args: string[]; options: Record<string, unknown> }>,
  timeoutOverrideMs: undefined as number | undefined,
}));
vi.mock("execa", async (importOriginal) => {
  const real = await importOriginal<typeof import("execa")>();
  const execa = (file: string, args: string[], options: Record<string, unknown>): unknown => {
    execaSpy.calls.push({ file, args, options });
    const o =
      execaSpy.timeoutOverrideMs === undefined
        ? options
        : { ...options, timeout: execaSpy.timeoutOverrideMs };
    return (real.execa as unknown as (f: string, a: string[], o: Record<string, unknown>) => unknown)(
      file,
      args,
      o,
    );
  };
  return { ...real, execa };
});

/** sha256 (hex) of a file, streamed. */
async function sha256File(file: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest("hex");
}

/** Run `work` while sampling this process's RSS every 5 ms: the growth of the peak over the RSS before, bytes. */
async function peakRssGrowth(work: () => Promise<unknown>): Promise<number> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage.rss()) - before;
}

/** Collect a spawned process's stdout/stderr and its exit code. */
function collect(
  child: ChildProcess,
): Promise<{ stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ stdout, stderr, code, signal }));
  });
}

async function remoteError(p: Promise<unknown>): Promise<ProvisioningError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProvisioningError);
  expect((err as ProvisioningError).code).toBe("E_REMOTE_EXEC");
  return err as ProvisioningError;
}

describe("dockerExecShell (through the RECORDING STAND-IN for the Docker CLI)", () => {
  let docker: DockerCliStandIn;
  let shell: HostShell;
  beforeAll(() => {
    docker = createDockerCliStandIn({
      containers: { [CONTAINER]: { paths: { "/opt/ingestbench": "opt-ingestbench" } } },
    });
    shell = dockerExecShell("loadgen", CONTAINER, { env: docker.env });
  });
  afterAll(() => docker.cleanup());

  it("run returns stdout, and the command line is exactly `docker exec -i CONTAINER CMD ARGS`", async () => {
    const before = docker.calls().length;
    expect(await shell.run("echo", ["hello world", "$HOME"])).toBe("hello world $HOME\n");
    const calls = docker.calls().slice(before);
    expect(calls.map((c) => c.argv)).toEqual([["exec", "-i", CONTAINER, "echo", "hello world", "$HOME"]]);
    expect(calls[0]!.exitCode).toBe(0);
    expect(docker.commandLines().at(-1)).toBe(`docker exec -i ${CONTAINER} echo hello world $HOME`);
    expect(shell.describe).toBe(`docker exec ${CONTAINER}`);
    expect(shell.host).toBe("loadgen");
  });

  it("engine runs a Docker CLI command against the container's engine, not inside it (docker update …)", async () => {
    expect(await shell.engine(["update", "--cpu-period=100000", "--cpu-quota=200000", shell.container])).toBe(
      `${CONTAINER}\n`,
    );
    expect(docker.commandLines().at(-1)).toBe(
      `docker update --cpu-period=100000 --cpu-quota=200000 ${CONTAINER}`,
    );
    const err = await remoteError(shell.engine(["update", "--cpu-quota=1", "ib-no-such-container"]));
    expect(err.message).toMatch(/No such container: ib-no-such-container/);
  });

  it("run throws E_REMOTE_EXEC with host, command line, exit code and stderr tail on a failing command", async () => {
    const err = await remoteError(
      shell.run("sh", ["-c", "echo some output; echo 'it broke: disk full' >&2; exit 3"]),
    );
    expect(err.message).toContain('host "loadgen"');
    expect(err.message).toContain(`docker exec -i ${CONTAINER} sh -c`);
    expect(err.message).toContain("exit code 3");
    expect(err.message).toContain("it broke: disk full");
    expect(err.exitCode).toBe(3); // ProvisioningError's CLI exit code
  });

  it("run on an unknown container throws E_REMOTE_EXEC quoting Docker's own message", async () => {
    const other = dockerExecShell("collector", "ib-no-such-collector", { env: docker.env });
    const err = await remoteError(other.run("true", []));
    expect(err.message).toContain('host "collector"');
    expect(err.message).toContain("exit code 1");
    expect(err.message).toContain("Error response from daemon: No such container: ib-no-such-collector");
  });

  it("run kills the client on timeout and says so", async () => {
    const t0 = performance.now();
    const err = await remoteError(shell.run("sleep", ["30"], { timeoutMs: 400 }));
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(err.message).toContain("timed out after 400 ms");
  });

  it("a missing Docker CLI is E_REMOTE_EXEC naming the binary and what a docker stack needs (run and spawn)", async () => {
    const none = dockerExecShell("loadgen", CONTAINER, {
      docker: "/nonexistent/bin/docker",
      env: docker.env,
    });
    const err = await remoteError(none.run("true", []));
    expect(err.message).toContain("/nonexistent/bin/docker");
    expect(err.message).toContain("Docker CLI on PATH");
    const onPath = dockerExecShell("loadgen", CONTAINER, {
      docker: "ib-docker-that-is-not-installed",
      env: docker.env,
    });
    expect(() => onPath.spawn("true", [])).toThrow(/ib-docker-that-is-not-installed.*Docker CLI on PATH/);
  });

  it("upload then cat round-trips the bytes (binary-safe, nested directory, mode, no temp file left)", async () => {
    const binary = Buffer.alloc(256 * 1024);
    for (let i = 0; i < binary.length; i++) binary[i] = (i * 131 + (i >> 8)) & 0xff; // every byte value, NULs and CRs included
    const remote = "/opt/ingestbench/a/b c/blob.bin";
    await shell.upload(remote, binary, 0o640);
    const host = docker.hostPath(CONTAINER, remote);
    expect(readFileSync(host).equals(binary)).toBe(true);
    expect(statSync(host).mode & 0o777).toBe(0o640);
    // back through the exec's stdout: base64 so the bytes survive run()'s text result
    expect(Buffer.from(await shell.run("base64", ["-w0", remote]), "base64").equals(binary)).toBe(true);
    expect(readdirSync(path.dirname(host))).toEqual(["blob.bin"]);
    const upload = docker.calls().find((c) => c.argv.includes(remote) && c.stdinBytes > 0)!;
    expect(upload.stdinBytes).toBe(binary.length);
    expect(upload.argv.slice(0, 5)).toEqual(["exec", "-i", CONTAINER, "sh", "-c"]);

    const text = "héllo wörld\n\"quoted\" 'single' $HOME `tick`\n";
    await shell.upload("/opt/ingestbench/text.txt", text);
    expect(await shell.run("cat", ["/opt/ingestbench/text.txt"])).toBe(text);

    // a failed upload (its directory is a file) throws and leaves no temp file behind
    const err = await remoteError(shell.upload("/opt/ingestbench/text.txt/inner.bin", binary));
    expect(err.message).toContain("exit code 1");
    expect(readdirSync(docker.hostPath(CONTAINER, "/opt/ingestbench")).sort()).toEqual(["a", "text.txt"]);
  });

  describe("upload of { file }: the open file is the client's stdin, read from disk", () => {
    let local: string;
    beforeAll(() => {
      local = mkdtempSync(path.join(os.tmpdir(), "ib-upload-file-"));
    });
    afterAll(() => rmSync(local, { recursive: true, force: true }));

    it("round-trips the bytes (binary-safe, nested directory, mode, no temp file left) through stdin, not `input`", async () => {
      const binary = Buffer.alloc(300 * 1024);
      for (let i = 0; i < binary.length; i++) binary[i] = (i * 131 + (i >> 8)) & 0xff;
      const file = path.join(local, "replay.log");
      writeFileSync(file, binary);
      const remote = "/opt/ingestbench/replay/x y/replay.log";
      await shell.upload(remote, { file }, 0o600);
      const host = docker.hostPath(CONTAINER, remote);
      expect(readFileSync(host).equals(binary)).toBe(true);
      expect(statSync(host).mode & 0o777).toBe(0o600);
      expect(readdirSync(path.dirname(host))).toEqual(["replay.log"]);
      expect(docker.calls().at(-1)).toMatchObject({ stdinBytes: binary.length, exitCode: 0 });
      // the client's stdin is the open file (a descriptor), not a pipe the harness writes
      const { options } = execaSpy.calls.at(-1)!;
      expect(typeof options.stdin).toBe("number");
      expect(options).not.toHaveProperty("input");
    });

    it("a 64 MiB file is uploaded with this process's RSS growing far less than the file (peak sampled during), under a timeout of 30 s + 1 s per 8 MiB", async () => {
      const size = 64 * 1024 * 1024;
      const file = path.join(local, "big.log");
      // sparse, with written lines at both ends so that the checksum sees where each part landed
      const fd = openSync(file, "w");
      writeSync(fd, Buffer.from("first line\n".repeat(100_000)), 0);
      ftruncateSync(fd, size);
      writeSync(fd, Buffer.from("last line\n"), 0, undefined, size - 10);
      closeSync(fd);
      const remote = "/opt/ingestbench/replay/big.log";
      const growth = await peakRssGrowth(() => shell.upload(remote, { file }));
      console.log(
        `upload of ${size} B from a file: peak RSS growth ${(growth / 1024 / 1024).toFixed(1)} MiB`,
      );
      // read whole, the file alone would add up to 64 MiB (the Buffer; then execa's stream of it): checked below
      expect(growth).toBeLessThan(size / 4);
      const host = docker.hostPath(CONTAINER, remote);
      expect(statSync(host).size).toBe(size);
      expect(await sha256File(host)).toBe(await sha256File(file));
      expect(docker.calls().at(-1)).toMatchObject({ stdinBytes: size, exitCode: 0 });
      const { options } = execaSpy.calls.at(-1)!;
      expect(typeof options.stdin).toBe("number");
      expect(options.timeout).toBe(fileUploadTimeoutMs(size));
      expect(fileUploadTimeoutMs(size)).toBe(30_000 + 8_000);

      // the same measurement sees the file read whole (what an upload of its bytes starts with)
      let whole: Buffer | undefined;
      const inMemory = await peakRssGrowth(async () => {
        whole = await readFile(file);
      });
      console.log(`the same file read whole: peak RSS growth ${(inMemory / 1024 / 1024).toFixed(1)} MiB`);
      expect(whole?.length).toBe(size);
      expect(inMemory).toBeGreaterThan(size / 4);
    });

    it("a file upload that stalls times out saying its size and the floor rate it assumed", async () => {
      const file = path.join(local, "stalled.log");
      writeFileSync(file, "a line\n".repeat(1000));
      // a client that never reads its stdin (a stalled link)
      const stalled = path.join(docker.dir, "bin", "docker-stalled");
      writeFileSync(stalled, "#!/bin/sh\nexec sleep 30\n");
      chmodSync(stalled, 0o755);
      execaSpy.timeoutOverrideMs = 300; // the shell's timeout, 30 s + 1 ms, expires in 300 ms here
      try {
        const err = await remoteError(
          dockerExecShell("loadgen", CONTAINER, { docker: stalled, env: docker.env }).upload(
            "/opt/ingestbench/stalled.log",
            { file },
          ),
        );
        expect(err.message).toContain(
          `timed out after ${fileUploadTimeoutMs(7000)} ms (a file upload of 7000 bytes from ${file}: 30 s + 1 s per 8 MiB, a floor of 8 MiB/s)`,
        );
      } finally {
        execaSpy.timeoutOverrideMs = undefined;
      }
      expect(execaSpy.calls.at(-1)!.options.timeout).toBe(30_001);
    });

    it("a missing or non-regular local file is E_REMOTE_EXEC naming its path, before anything runs", async () => {
      const before = docker.calls().length;
      const missing = path.join(local, "no-such-replay.log");
      const err = await remoteError(shell.upload("/opt/ingestbench/replay/r.log", { file: missing }));
      expect(err.message).toContain(
        `host "loadgen": cannot upload local file ${missing} to /opt/ingestbench/replay/r.log: ENOENT`,
      );
      const dir = await remoteError(shell.upload("/opt/ingestbench/replay/r.log", { file: local }));
      expect(dir.message).toContain(
        `cannot upload local file ${local} to /opt/ingestbench/replay/r.log: not a regular file`,
      );
      expect(docker.calls()).toHaveLength(before);
    });
  });

  it("spawn: closing stdin reaches the process; cwd, env and user become -w, -e, -u", async () => {
    const before = docker.calls().length;
    const cat = shell.spawn("cat", []);
    const out = collect(cat);
    cat.stdin!.write("first line\n");
    cat.stdin!.end("second line\n");
    expect(await out).toMatchObject({ stdout: "first line\nsecond line\n", code: 0 });

    // stdin "ignore" is still attached (a pipe), so the process only sees EOF when the caller closes it
    const sh = shell.spawn("sh", ["-c", 'pwd; printf "%s|" "$GREETING" "$OTHER"; cat >/dev/null; echo eof'], {
      cwd: "/opt/ingestbench",
      env: { GREETING: "hello there", OTHER: "a=b" },
      user: "node",
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(sh.stdin).not.toBeNull();
    const res = collect(sh);
    await new Promise((r) => setTimeout(r, 300));
    expect(sh.exitCode).toBeNull(); // still waiting for stdin
    sh.stdin!.end();
    const { stdout, code } = await res;
    expect(code).toBe(0);
    expect(stdout).toBe(`${docker.hostPath(CONTAINER, "/opt/ingestbench")}\nhello there|a=b|eof\n`);
    expect(
      docker
        .calls()
        .slice(before)
        .map((c) => c.argv),
    ).toEqual([
      ["exec", "-i", CONTAINER, "cat"],
      [
        "exec",
        "-i",
        "-w",
        "/opt/ingestbench",
        "-e",
        "GREETING=hello there",
        "-e",
        "OTHER=a=b",
        "-u",
        "node",
        CONTAINER,
        "sh",
        "-c",
        'pwd; printf "%s|" "$GREETING" "$OTHER"; cat >/dev/null; echo eof',
      ],
    ]);
  });

  it("spawn propagates the remote exit code and Docker's error for an unknown container", async () => {
    expect(await collect(shell.spawn("sh", ["-c", "exit 7"]))).toMatchObject({ code: 7 });
    const gone = dockerExecShell("loadgen", "ib-gone", { env: docker.env }).spawn("true", []);
    expect(await collect(gone)).toMatchObject({
      code: 1,
      stderr: "Error response from daemon: No such container: ib-gone\n",
    });
  });
});

describe("sshDockerShell (through a RECORDING STAND-IN for the ssh client and the Docker CLI)", () => {
  let docker: DockerCliStandIn;
  let ssh: SshCliStandIn;
  let env: NodeJS.ProcessEnv;
  const sshCalls = (): string[][] => ssh.calls();

  beforeAll(() => {
    docker = createDockerCliStandIn({ containers: { "ib-azure-loadgen": { paths: {} } } });
    ssh = createSshCliStandIn();
    env = ssh.withPath(docker.env);
  });
  afterAll(() => {
    docker.cleanup();
    ssh.cleanup();
  });

  it("quotes the remote command so a JSON spec with spaces, quotes, $ and backslashes arrives byte for byte", async () => {
    const shell = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-loadgen", {
      user: "azureuser",
      identityFile: "/keys/id ed25519",
      port: 2222,
      env,
    });
    const spec = JSON.stringify({
      name: "syslog",
      config: { hostname: 'it\'s a "host" $HOME `uname` $(id) \\n * ; | & ! ~', "a b": "tab\there" },
      ctx: { target: { host: "10.20.2.4", port: 514, params: {} }, fields: [], genId: 3 },
    });
    expect(await shell.run("printf", ["%s", spec])).toBe(spec);
    const argv = sshCalls().at(-1)!;
    expect(argv.slice(0, 10)).toEqual([
      "-o",
      "BatchMode=yes",
      "-o",
      "StrictHostKeyChecking=accept-new",
      "-i",
      "/keys/id ed25519",
      "-p",
      "2222",
      "azureuser@10.20.1.4",
      "--",
    ]);
    expect(argv).toHaveLength(11);
    expect(argv[10]!.startsWith("sudo docker exec -i ib-azure-loadgen printf %s ")).toBe(true);
    // and the Docker CLI on the "VM" got the spec as one untouched argument
    expect(docker.calls().at(-1)!.argv).toEqual(["exec", "-i", "ib-azure-loadgen", "printf", "%s", spec]);
    expect(shell.describe).toBe("ssh azureuser@10.20.1.4 sudo docker exec ib-azure-loadgen");
  });

  it("spawn over ssh: stdin EOF reaches the process; remote failures carry Docker's message", async () => {
    const shell = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-loadgen", {
      user: "azureuser",
      remoteDocker: "docker",
      env,
    });
    const cat = shell.spawn("cat", [], { env: { X: "1 2" } });
    const out = collect(cat);
    cat.stdin!.end("over ssh\n");
    expect(await out).toMatchObject({ stdout: "over ssh\n", code: 0 });
    expect(sshCalls().at(-1)).toEqual([
      "-o",
      "BatchMode=yes",
      "-o",
      "StrictHostKeyChecking=accept-new",
      "azureuser@10.20.1.4",
      "--",
      "docker exec -i -e 'X=1 2' ib-azure-loadgen cat",
    ]);

    const wrong = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-nope", { user: "azureuser", env });
    const err = await remoteError(wrong.run("true", []));
    expect(err.message).toContain("No such container: ib-azure-nope");
    expect(err.message).toContain("exit code 1");
  });

  it("upload of { file } over ssh: the open file is the ssh client's stdin, the bytes arrive whole", async () => {
    const local = mkdtempSync(path.join(os.tmpdir(), "ib-upload-ssh-"));
    try {
      const file = path.join(local, "replay.log");
      const text = "over ssh, from a file\n".repeat(5000);
      writeFileSync(file, text);
      const shell = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-loadgen", { user: "azureuser", env });
      // the stand-in's container maps no path: the remote path is this machine's
      const remote = path.join(local, "remote", "replay.log");
      await shell.upload(remote, { file });
      expect(readFileSync(remote, "utf8")).toBe(text);
      expect(docker.calls().at(-1)).toMatchObject({ stdinBytes: text.length, exitCode: 0 });
      expect(sshCalls().at(-1)!.at(-1)).toMatch(/^sudo docker exec -i ib-azure-loadgen sh -c /);
      expect(typeof execaSpy.calls.at(-1)!.options.stdin).toBe("number");
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });

  it("a missing ssh client is E_REMOTE_EXEC saying an azure stack needs one", async () => {
    const before = sshCalls().length;
    const shell = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-loadgen", {
      user: "azureuser",
      ssh: "ib-ssh-that-is-not-installed",
      env,
    });
    const err = await remoteError(shell.run("true", []));
    expect(err.message).toMatch(/ib-ssh-that-is-not-installed.*ssh client/);
    expect(() => shell.spawn("true", [])).toThrow(/ib-ssh-that-is-not-installed.*ssh client/);
    expect(sshCalls()).toHaveLength(before);
  });
});
