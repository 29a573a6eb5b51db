/**
 * Kill safety of the local platform: `ingestbench bench` (the real CLI, a real PostgreSQL run on local-2-cores:
 * cgroups, network namespaces, veth links, a run directory) is killed with SIGKILL at seeded random points spread
 * over provisioning, the sink's start, the load, the drain, the ledger and the teardown; then `ingestbench gc`
 * runs, and the inventory (test/helpers/inventory.ts: processes, cgroups, namespaces, veths, mounts, temp dirs,
 * registries, locks, ports) holds nothing of the run that it did not hold before. A run record the harness left
 * "running" says "interrupted" afterwards.
 *
 * Each point is one run of its own (a kill point never reuses another's provisioned run), made as small as a run
 * gets: a 2 s load of 2000 rows/s, no warmup. Where each phase begins is read from the outside, as a user would see
 * it: the run's registry file (provisioning), a process in the sink's cgroup (the sink starts), a process in the
 * loadgen's cgroup (the generators start, then load), the first "drain" sample of the jsonl progress, the sink's
 * CPU cap lifted after it was seen in place during the load (infra/local/cgroup.ts liftCpuLimit: the ledger queries
 * begin, harness/runner/local-site.ts endMeasurement; the lift while the sink starts is written back before the load)
 * and the sink's cgroup emptied after that (teardown); the kill comes
 * a seeded random delay after.
 *
 * Which points, by default 15 (POINTS_PER_PHASE): every state gc can meet half made — provision (registry, then
 * cgroups, namespaces, links, shapers one after the other), the sink's start (initdb, the server, waiting for it) and
 * the teardown (some of it removed already) — at 4, 4 and 3 seeded delays each; the states in which everything of
 * the run exists are one path for gc whatever runs in them, so load (generators alive) 2, drain and ledger (the
 * generators gone, the sink busy) 1 each. INGESTBENCH_KILL_POINTS=N instead spreads N points over the six phases in
 * turn (20: each phase hit 3 or 4 times); INGESTBENCH_KILL_SEED (default 20261201) sets the seed.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.ts";
import { inventory, leftBehind, registeredRuns } from "../helpers/inventory.ts";
import { projectRoot } from "../helpers/bench.ts";

const EXPLICIT = process.env.INGESTBENCH_KILL_POINTS;
const SEED = Number(process.env.INGESTBENCH_KILL_SEED ?? 20261201);
const STACK = "local-2-cores";
const cleanups = useCleanups();

const PHASES = ["provision", "sink start", "load", "drain", "ledger", "teardown"] as const;
type Phase = (typeof PHASES)[number];
/** The longest delay after each phase's marker, ms: about the phase's length on this machine (2 cores, busy). */
const MAX_DELAY_MS: Record<Phase, number> = {
  provision: 400,
  "sink start": 1500,
  load: 2500,
  drain: 150,
  ledger: 150,
  teardown: 40,
};

/** mulberry32: a small seeded PRNG (uniform in [0, 1)). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Points per phase by default (see the file comment: the half-made states more often than the whole run). */
const POINTS_PER_PHASE: Record<Phase, number> = {
  provision: 4,
  "sink start": 4,
  load: 2,
  drain: 1,
  ledger: 1,
  teardown: 3,
};

/**
 * The kill points: POINTS_PER_PHASE, or with `count` every phase in turn (so each is hit count/6 times), in a seeded
 * order, with seeded delays.
 */
function killPoints(count: number | undefined, seed: number): Array<{ phase: Phase; delayMs: number }> {
  const r = rng(seed);
  const phases =
    count === undefined
      ? PHASES.flatMap((p) => Array.from({ length: POINTS_PER_PHASE[p] }, () => p))
      : Array.from({ length: count }, (_, i) => PHASES[i % PHASES.length]!);
  for (let i = phases.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [phases[i], phases[j]] = [phases[j]!, phases[i]!];
  }
  return phases.map((phase) => ({ phase, delayMs: Math.round(r() * MAX_DELAY_MS[phase]) }));
}

const SCENARIO = `name: kill-safety
description: the smallest quickstart run, for kill points
event:
  - { name: ts,  type: timestamp }
  - { name: msg, type: string, size: 80 }
generator: { pg-copy: { batch: 500, connections: 1, rate: 2000, seed: 42 } }
collector: none
sink: { postgres: { version: "18.4.0-beta.17" } }
warmup: 0s
duration: 2s
interval: 1s
drain: { timeout: 20s }
replicates: 1
checks:
  - { ledger.lost: 0 }
`;

const procsOf = (runId: string, host: string): string => {
  try {
    return readFileSync(`/sys/fs/cgroup/cpu/ingestbench/${runId}/${host}/cgroup.procs`, "utf8").trim();
  } catch {
    return "";
  }
};
const quota = (runId: string): string => {
  try {
    return readFileSync(`/sys/fs/cgroup/cpu/ingestbench/${runId}/sink/cpu.cfs_quota_us`, "utf8").trim();
  } catch {
    return "";
  }
};

/** Watches a bench for the phase markers (see the file comment); `reached(phase)` once a phase's marker was seen. */
class Watcher {
  out = "";
  err = "";
  private seen = new Set<Phase>();
  private sinkUp = false;
  private capped = false;
  constructor(
    private child: ChildProcess,
    private tmpDir: string,
  ) {
    child.stdout!.on("data", (d: Buffer) => void (this.out += d));
    child.stderr!.on("data", (d: Buffer) => void (this.err += d));
  }

