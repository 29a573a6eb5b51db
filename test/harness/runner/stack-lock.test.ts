// Per-stack locks (harness/runner/stack-lock.ts) between real processes: a live holder refuses a second run,
// naming its pid and start time; after SIGKILL its lock is stale and taken over; a pid reused by a process started at
// another time does not hold the lock; gc removes stale locks and leaves live ones; and the real CLI: a second
// `bench` on a stack in use is refused (exit 3) and Ctrl-C of the first releases the lock; Ctrl-C of a `bench
// --lock-wait` waiting for a lock another process holds ends the wait at once (exit 130), leaving nothing behind.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProvisioningError } from "../../../core/errors.ts";
import { processStartTicks } from "../../../infra/local/platform.ts";
import { acquireStackLock, collectStaleLocks, lockDir, lockFile, readLock } from "../../../harness/runner/stack-lock.ts";
import { projectRoot } from "../../helpers/bench.ts";
import { lockStacks, lockWaitMs } from "../../../harness/runner/drive.ts";
import { Progress } from "../../../harness/runner/progress.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-lock-"));
chmodSync(tmp, 0o755); // the bench's PostgreSQL runs as user postgres under this TMPDIR
const savedTmpdir = process.env.TMPDIR;
const children: ChildProcess[] = [];
beforeAll(() => { process.env.TMPDIR = tmp; });
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  rmSync(tmp, { recursive: true, force: true });
});

