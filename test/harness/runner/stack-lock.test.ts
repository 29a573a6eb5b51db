// Per-stack locks (harness/runner/stack-lock.ts) between real processes: a live holder refuses a second run,
// naming its pid and start time; after SIGKILL its lock is stale and taken over; a pid reused by a process started at
// another time does not hold the lock; gc removes stale locks and leaves live ones; and the real CLI: a second
// `bench` on a stack in use is refused (exit 3) and Ctrl-C of the first releases the lock; Ctrl-C of a `bench
// --lock-wait` waiting for a lock another process holds ends the wait at once (exit 130), leaving nothing behind; a
// wait that ends with the lock says how long and for whom, and the first run on the stack keeps it (run.json lockWait).
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProvisioningError } from "../../../core/errors.ts";
import { processStartTicks } from "../../../infra/local/platform.ts";
import {
  acquireStackLock,
  collectStaleLocks,
  lockDir,
  lockFile,
  readLock,
} from "../../../harness/runner/stack-lock.ts";
import { projectRoot } from "../../helpers/bench.ts";
import {
  driveItems,
  lockStacks,
  lockWaitLine,
  lockWaitMs,
  type DeployedStacks,
} from "../../../harness/runner/drive.ts";
import { BenchRun } from "../../../harness/runner/run.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import type { LockWait, RunRecord } from "../../../harness/results/types.ts";
import { Progress } from "../../../harness/runner/progress.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-lock-"));
chmodSync(tmp, 0o755); // the bench's PostgreSQL runs as user postgres under this TMPDIR
const savedTmpdir = process.env.TMPDIR;
const children: ChildProcess[] = [];
// the locks are machine-wide (harness/runner/stack-lock.ts lockDir); this file's own directory keeps its holders of
// real stack names (docker-4c4g) away from the other test lane's runs, and its children inherit it
const machineLocks = lockDir();
beforeAll(() => {
  process.env.TMPDIR = tmp;
  process.env.INGESTBENCH_LOCKS_DIR = path.join(tmp, "locks");
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  delete process.env.INGESTBENCH_LOCKS_DIR;
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  rmSync(tmp, { recursive: true, force: true });
});

/** Spawn a process and resolve once its stdout matches `ready`. */
function started(
  cmd: string,
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; out: () => string; err: () => string }> {
  const child = spawn(cmd, args, {
    cwd: projectRoot,
    env: { ...process.env, TMPDIR: tmp },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "",
    err = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) resolve({ child, out: () => out, err: () => err });
    });
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("exit", (code) =>
      reject(new Error(`${args.join(" ")} exited ${code} before it was ready: ${err}`)),
    );
  });
}

const exited = (c: ChildProcess): Promise<number | null> =>
  c.exitCode !== null || c.signalCode !== null
    ? Promise.resolve(c.exitCode)
    : new Promise((r) => c.once("exit", (code) => r(code)));

function refusal(stack: string): ProvisioningError {
  try {
    acquireStackLock(stack, "bench").release();
  } catch (err) {
    return err as ProvisioningError;
  }
  throw new Error(`the lock of ${stack} was not refused`);
}

