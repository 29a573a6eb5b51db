/**
 * The per-stack lock (harness/runner/stack-lock.ts) for `ingestbench up` and `down` (harness/provision/deployed.ts
 * withDeployLock), between real CLI processes, with the recording Pulumi CLI stand-in on PATH (nothing is deployed
 * on an engine; what is proven is who may drive the stack when): an `up` in progress refuses a second `up` and a
 * `down`, naming its pid, command and start time (exit 3); `down --lock-wait` waits for it, saying whom it waits
 * for, and proceeds once it ended; a bench holding the stack refuses `up`; after SIGKILL of the holder its lock is
 * stale and `up` takes it over, saying so.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../../helpers/cleanups.ts";
import { createPulumiCliStandIn, type PulumiCliStandIn } from "../../helpers/pulumi-cli-stand-in.ts";
import { dockerOutputs, repoRoot } from "./fixtures.ts";

const STACK = "docker-4c4g";
const cleanups = useCleanups();

function setup(state: Parameters<typeof createPulumiCliStandIn>[0] = {}): {
  standIn: PulumiCliStandIn;
  env: NodeJS.ProcessEnv;
  lock: string;
} {
  const standIn = createPulumiCliStandIn({
    deploy: { [STACK]: { outputs: dockerOutputs(), resourceCount: 14 } },
    ...state,
  });
  const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-deploy-lock-"));
  cleanups.push(async () => {
    standIn.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });
  // INGESTBENCH_LOCK_WAIT empty: refuse at once unless --lock-wait says otherwise (vitest.config.ts sets 10m)
  // INGESTBENCH_LOCKS_DIR: the locks are machine-wide; a directory of its own keeps the other lane's runs out
  return {
    standIn,
    env: {
      ...standIn.env,
      TMPDIR: tmp,
      INGESTBENCH_LOCK_WAIT: "",
      INGESTBENCH_LOCKS_DIR: path.join(tmp, "locks"),
    },
    lock: path.join(tmp, "locks", `${STACK}.json`),
  };
}

interface Proc {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  code: Promise<number | null>;
}

function start(env: NodeJS.ProcessEnv, args: string[]): Proc {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  cleanups.push(
    async () => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")),
  );
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => void (out += d));
  child.stderr!.on("data", (d: Buffer) => void (err += d));
  const code = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { child, out: () => out, err: () => err, code };
}

const cli = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  spawnSync(process.execPath, ["bin/ingestbench.js", ...args], {
    cwd: repoRoot,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });

async function until(what: string, test: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const holder = (pid: number | undefined, command: string) =>
  new RegExp(
    `stack ${STACK} is in use by another run: pid ${pid} \\(ingestbench ${command}, started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\)`,
  );

describe("the stack lock of `up` and `down`", () => {
  it("an `up` in progress refuses a second `up` and a `down` with its pid and start time; `down --lock-wait` waits for it and then destroys", async () => {
    const { standIn, env, lock } = setup({ hang: ["up"] });
    const first = start(env, ["bin/ingestbench.js", "up", "--stack", STACK, "--quiet"]);
    await until("the first up to reach pulumi up", () =>
      standIn.commandLines().some((l) => l.startsWith("up ")),
    );
    expect(existsSync(lock)).toBe(true);

    const second = cli(env, "up", "--stack", STACK, "--quiet");
    expect(second.status, second.stderr).toBe(3);
    expect(second.stderr).toMatch(holder(first.child.pid, "up"));
    const down = cli(env, "down", "--stack", STACK, "--quiet");
    expect(down.status, down.stderr).toBe(3);
    expect(down.stderr).toMatch(holder(first.child.pid, "up"));
    // neither reached Pulumi: one `up`, no destroy
    expect(
      standIn
        .commandLines()
        .filter((l) => /^(up|destroy) /.test(l))
        .map((l) => l.split(" ")[0]),
    ).toEqual(["up"]);

    const waiting = start(env, [
      "bin/ingestbench.js",
      "down",
      "--stack",
      STACK,
      "--quiet",
      "--lock-wait",
      "1m",
    ]);
    await until("down to say whom it waits for", () => /waiting up to \d+ s for it/.test(waiting.err()));
    expect(waiting.err()).toMatch(holder(first.child.pid, "up"));
    first.child.kill("SIGINT"); // the first up destroys what it made and releases the lock
    expect(await first.code, first.err()).toBe(130);
    expect(await waiting.code, waiting.err()).toBe(0);
    expect(waiting.out()).toMatch(`stack ${STACK}: destroyed`);
    expect(existsSync(lock)).toBe(false);
  }, 90_000);

  it("a bench holding the stack refuses `up`; after SIGKILL of the bench its stale lock is taken over", async () => {
    const { standIn, env, lock } = setup();
    const bench = start(env, ["--import", "tsx", "test/helpers/lock-child.ts", STACK]);
    await until("the holder to lock", () => /locked \d+/.test(bench.out()));

    const refused = cli(env, "up", "--stack", STACK, "--quiet");
    expect(refused.status, refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(holder(bench.child.pid, "bench"));
    expect(standIn.commandLines().some((l) => l.startsWith("up "))).toBe(false);

    bench.child.kill("SIGKILL");
    await bench.code;
    expect(existsSync(lock)).toBe(true); // SIGKILL leaves it behind, stale
    const up = cli(env, "up", "--stack", STACK, "--quiet", "--json");
    expect(up.status, up.stderr).toBe(0);
    expect(up.stderr).toMatch(
      new RegExp(
        `stack ${STACK}: took over the stale lock of pid ${bench.child.pid} \\(ingestbench bench, started [^)]+\\), which is gone`,
      ),
    );
    expect(JSON.parse(up.stdout)).toEqual(dockerOutputs());
    expect(existsSync(lock)).toBe(false); // released when up is done: the stack stays up, unlocked
    const down = cli(env, "down", "--stack", STACK, "--quiet");
    expect(down.status, down.stderr).toBe(0);
  }, 90_000);
});
