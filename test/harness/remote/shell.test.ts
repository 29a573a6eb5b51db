import { readdirSync, readFileSync, statSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProvisioningError } from "../../../core/errors.ts";
import { dockerExecShell, sshDockerShell, type HostShell } from "../../../harness/remote/shell.ts";
import { createDockerCliStandIn, type DockerCliStandIn } from "../../helpers/docker-cli-stand-in.ts";
import { createSshCliStandIn, type SshCliStandIn } from "../../helpers/ssh-cli-stand-in.ts";

const CONTAINER = "ib-test-loadgen";

/** Collect a spawned process's stdout/stderr and its exit code. */
function collect(child: ChildProcess): Promise<{ stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => { stdout += d; });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => { stderr += d; });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ stdout, stderr, code, signal }));
  });
}

async function remoteError(p: Promise<unknown>): Promise<ProvisioningError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ProvisioningError);
  expect((err as ProvisioningError).code).toBe("E_REMOTE_EXEC");
  return err as ProvisioningError;
}

describe("dockerExecShell (through the RECORDING STAND-IN for the Docker CLI)", () => {
  let docker: DockerCliStandIn;
  let shell: HostShell;
  beforeAll(() => {
    docker = createDockerCliStandIn({ containers: { [CONTAINER]: { paths: { "/opt/ingestbench": "opt-ingestbench" } } } });
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
    expect(await shell.engine(["update", "--cpu-period=100000", "--cpu-quota=200000", shell.container])).toBe(`${CONTAINER}\n`);
    expect(docker.commandLines().at(-1)).toBe(`docker update --cpu-period=100000 --cpu-quota=200000 ${CONTAINER}`);
    const err = await remoteError(shell.engine(["update", "--cpu-quota=1", "ib-no-such-container"]));
    expect(err.message).toMatch(/No such container: ib-no-such-container/);
  });

  it("run throws E_REMOTE_EXEC with host, command line, exit code and stderr tail on a failing command", async () => {
    const err = await remoteError(shell.run("sh", ["-c", "echo some output; echo 'it broke: disk full' >&2; exit 3"]));
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
    const none = dockerExecShell("loadgen", CONTAINER, { docker: "/nonexistent/bin/docker", env: docker.env });
    const err = await remoteError(none.run("true", []));
    expect(err.message).toContain("/nonexistent/bin/docker");
    expect(err.message).toContain("Docker CLI on PATH");
    const onPath = dockerExecShell("loadgen", CONTAINER, { docker: "ib-docker-that-is-not-installed", env: docker.env });
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

  it("spawn: closing stdin reaches the process; cwd, env and user become -w, -e, -u", async () => {
    const before = docker.calls().length;
    const cat = shell.spawn("cat", []);
    const out = collect(cat);
    cat.stdin!.write("first line\n");
    cat.stdin!.end("second line\n");
    expect(await out).toMatchObject({ stdout: "first line\nsecond line\n", code: 0 });

    // stdin "ignore" is still attached (a pipe), so the process only sees EOF when the caller closes it
    const sh = shell.spawn("sh", ["-c", 'pwd; printf "%s|" "$GREETING" "$OTHER"; cat >/dev/null; echo eof'], {
      cwd: "/opt/ingestbench", env: { GREETING: "hello there", OTHER: "a=b" }, user: "node", stdio: ["ignore", "pipe", "pipe"],
    });
    expect(sh.stdin).not.toBeNull();
    const res = collect(sh);
    await new Promise((r) => setTimeout(r, 300));
    expect(sh.exitCode).toBeNull(); // still waiting for stdin
    sh.stdin!.end();
    const { stdout, code } = await res;
    expect(code).toBe(0);
    expect(stdout).toBe(`${docker.hostPath(CONTAINER, "/opt/ingestbench")}\nhello there|a=b|eof\n`);
    expect(docker.calls().slice(before).map((c) => c.argv)).toEqual([
      ["exec", "-i", CONTAINER, "cat"],
      ["exec", "-i", "-w", "/opt/ingestbench", "-e", "GREETING=hello there", "-e", "OTHER=a=b", "-u", "node", CONTAINER, "sh", "-c", 'pwd; printf "%s|" "$GREETING" "$OTHER"; cat >/dev/null; echo eof'],
    ]);
  });

  it("spawn propagates the remote exit code and Docker's error for an unknown container", async () => {
    expect(await collect(shell.spawn("sh", ["-c", "exit 7"]))).toMatchObject({ code: 7 });
    const gone = dockerExecShell("loadgen", "ib-gone", { env: docker.env }).spawn("true", []);
    expect(await collect(gone)).toMatchObject({ code: 1, stderr: "Error response from daemon: No such container: ib-gone\n" });
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
    const shell = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-loadgen", { user: "azureuser", identityFile: "/keys/id ed25519", port: 2222, env });
    const spec = JSON.stringify({
      name: "syslog",
      config: { hostname: "it's a \"host\" $HOME `uname` $(id) \\n * ; | & ! ~", "a b": "tab\there" },
      ctx: { target: { host: "10.20.2.4", port: 514, params: {} }, fields: [], genId: 3 },
    });
    expect(await shell.run("printf", ["%s", spec])).toBe(spec);
    const argv = sshCalls().at(-1)!;
    expect(argv.slice(0, 10)).toEqual(["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new", "-i", "/keys/id ed25519", "-p", "2222", "azureuser@10.20.1.4", "--"]);
    expect(argv).toHaveLength(11);
    expect(argv[10]!.startsWith("sudo docker exec -i ib-azure-loadgen printf %s ")).toBe(true);
    // and the Docker CLI on the "VM" got the spec as one untouched argument
    expect(docker.calls().at(-1)!.argv).toEqual(["exec", "-i", "ib-azure-loadgen", "printf", "%s", spec]);
    expect(shell.describe).toBe("ssh azureuser@10.20.1.4 sudo docker exec ib-azure-loadgen");
  });

  it("spawn over ssh: stdin EOF reaches the process; remote failures carry Docker's message", async () => {
    const shell = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-loadgen", { user: "azureuser", remoteDocker: "docker", env });
    const cat = shell.spawn("cat", [], { env: { X: "1 2" } });
    const out = collect(cat);
    cat.stdin!.end("over ssh\n");
    expect(await out).toMatchObject({ stdout: "over ssh\n", code: 0 });
    expect(sshCalls().at(-1)).toEqual(["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new", "azureuser@10.20.1.4", "--", "docker exec -i -e 'X=1 2' ib-azure-loadgen cat"]);

    const wrong = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-nope", { user: "azureuser", env });
    const err = await remoteError(wrong.run("true", []));
    expect(err.message).toContain("No such container: ib-azure-nope");
    expect(err.message).toContain("exit code 1");
  });

  it("a missing ssh client is E_REMOTE_EXEC saying an azure stack needs one", async () => {
    const before = sshCalls().length;
    const shell = sshDockerShell("loadgen", "10.20.1.4", "ib-azure-loadgen", { user: "azureuser", ssh: "ib-ssh-that-is-not-installed", env });
    const err = await remoteError(shell.run("true", []));
    expect(err.message).toMatch(/ib-ssh-that-is-not-installed.*ssh client/);
    expect(() => shell.spawn("true", [])).toThrow(/ib-ssh-that-is-not-installed.*ssh client/);
    expect(sshCalls()).toHaveLength(before);
  });
});