describe("stack locks between processes", () => {
  it("live in one machine-wide directory whatever TMPDIR a run has (a run with another TMPDIR sees the lock)", () => {
    expect(machineLocks).toBe(process.getuid?.() === 0 ? "/run/ingestbench/locks" : "/tmp/ingestbench-locks");
    const saved = process.env.INGESTBENCH_LOCKS_DIR;
    delete process.env.INGESTBENCH_LOCKS_DIR;
    try {
      process.env.TMPDIR = path.join(tmp, "elsewhere");
      expect(lockDir()).toBe(machineLocks);
    } finally {
      process.env.TMPDIR = tmp;
      process.env.INGESTBENCH_LOCKS_DIR = saved;
    }
  });

  it("a live holder refuses a second run with its pid and start time; after SIGKILL the lock is stale and taken over", async () => {
    const { child } = await started(
      process.execPath,
      ["--import", "tsx", "test/helpers/lock-child.ts", "lock-a"],
      /locked \d+/,
    );
    const holder = readLock(lockFile("lock-a"))!;
    expect(holder.ownerPid).toBe(child.pid);
    expect(lockFile("lock-a").startsWith(path.join(tmp, "locks"))).toBe(true);
    const err = refusal("lock-a");
    expect(err).toBeInstanceOf(ProvisioningError);
    expect(err.code).toBe("E_STACK_LOCKED");
    expect(err.message).toContain(
      `stack lock-a is in use by another run: pid ${child.pid} (ingestbench bench, started ${holder.startedAt})`,
    );
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
    const { child } = await started(
      process.execPath,
      ["--import", "tsx", "test/helpers/lock-child.ts", "lock-w"],
      /locked \d+/,
    );
    let said = "";
    const progress = new Progress("plain", {
      stdout: { write: () => true },
      stderr: {
        write: (s: string) => {
          said += s;
          return true;
        },
      },
    });
    // refused at once, with what to do; a wait that runs out says it waited, and for whom
    await expect(lockStacks(["lock-w"], "bench", progress, 0)).rejects.toMatchObject({
      code: "E_STACK_LOCKED",
      message: expect.stringContaining(
        "wait for it (`--lock-wait 30m`, or INGESTBENCH_LOCK_WAIT), use another stack",
      ),
    });
    await expect(lockStacks(["lock-w"], "bench", progress, 2000)).rejects.toMatchObject({
      code: "E_STACK_LOCKED",
      message: expect.stringMatching(
        new RegExp(`^waited 2 s for stack lock-w, which is still in use: pid ${child.pid} `),
      ),
    });
    const waiting = lockStacks(["lock-w"], "bench", progress, 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(said).toMatch(
      new RegExp(`stack lock-w is in use by another run: pid ${child.pid} .*; waiting up to \\d+ s for it`),
    );
    child.kill("SIGKILL");
    const [lock] = (await waiting)!;
    expect(readLock(lockFile("lock-w"))?.ownerPid).toBe(process.pid);
    lock!.release();
    expect(lockWaitMs("10m", {})).toBe(600_000);
    expect(lockWaitMs(undefined, { INGESTBENCH_LOCK_WAIT: "30s" })).toBe(30_000);
    expect(lockWaitMs(undefined, {})).toBe(0);
    expect(() => lockWaitMs("soon", {})).toThrow(/--lock-wait: /);
  }, 60_000);

  it("a wait that ends with the lock is said in one line per stack (how long, held by whom) and reaches the first run's record", async () => {
    // two stacks held by two other processes, one free: the free one is taken at once, the others when their holders go
    const a = (
      await started(
        process.execPath,
        ["--import", "tsx", "test/helpers/lock-child.ts", "lock-wa"],
        /locked \d+/,
      )
    ).child;
    const b = (
      await started(
        process.execPath,
        ["--import", "tsx", "test/helpers/lock-child.ts", "lock-wb"],
        /locked \d+/,
      )
    ).child;
    const holderA = readLock(lockFile("lock-wa"))!;
    let said = "";
    const progress = new Progress("plain", {
      stdout: { write: () => true },
      stderr: {
        write: (s: string) => {
          said += s;
          return true;
        },
      },
    });
    const waiting = lockStacks(["lock-wb", "lock-wa", "lock-wfree"], "bench", progress, 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(said).not.toMatch(/waited/);
    a.kill("SIGKILL");
    await exited(a);
    await new Promise((r) => setTimeout(r, 1500));
    b.kill("SIGKILL");
    await exited(b);
    const locks = (await waiting)!;
    try {
      const byStack = new Map(locks.map((l) => [l.holder.stack, l]));
      expect(byStack.get("lock-wfree")?.waited).toBeUndefined();
      const wa = byStack.get("lock-wa")!.waited!;
      const wb = byStack.get("lock-wb")!.waited!;
      expect(wa.holders).toEqual([{ pid: a.pid, command: "bench", startedAt: holderA.startedAt }]);
      expect(wb.holders.map((h) => h.pid)).toEqual([b.pid]);
      // the waits are timed from the first refusal: lock-wb was waited for while lock-wa's holder ran, and after
      expect(wa.waitedMs).toBeGreaterThanOrEqual(1000);
      expect(wb.waitedMs).toBeGreaterThanOrEqual(1000);
      const lines = said.split("\n").filter((l) => /^waited /.test(l));
      expect(lines).toEqual([
        `waited ${Math.round(wa.waitedMs / 1000)} s for stack lock-wa (held by pid ${a.pid})`,
        `waited ${Math.round(wb.waitedMs / 1000)} s for stack lock-wb (held by pid ${b.pid})`,
      ]);
      expect(
        lockWaitLine("local-2-cores", {
          waitedMs: 42_400,
          holders: [
            { pid: 7, command: "bench", startedAt: "" },
            { pid: 9, command: "aa", startedAt: "" },
          ],
        }),
      ).toBe("waited 42 s for stack local-2-cores (held by pid 7, then pid 9)");
    } finally {
      for (const l of locks) l.release();
    }

    // the driver gives the wait to the first run on the stack (run.json lockWait), not to the later ones
    const c = (
      await started(
        process.execPath,
        ["--import", "tsx", "test/helpers/lock-child.ts", "docker-4c4g"],
        /locked \d+/,
      )
    ).child;
    const stack = loadStack("docker-4c4g", path.join(projectRoot, "stacks"));
    const scenarioFile = path.join(projectRoot, "scenarios/quickstart.yaml");
    const plans = planCells(loadScenarioFile(scenarioFile), scenarioFile, { replicates: 2 });
    const given: Array<LockWait | undefined> = [];
    const deployed: DeployedStacks = {
      check: () => {},
      run: async (args) => {
        given.push(args.lockWait);
        return [];
      },
    };
    setTimeout(() => c.kill("SIGKILL"), 1500);
    said = "";
    await driveItems(
      plans.map((plan) => ({ stack, plan })),
      {
        resultsRoot: path.join(tmp, "results-drive"),
        invocation: new Date().toISOString(),
        projectRoot,
        reporter: progress,
        deployed,
        lockWaitMs: 60_000,
      },
    );
    expect(given).toHaveLength(1); // one group: the stack's runs
    expect(given[0]).toMatchObject({ holders: [{ pid: c.pid, command: "bench" }] });
    expect(said).toMatch(new RegExp(`^waited \\d+ s for stack docker-4c4g \\(held by pid ${c.pid}\\)$`, "m"));
    expect(existsSync(lockFile("docker-4c4g"))).toBe(false); // released at the end
    // and a run given it keeps it in its record (run.json), beside startedAt
    const run = new BenchRun({
      stack,
      plan: plans[0]!,
      resultsRoot: path.join(tmp, "results-drive"),
      invocation: "x",
      projectRoot,
      lockWait: given[0],
    });
    expect((run as unknown as { record: RunRecord }).record.lockWait).toEqual(given[0]);
  }, 60_000);

  it("a pid alive but started at another time (reused) does not hold the lock; gc removes stale locks only", async () => {
    const { child: sleeper } = await started("sh", ["-c", "echo up; exec sleep 60"], /up/);
    const ticks = processStartTicks(sleeper.pid!)!;
    mkdirSync(lockDir(), { recursive: true });
    const stale = (stack: string, pid: number, startTicks: number) =>
      writeFileSync(
        lockFile(stack),
        JSON.stringify({
          stack,
          ownerPid: pid,
          ownerStartTicks: startTicks,
          startedAt: "2026-01-01T00:00:00.000Z",
          command: "nightly",
        }),
      );
    stale("lock-reused", sleeper.pid!, ticks - 1);
    const lock = acquireStackLock("lock-reused", "aa");
    expect(lock.tookOver).toMatchObject({ ownerPid: sleeper.pid, command: "nightly" });
    lock.release();
    // the same pid with its true start time holds it
    stale("lock-held", sleeper.pid!, ticks);
    expect(refusal("lock-held").message).toMatch(
      new RegExp(`pid ${sleeper.pid} \\(ingestbench nightly, started 2026-01-01T00:00:00.000Z\\)`),
    );
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
    const { child: holder } = await started(
      process.execPath,
      ["--import", "tsx", "test/helpers/lock-child.ts", "local-quarter-core"],
      /locked \d+/,
    );
    const file = lockFile("local-quarter-core");
    try {
      const results = path.join(tmp, "results-wait");
      const waiter = spawn(
        process.execPath,
        [
          "bin/ingestbench.js",
          "bench",
          "--stack",
          "local-quarter-core",
          "scenarios/quickstart.yaml",
          "--results",
          results,
          "--lock-wait",
          "120s",
          "--progress",
          "plain",
        ],
        { cwd: projectRoot, env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] },
      );
      children.push(waiter);
      let err = "";
      waiter.stderr!.on("data", (d: Buffer) => {
        err += d.toString();
      });
      // the CLI's start-up (node + tsx) takes seconds on a busy machine: up to 60 s for its first words
      for (let i = 0; i < 2400 && !/waiting up to \d+ s for it/.test(err) && waiter.exitCode === null; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(err).toMatch(
        new RegExp(
          `stack local-quarter-core is in use by another run: pid ${holder.pid} .*; waiting up to \\d+ s for it`,
        ),
      );
      const t0 = Date.now();
      waiter.kill("SIGINT");
      expect(await exited(waiter), err).toBe(130);
      // at once, not at the end of the 120 s wait (the poll is 1 s; a busy machine may take a few seconds to answer)
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(err).toMatch(
        /SIGINT: stopped waiting for stack local-quarter-core; nothing was provisioned and no lock is held/,
      );
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
    const args = [
      "bin/ingestbench.js",
      "bench",
      "--stack",
      "local-quarter-core",
      "scenarios/quickstart.yaml",
      "--results",
      results,
      "--replicates",
      "1",
      "--warmup",
      "0s",
      "--duration",
      "60s",
      "--progress",
      "plain",
    ];
    const first = spawn(process.execPath, args, {
      cwd: projectRoot,
      env: { ...process.env, TMPDIR: tmp },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(first);
    let firstErr = "";
    first.stderr!.on("data", (d: Buffer) => {
      firstErr += d.toString();
    });
    const file = lockFile("local-quarter-core");
    for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readLock(file)?.ownerPid, firstErr).toBe(first.pid);
    const second = spawn(process.execPath, args, {
      cwd: projectRoot,
      env: { ...process.env, TMPDIR: tmp, INGESTBENCH_LOCK_WAIT: "0s" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(second);
    let secondErr = "";
    second.stderr!.on("data", (d: Buffer) => {
      secondErr += d.toString();
    });
    const secondCode = await exited(second);
    expect(secondCode, secondErr).toBe(3);
    expect(secondErr).toMatch(
      new RegExp(
        `stack local-quarter-core is in use by another run: pid ${first.pid} \\(ingestbench bench, started \\d{4}-\\d\\d-\\d\\dT`,
      ),
    );
    expect(existsSync(file)).toBe(true); // the refused run leaves the holder's lock alone
    first.kill("SIGINT");
    expect(await exited(first), firstErr).toBe(130);
    expect(existsSync(file)).toBe(false);
  }, 120_000);
});