  get runId(): string | undefined {
    return /"runId":"[^"]*-([0-9a-f]{6})"/.exec(this.out)?.[1] ?? registeredRuns(this.tmpDir)[0];
  }

  /** Look once; returns the phases seen so far. */
  poll(): Set<Phase> {
    const id = this.runId;
    if (id === undefined) return this.seen;
    if (existsSync(path.join(this.tmpDir, "ingestbench-runs", `${id}.json`))) this.seen.add("provision");
    const sinkProcs = procsOf(id, "sink");
    if (sinkProcs) {
      this.sinkUp = true;
      this.seen.add("sink start");
    }
    if (procsOf(id, "loadgen")) this.seen.add("load");
    if (/"event":"sample"[^\n]*"phase":"drain"/.test(this.out)) this.seen.add("drain");
    // a new cgroup reads -1 until its cap is written, and the cap is lifted while the sink starts (written back
    // before the generators start: harness/runner/local-site.ts uncapped): the lift counts only after the cap was
    // seen in place once the load began (after the load it is lifted for the settling of the samples, then for the
    // ledger: both are after-load work)
    const q = quota(id);
    if (this.seen.has("load") && /^\d+$/.test(q)) this.capped = true;
    if (this.capped && q === "-1") this.seen.add("ledger");
    if (this.seen.has("ledger") && this.sinkUp && !sinkProcs) this.seen.add("teardown");
    return this.seen;
  }
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.on("exit", () => resolve());
  });

function gc(env: NodeJS.ProcessEnv): { status: number | null; json: Record<string, any>; stderr: string } {
  const r = spawnSync(process.execPath, ["bin/ingestbench.js", "gc", "--json"], {
    cwd: projectRoot,
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(r.stdout, r.stderr).toMatch(/^\{/);
  return { status: r.status, json: JSON.parse(r.stdout), stderr: r.stderr };
}

/** Every run.json under `dir` with its status. */
function records(dir: string): Array<{ file: string; status: string }> {
  if (!existsSync(dir)) return [];
  const out: Array<{ file: string; status: string }> = [];
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name === "run.json") {
      const file = path.join(e.parentPath, e.name);
      out.push({ file, status: JSON.parse(readFileSync(file, "utf8")).status });
    }
  }
  return out;
}

const points = killPoints(EXPLICIT === undefined ? undefined : Number(EXPLICIT), SEED);
const COUNT = points.length;
const started = Date.now();
const timings: string[] = [];

describe(`SIGKILL of the harness at ${COUNT} seeded points of real ${STACK} runs, then gc: nothing of the run is left (seed ${SEED})`, () => {
  points.forEach(({ phase, delayMs }, i) => {
    it(`point ${i + 1}/${COUNT}: ${delayMs} ms into ${phase}`, async () => {
      const base = mkdtempSync(path.join(os.tmpdir(), "ib-kill-"));
      chmodSync(base, 0o755); // the sink runs as postgres, which must reach its data dir below
      const tmpDir = path.join(base, "tmp");
      mkdirSync(tmpDir);
      const env = { ...process.env, TMPDIR: tmpDir, INGESTBENCH_LOCK_WAIT: "2m" };
      const scenario = path.join(base, "kill-safety.yaml");
      writeFileSync(scenario, SCENARIO);
      let clean = false;
      cleanups.push(async () => {
        // whatever a failed point left: gc (the harness is SIGKILLed by now, so its run is ownerless; no --kill-live,
        // which would also end live runs of other tests on this machine), then this point's directory
        if (!clean)
          spawnSync(process.execPath, ["bin/ingestbench.js", "gc", "--all"], {
            cwd: projectRoot,
            env,
            timeout: 120_000,
          });
        rmSync(base, { recursive: true, force: true });
      });
      const before = inventory({ tmpDir });

      const t0 = Date.now();
      const child = spawn(
        process.execPath,
        [
          "bin/ingestbench.js",
          "bench",
          "--stack",
          STACK,
          scenario,
          "--results",
          path.join(base, "results"),
          "--progress",
          "jsonl",
        ],
        {
          cwd: projectRoot,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      cleanups.push(
        async () => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")),
      );
      const watch = new Watcher(child, tmpDir);
      let done = false;
      void exited(child).then(() => {
        done = true;
      });
      while (!done && !watch.poll().has(phase)) await new Promise((r) => setTimeout(r, 10));
      expect(done, `the bench ended before ${phase} began:\n${watch.err.slice(-2000)}`).toBe(false);
      await new Promise((r) => setTimeout(r, delayMs));
      const runIds = new Set(
        [watch.runId, ...registeredRuns(tmpDir)].filter((x): x is string => x !== undefined),
      );
      expect(
        done,
        `the bench ended ${delayMs} ms into ${phase}, before the kill:\n${watch.out.slice(-1500)}`,
      ).toBe(false);
      child.kill("SIGKILL");
      await exited(child);
      expect(child.signalCode).toBe("SIGKILL");

      const killedAt = Date.now();
      const r = gc(env);
      const gcMs = Date.now() - killedAt;
      expect(r.json.errors, r.stderr).toEqual([]);
      expect(r.status, r.stderr).toBe(0);
      expect(leftBehind(before, inventory({ tmpDir }), runIds)).toEqual([]);
      // a killed run never says "running" after gc: it was marked interrupted (infra/local/gc.ts markInterrupted)
      for (const rec of records(path.join(base, "results"))) expect(rec.status, rec.file).not.toBe("running");
      clean = true;
      timings.push(
        `${phase} +${delayMs} ms: killed ${((killedAt - t0) / 1000).toFixed(1)} s after the start, gc ${(gcMs / 1000).toFixed(1)} s`,
      );
    }, 120_000);
  });

  it("took (for the report)", () => {
    process.stderr.write(
      `kill-safety: ${COUNT} points in ${((Date.now() - started) / 1000).toFixed(1)} s (load average ${os.loadavg()[0]!.toFixed(1)})\n${timings.map((t) => `  ${t}\n`).join("")}`,
    );
  });
});