/** Spawn a process and resolve once its stdout matches `ready`. */
function started(cmd: string, args: string[], ready: RegExp): Promise<{ child: ChildProcess; out: () => string; err: () => string }> {
  const child = spawn(cmd, args, { cwd: projectRoot, env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "", err = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) resolve({ child, out: () => out, err: () => err });
    });
    child.stderr!.on("data", (d: Buffer) => { err += d.toString(); });
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code} before it was ready: ${err}`)));
  });
}

const exited = (c: ChildProcess): Promise<number | null> =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve(c.exitCode) : new Promise((r) => c.once("exit", (code) => r(code)));

function refusal(stack: string): ProvisioningError {
  try {
    acquireStackLock(stack, "bench").release();
  } catch (err) {
    return err as ProvisioningError;
  }
  throw new Error(`the lock of ${stack} was not refused`);
}

describe("stack locks between processes", () => {
  it("a live holder refuses a second run with its pid and start time; after SIGKILL the lock is stale and taken over", async () => {
    const { child } = await started(process.execPath, ["--import", "tsx", "test/helpers/lock-child.ts", "lock-a"], /locked \d+/);
    const holder = readLock(lockFile("lock-a"))!;
    expect(holder.ownerPid).toBe(child.pid);
    expect(lockFile("lock-a").startsWith(path.join(tmp, "ingestbench-runs", "locks"))).toBe(true);
    const err = refusal("lock-a");
    expect(err).toBeInstanceOf(ProvisioningError);
    expect(err.code).toBe("E_STACK_LOCKED");
    expect(err.message).toContain(`stack lock-a is in use by another run: pid ${child.pid} (ingestbench bench, started ${holder.startedAt})`);
    // gc leaves a live holder's lock alone
    expect((await collectStaleLocks()).live.map((l) => l.stack)).toEqual(["lock-a"]);
    child.kill("SIGKILL");
    await exited(child);
    const lock = acquireStackLock("lock-a", "bench");
    expect(lock.tookOver?.ownerPid).toBe(child.pid);
    expect(readLock(lockFile("lock-a"))?.ownerPid).toBe(process.pid);
    lock.release();
    expect(existsSync(lockFile("lock-a"))).toBe(false);
  }, 60_000);

  it("--lock-wait: a second run waits for the holder (saying whom it waits for) and takes the lock when it is gone; without a wait it is refused", async () => {
    const { child } = await started(process.execPath, ["--import", "tsx", "test/helpers/lock-child.ts", "lock-w"], /locked \d+/);
    let said = "";
    const progress = new Progress("plain", { stdout: { write: () => true }, stderr: { write: (s: string) => { said += s; return true; } } });
    // refused at once, with what to do; a wait that runs out says it waited, and for whom
    await expect(lockStacks(["lock-w"], "bench", progress, 0)).rejects.toMatchObject({ code: "E_STACK_LOCKED", message: expect.stringContaining("wait for it (`--lock-wait 30m`, or INGESTBENCH_LOCK_WAIT), use another stack") });
    await expect(lockStacks(["lock-w"], "bench", progress, 2000)).rejects.toMatchObject({ code: "E_STACK_LOCKED", message: expect.stringMatching(new RegExp(`^waited 2 s for stack lock-w, which is still in use: pid ${child.pid} `)) });
    const waiting = lockStacks(["lock-w"], "bench", progress, 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(said).toMatch(new RegExp(`stack lock-w is in use by another run: pid ${child.pid} .*; waiting up to \\d+ s for it`));
    child.kill("SIGKILL");
    const [lock] = (await waiting)!;
    expect(readLock(lockFile("lock-w"))?.ownerPid).toBe(process.pid);
    lock!.release();
    expect(lockWaitMs("10m", {})).toBe(600_000);
    expect(lockWaitMs(undefined, { INGESTBENCH_LOCK_WAIT: "30s" })).toBe(30_000);
    expect(lockWaitMs(undefined, {})).toBe(0);
    expect(() => lockWaitMs("soon", {})).toThrow(/--lock-wait: /);
  }, 60_000);

  it("a pid alive but started at another time (reused) does not hold the lock; gc removes stale locks only", async () => {
    const { child: sleeper } = await started("sh", ["-c", "echo up; exec sleep 60"], /up/);
    const ticks = processStartTicks(sleeper.pid!)!;
    mkdirSync(lockDir(), { recursive: true });
    const stale = (stack: string, pid: number, startTicks: number) =>
      writeFileSync(lockFile(stack), JSON.stringify({ stack, ownerPid: pid, ownerStartTicks: startTicks, startedAt: "2026-01-01T00:00:00.000Z", command: "nightly" }));
    stale("lock-reused", sleeper.pid!, ticks - 1);
    const lock = acquireStackLock("lock-reused", "aa");
    expect(lock.tookOver).toMatchObject({ ownerPid: sleeper.pid, command: "nightly" });
    lock.release();
    // the same pid with its true start time holds it
    stale("lock-held", sleeper.pid!, ticks);
    expect(refusal("lock-held").message).toMatch(new RegExp(`pid ${sleeper.pid} \\(ingestbench nightly, started 2026-01-01T00:00:00.000Z\\)`));
    stale("lock-dead", 2 ** 22 + 7, 1); // above pid_max's default
    const dry = await collectStaleLocks({ dryRun: true });
    expect(dry.removed.map((r) => r.stack)).toEqual(["lock-dead"]);
    expect(existsSync(lockFile("lock-dead"))).toBe(true);
    const gc = await collectStaleLocks();
    expect(gc.removed.map((r) => r.stack)).toEqual(["lock-dead"]);
    expect(gc.live.map((r) => r.stack)).toEqual(["lock-held"]);
    expect(existsSync(lockFile("lock-dead"))).toBe(false);
    expect(existsSync(lockFile("lock-held"))).toBe(true);
    sleeper.kill("SIGKILL");
    await exited(sleeper);
    expect((await collectStaleLocks()).removed.map((r) => r.stack)).toEqual(["lock-held"]);
  }, 60_000);

  it("the CLI: Ctrl-C while bench --lock-wait waits for a lock another process holds ends the wait at once, exit 130, nothing left", async () => {
    const { child: holder } = await started(process.execPath, ["--import", "tsx", "test/helpers/lock-child.ts", "local-quarter-core"], /locked \d+/);
    const file = lockFile("local-quarter-core");
    try {
      const results = path.join(tmp, "results-wait");
      const waiter = spawn(process.execPath, ["bin/ingestbench.js", "bench", "--stack", "local-quarter-core", "scenarios/quickstart.yaml", "--results", results, "--lock-wait", "120s", "--progress", "plain"],
        { cwd: projectRoot, env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] });
      children.push(waiter);
      let err = "";
      waiter.stderr!.on("data", (d: Buffer) => { err += d.toString(); });
      // the CLI's start-up (node + tsx) takes seconds on a busy machine: up to 60 s for its first words
      for (let i = 0; i < 2400 && !/waiting up to \d+ s for it/.test(err) && waiter.exitCode === null; i++) await new Promise((r) => setTimeout(r, 25));
      expect(err).toMatch(new RegExp(`stack local-quarter-core is in use by another run: pid ${holder.pid} .*; waiting up to \\d+ s for it`));
      const t0 = Date.now();
      waiter.kill("SIGINT");
      expect(await exited(waiter), err).toBe(130);
      // at once, not at the end of the 120 s wait (the poll is 1 s; a busy machine may take a few seconds to answer)
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(err).toMatch(/SIGINT: stopped waiting for stack local-quarter-core; nothing was provisioned and no lock is held/);
      // the holder's lock is untouched, and the waiter left no registry, run directory or result of its own
      expect(readLock(file)?.ownerPid).toBe(holder.pid);
      const runs = path.join(tmp, "ingestbench-runs");
      expect(existsSync(runs) ? readdirSync(runs).filter((f) => f.endsWith(".json")) : []).toEqual([]);
      expect(readdirSync(tmp).filter((f) => /^ingestbench-[0-9a-f]{6}$/.test(f))).toEqual([]);
      expect(existsSync(results)).toBe(false); // not even the results directory: it is made once the locks are held
    } finally {
      // whatever failed above, the next test must find the stack free
      holder.kill("SIGKILL");
      await exited(holder);
      rmSync(file, { force: true });
    }
  }, 150_000);

  it("the CLI: a second bench on a stack in use is refused (exit 3) naming the first; Ctrl-C of the first releases it", async () => {
    const results = path.join(tmp, "results");
    const args = ["bin/ingestbench.js", "bench", "--stack", "local-quarter-core", "scenarios/quickstart.yaml", "--results", results, "--replicates", "1", "--warmup", "0s", "--duration", "60s", "--progress", "plain"];
    const first = spawn(process.execPath, args, { cwd: projectRoot, env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(first);
    let firstErr = "";
    first.stderr!.on("data", (d: Buffer) => { firstErr += d.toString(); });
    const file = lockFile("local-quarter-core");
    for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readLock(file)?.ownerPid, firstErr).toBe(first.pid);
    const second = spawn(process.execPath, args, { cwd: projectRoot, env: { ...process.env, TMPDIR: tmp, INGESTBENCH_LOCK_WAIT: "0s" }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(second);
    let secondErr = "";
    second.stderr!.on("data", (d: Buffer) => { secondErr += d.toString(); });
    const secondCode = await exited(second);
    expect(secondCode, secondErr).toBe(3);
    expect(secondErr).toMatch(new RegExp(`stack local-quarter-core is in use by another run: pid ${first.pid} \\(ingestbench bench, started \\d{4}-\\d\\d-\\d\\dT`));
    expect(existsSync(file)).toBe(true); // the refused run leaves the holder's lock alone
    first.kill("SIGINT");
    expect(await exited(first), firstErr).toBe(130);
    expect(existsSync(file)).toBe(false);
  }, 120_000);
});
