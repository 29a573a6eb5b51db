// harness/runner/steps.ts StepRunner with real processes: a StepTarget whose exec runs `sh -c` on this machine (the
// local platform's is the same inside a host's namespace and cgroup, test/e2e/steps.test.ts), a real zx script, and
// steps that fire on a condition, time out, fail, or never come.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { Step } from "../../../harness/scenario/steps.ts";
import { StepRunner, type ExecResult, type StepTarget } from "../../../harness/runner/steps.ts";

const dir = mkdtempSync(path.join(tmpdir(), "ib-steps-runner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `sh -c` here; killed by its pid when the step's signal aborts. */
function shExec(command: string, signal: AbortSignal): Promise<ExecResult> {
  const child = spawn("sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => {
    stdout += b;
  });
  child.stderr.on("data", (b: Buffer) => {
    stderr += b;
  });
  signal.addEventListener(
    "abort",
    () => {
      if (child.exitCode === null && child.pid) process.kill(child.pid, "SIGKILL");
    },
    { once: true },
  );
  return new Promise((resolve) => child.once("close", (code) => resolve({ exitCode: code, stdout, stderr })));
}

const target: StepTarget = {
  hosts: () => ({
    sink: {
      name: "sink",
      address: "127.0.0.1",
      controlAddress: "127.0.0.1",
      cgroup: {},
      pid: process.pid,
      pids: async () => [process.pid],
    },
  }),
  signal: async () => {
    throw new Error("no signals in this test");
  },
  restart: async () => {
    throw new Error("no restarts in this test");
  },
  exec: (_host, command, signal) => shExec(command, signal),
  network: async () => {
    throw new Error("no links in this test");
  },
  diskFull: async () => {
    throw new Error("no volumes in this test");
  },
  dropConnections: async () => {
    throw new Error("no connections in this test");
  },
  release: async () => undefined,
};

const exec = (index: number, trigger: Step["trigger"], command: string, timeoutMs = 5000): Step => ({
  index,
  name: `exec ${index}`,
  trigger,
  action: { kind: "exec", host: "sink", command },
  timeoutMs,
  fault: false,
});

describe("StepRunner (real processes)", () => {
  it("fires timed and condition steps, records exit status and output, times out, and skips what never came", async () => {
    const script = path.join(dir, "probe.mjs");
    writeFileSync(
      script,
      "export default async (ctx) => { ctx.log('hosts', Object.keys(ctx.hosts)); const r = await ctx.$`echo zx-${ctx.hosts.sink.address}`; return r.stdout.trim(); };\n",
    );
    const steps: Step[] = [
      exec(0, { atMs: 50, text: "50ms" }, "echo hello; echo oops >&2"),
      exec(1, { when: { metric: "stored", op: ">=", value: 100, text: "stored >= 100" } }, "exit 3"),
      exec(2, { atMs: 0, text: "0s" }, "sleep 5", 200),
      exec(3, { atMs: 60_000, text: "60s" }, "echo never"),
      exec(4, { when: { metric: "sent", op: ">", value: 1e9, text: "sent > 1e9" } }, "echo never"),
      {
        index: 5,
        name: "script probe.mjs",
        trigger: { atMs: 10, text: "10ms" },
        action: { kind: "script", file: script },
        timeoutMs: 5000,
        fault: true,
      },
    ];
    const runner = new StepRunner(steps, target);
    const t0 = performance.timeOrigin + performance.now();
    runner.start(t0, t0 + 1000);
    runner.onSample({ t: t0 + 10, stored: 50, sent: 60, elapsedS: 0.01 });
    await sleep(100);
    expect(runner.timeline[1]!.status).toBe("skipped"); // 50 < 100: not yet
    runner.onSample({ t: t0 + 110, stored: 150, sent: 160, elapsedS: 0.11 });
    await sleep(400);
    const timeline = await runner.finish();
    expect(timeline.map((e) => [e.status, e.exitCode])).toEqual([
      ["ok", 0],
      ["failed", 3],
      ["timeout", null],
      ["skipped", null],
      ["skipped", null],
      ["ok", 0],
    ]);
    expect(timeline[0]!.output).toBe("hello\noops");
    expect(timeline[0]!.startS!).toBeGreaterThanOrEqual(0.05); // never early (StepRunner armAt)
    expect(timeline[1]!.startS!).toBeGreaterThanOrEqual(0.1);
    expect(timeline[1]!.trigger).toBe("when stored >= 100");
    expect(timeline[2]!.output).toBe("timed out after 200 ms");
    expect(timeline[2]!.endS! - timeline[2]!.startS!).toBeLessThan(1);
    expect(timeline[3]).toMatchObject({ startS: null, endS: null, output: "" });
    expect(timeline[5]!.output).toBe('hosts ["sink"]\nzx-127.0.0.1');
  });

  it("a timed step never fires before its offset, even when the event loop's cached time is stale (Node times a timeout from it)", async () => {
    const runner = new StepRunner([exec(0, { atMs: 50, text: "50ms" }, "true")], target);
    // 30 ms of synchronous work: the loop's time is now 30 ms behind the clock, and a plain setTimeout(50) set from
    // here fires about 20 ms after t0
    const stale = performance.now() + 30;
    while (performance.now() < stale) {
      /* busy */
    }
    const t0 = performance.timeOrigin + performance.now();
    runner.start(t0, t0 + 1000);
    await sleep(200);
    const [e] = await runner.finish();
    expect(e!.status).toBe("ok");
    expect(e!.startS!).toBeGreaterThanOrEqual(0.05);
  });

  it("a script without a default export, and a platform without steps, fail the step with the reason", async () => {
    const bad = path.join(dir, "bad.mjs");
    writeFileSync(bad, "export const x = 1;\n");
    const step: Step = {
      index: 0,
      name: "bad",
      trigger: { atMs: 0, text: "0s" },
      action: { kind: "script", file: bad },
      timeoutMs: 5000,
      fault: true,
    };
    for (const [t, why] of [
      [target, /has no default export function/],
      [null, /this platform runs no steps/],
    ] as const) {
      const runner = new StepRunner([step], t);
      const t0 = performance.timeOrigin + performance.now();
      runner.start(t0, t0 + 1000);
      await sleep(100);
      const [e] = await runner.finish();
      expect(e).toMatchObject({ status: "failed", exitCode: 1 });
      expect(e!.output).toMatch(why);
    }
  });
});
