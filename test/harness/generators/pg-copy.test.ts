import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplayIndex } from "../../../core/events/replay-index.ts";
import type { EventField } from "../../../core/events/types.ts";
import { pgCopy, pgCopySchema } from "../../../harness/generators/pg-copy.ts";
import { generators } from "../../../harness/generators/index.ts";
import {
  GeneratorProcess,
  startGeneratorProcess,
  type GeneratorProgressLine,
} from "../../../harness/generators/process.ts";
import type { GeneratorFinal } from "../../../harness/generators/types.ts";
import { postgresVerifier } from "../../../plugins/sinks/postgres/verifier.ts";
import type { Verifier } from "../../../core/verifier.ts";
import {
  createDirectHost,
  startTestPostgres,
  type DirectHost,
  type TestPostgres,
} from "../../helpers/direct-host.ts";

const PORT = 5444;
const TABLE = "ib_events";
const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 200 },
];

let server: TestPostgres | undefined;
let loadgen: DirectHost | undefined;
let verifier: Verifier | undefined;
const procs: GeneratorProcess[] = [];

beforeAll(async () => {
  server = await startTestPostgres(PORT);
  loadgen = await createDirectHost("loadgen", "root");
  verifier = postgresVerifier.create({
    host: "127.0.0.1",
    port: PORT,
    params: { ...server.pg.params, table: TABLE },
    fields,
  });
});

afterAll(async () => {
  for (const p of procs) p.kill();
  await verifier?.close().catch(() => undefined);
  await loadgen?.cleanup();
  await server?.cleanup();
});

/** Run pg-copy in a child process for `ms`, then stop it; returns the final report and the progress lines. */
async function runFor(
  config: Record<string, unknown>,
  ms: number,
  table = TABLE,
  replayFile?: string,
  until?: (p: GeneratorProgressLine) => boolean,
): Promise<{ final: GeneratorFinal; progress: GeneratorProgressLine[]; goAt: number }> {
  // held after "ready" until go() (clockSync), so that the load starts no earlier than `goAt` (epoch ms)
  const proc = startGeneratorProcess(loadgen!.spawn.bind(loadgen), {
    name: "pg-copy",
    config,
    ctx: {
      target: {
        host: server!.pg.data.host,
        port: server!.pg.data.port,
        params: { ...server!.pg.params, table },
      },
      fields,
      genId: 0,
      replayFile,
    },
    clockSync: true,
  });
  procs.push(proc);
  await proc.ready;
  const goAt = Date.now();
  proc.go();
  const progress: GeneratorProgressLine[] = [];
  proc.on("progress", (p: GeneratorProgressLine) => progress.push(p));
  // wait for the first progress line (node + tsx startup), then run for `ms`
  const started = Date.now();
  while (progress.length === 0 && Date.now() - started < 30_000 && proc.child.exitCode === null)
    await sleep(20);
  // a loop that stops by itself ends the wait, and so does the evidence `until` waits for (a progress line)
  const enough = until
    ? new Promise<void>((resolve) =>
        proc.on("progress", (p: GeneratorProgressLine) => {
          if (until(p)) resolve();
        }),
      )
    : new Promise<void>(() => undefined);
  await Promise.race([sleep(ms), proc.done.catch(() => undefined), enough]);
  const final = await proc.stop();
  return { final, progress, goAt };
}

describe("pg-copy generator", () => {
  it("validates its config strictly, with defaults", () => {
    expect(pgCopySchema.parse({})).toEqual({ batch: 8000, connections: 1, rate: "max", seed: 42 });
    expect(() => pgCopySchema.parse({ batchsize: 10 })).toThrow();
    expect(() => pgCopySchema.parse({ rate: 0 })).toThrow();
    expect(() => pgCopySchema.parse({ rate: "fast" })).toThrow();
    expect(() => pgCopySchema.parse({ batch: 1.5 })).toThrow();
    expect(generators["pg-copy"]).toBe(pgCopy);
  });

  it("at rate max, every accepted row is stored, once, with contiguous seqs", async () => {
    await verifier!.prepare();
    const { final, progress } = await runFor({ batch: 8000, rate: "max" }, 3000);
    expect(final.errors).toEqual([]);
    expect(final.accepted).toBeGreaterThan(8000);
    expect(final.rejected).toBe(0);
    expect(final.sent).toBe(final.accepted);
    expect(final.requests).toBe(final.sent / 8000);
    expect(final.bytes).toBeGreaterThan(final.sent * 200);
    expect(final.latencyMs.p50).toBeGreaterThan(0);
    expect(final.latencyMs.max).toBeGreaterThanOrEqual(final.latencyMs.p99);
    // progress every 250 ms (a busy machine delays timers: a generous bound), monotonic
    expect(progress.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]!.t - progress[i - 1]!.t).toBeLessThan(1500);
      expect(progress[i]!.accepted).toBeGreaterThanOrEqual(progress[i - 1]!.accepted);
    }
    const s = await verifier!.sample({ full: true }); // a live sample is an estimate (plugins/sinks/postgres/verifier.ts)
    expect(s.stored).toBe(final.accepted);
    const l = await verifier!.ledger([final.sent], [final.rejectedRanges]);
    expect(l).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, missingRanges: [] });
    console.log(
      `pg-copy max: ${final.accepted} rows in ~3 s, p50 ${final.latencyMs.p50.toFixed(1)} ms, p99 ${final.latencyMs.p99.toFixed(1)} ms`,
    );
  });

  it("holds a fixed rate of 20000 events/s open loop: never ahead of its schedule, and a shortfall shows as latency from the due time, not as a quietly lower rate", async () => {
    await verifier!.prepare();
    const { final, progress, goAt } = await runFor({ batch: 1000, rate: 20000, connections: 2 }, 3000);
    expect(final.errors).toEqual([]);
    // The schedule (harness/generators/loop.ts): batch k is due at t0 + k·batch/R, so by time T at most
    // (T − t0)·R + batch events were sent. t0, the loop's start, lies after go() (goAt; the child's clock is this
    // machine's, 1 ms of slack) and at or before the first progress line with something sent.
    const a = progress.find((p) => p.sent > 0)!;
    const b = progress.at(-1)!;
    const ceiling = (20000 * (b.t - (goAt - 1))) / 1000 + 1000;
    // how far the sends fell behind the schedule at the last line, at least (t0 ≤ a.t)
    const behindMs = Math.max(0, (20000 * (b.t - a.t)) / 1000 - b.sent) / 20;
    console.log(
      `pg-copy fixed: sent ${b.sent} by ${b.t - a.t} ms after the first send (schedule ceiling ${ceiling.toFixed(0)}), ${behindMs.toFixed(0)} ms behind schedule, latency max ${final.latencyMs.max.toFixed(0)} ms`,
    );
    // a ceiling whatever the machine's load: a busy machine can only slow the schedule down
    expect(b.sent).toBeLessThanOrEqual(ceiling);
    expect(b.sent).toBeGreaterThan(0);
    // a machine too busy to keep the rate must show it (coordinated-omission correction): the batch sent last was due
    // `behindMs` earlier, so the latency measured from due times covers most of it (one batch interval and one
    // progress interval of slack)
    if (behindMs > 300) expect(final.latencyMs.max).toBeGreaterThanOrEqual(behindMs - 300);
    const s = await verifier!.sample({ full: true }); // a live sample is an estimate (plugins/sinks/postgres/verifier.ts)
    expect(s.stored).toBe(final.accepted);
    expect(final.accepted).toBe(final.sent);
    const l = await verifier!.ledger([final.sent], [final.rejectedRanges]);
    expect(l).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
  });

  it("counts failed COPYs as rejected ranges and stops after 10 consecutive failures", async () => {
    const { final } = await runFor({ batch: 100, rate: "max" }, 30_000, "no_such_table"); // ends by itself
    expect(final.accepted).toBe(0);
    expect(final.rejected).toBe(final.sent);
    expect(final.sent).toBe(1000);
    expect(final.rejectedRanges).toEqual([[0, 999]]);
    expect(final.errors.join("\n")).toMatch(/no_such_table.*does not exist/);
    expect(final.errors.at(-1)).toMatch(/10 consecutive failures/);
  });

  it("replays a log file's lines into the last string field", async () => {
    await verifier!.prepare();
    const file = join(loadgen!.dataDir, "app.log");
    const lines = Array.from(
      { length: 1234 },
      (_, i) => `2024-11-07T00:00:${String(i % 60).padStart(2, "0")}.000 line ${i}\tx\\y`,
    );
    await writeFile(file, lines.join("\n") + "\n");
    // until more than the file's 1234 lines were accepted (it wraps around), within a generous bound
    const { final } = await runFor(
      { batch: 500, connections: 2, rate: "max" },
      60_000,
      TABLE,
      file,
      (p) => p.accepted > 1500,
    );
    expect(final.errors).toEqual([]);
    expect(final.accepted).toBeGreaterThan(1234);
    const c = new pg.Client({ host: "127.0.0.1", port: PORT, user: "postgres" });
    await c.connect();
    try {
      const r = await c.query<{ seq: string; msg: string }>(
        `SELECT seq, msg FROM ${TABLE} WHERE seq IN (0, 1, 1233, 1234, 1500) ORDER BY seq`,
      );
      expect(r.rows.map((x) => [Number(x.seq), x.msg])).toEqual(
        [0, 1, 1233, 1234, 1500].map((q) => [q, lines[q % 1234]]),
      );
    } finally {
      await c.end();
    }
  });

  it("runs as `node --import tsx harness/generators/child.ts` with the spec in the environment, stops when stdin closes, and reports its replay file's index", async () => {
    await verifier!.prepare();
    // 3,000 lines of ~110 bytes: the 5,000 rows wrap round it, so the index knows its line count
    const replayFile = join(loadgen!.dataDir, "child.log");
    await writeFile(
      replayFile,
      Array.from({ length: 3000 }, (_, i) => `line ${i} ${"y".repeat(100)}`).join("\n") + "\n",
    );
    const spec = {
      name: "pg-copy",
      config: { batch: 1000, rate: 5000 },
      ctx: {
        target: { host: "127.0.0.1", port: PORT, params: { ...server!.pg.params, table: TABLE } },
        fields,
        genId: 4,
        replayFile,
      },
    };
    const child = spawn(process.execPath, ["--import", "tsx", "harness/generators/child.ts"], {
      cwd: fileURLToPath(new URL("../../..", import.meta.url)),
      env: { ...process.env, INGESTBENCH_GENERATOR_SPEC: JSON.stringify(spec) },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const proc = new GeneratorProcess(child);
    procs.push(proc);
    const started = Date.now();
    // until 5000 rows were sent (a second at 5000/s on a quiet machine), within a generous bound
    while ((proc.last?.sent ?? 0) < 5000 && Date.now() - started < 60_000 && child.exitCode === null)
      await sleep(20);
    child.stdin!.end(); // no signal: closing stdin alone stops it
    const final = await proc.done;
    expect(final.genId).toBe(4);
    expect(final.accepted).toBe(final.sent);
    expect(final.sent).toBeGreaterThanOrEqual(5000);
    const l = await verifier!.ledger([0, 0, 0, 0, final.sent], [[], [], [], [], final.rejectedRanges]);
    expect(l).toMatchObject({ stored: final.sent, lost: 0, duplicated: 0, unexpected: 0 });
    expect(final.replayIndex).toMatchObject({
      size: (await stat(replayFile)).size,
      lines: 3000,
      lineCount: 3000,
    });
    // line L starts at byte 108 L and a byte more for each line before it past 9, 99 and 999 (longer numbers)
    const mark = new ReplayIndex(final.replayIndex!).before(1000);
    expect(mark.line).toBeGreaterThan(0);
    expect(mark.byte).toBe(
      mark.line * 108 +
        Math.max(0, mark.line - 10) +
        Math.max(0, mark.line - 100) +
        Math.max(0, mark.line - 1000),
    );
  });

  it("parses JSON lines split across chunks and ignores stray output", async () => {
    const fake = Object.assign(new EventEmitter(), {
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      stdin: new PassThrough(),
      exitCode: null,
      signalCode: null,
      kill: () => true,
    }) as unknown as ChildProcess;
    const proc = new GeneratorProcess(fake);
    const seen: GeneratorProgressLine[] = [];
    proc.progress$.on("progress", (p: GeneratorProgressLine) => seen.push(p));
    const p1 = JSON.stringify({
      type: "progress",
      sent: 10,
      accepted: 5,
      rejected: 0,
      bytes: 100,
      requests: 1,
      t: 1,
    });
    const fin = JSON.stringify({
      type: "final",
      sent: 10,
      accepted: 10,
      rejected: 0,
      bytes: 100,
      requests: 1,
      genId: 0,
      rejectedRanges: [],
      latencyMs: { mean: 1, p50: 1, p99: 1, max: 1 },
      errors: [],
    });
    fake.stdout!.emit("data", Buffer.from(p1.slice(0, 7)));
    fake.stdout!.emit("data", Buffer.from(p1.slice(7) + "\nnot json\n" + fin.slice(0, 20)));
    expect(seen).toEqual([{ sent: 10, accepted: 5, rejected: 0, bytes: 100, requests: 1, t: 1 }]);
    fake.stdout!.emit("data", Buffer.from(fin.slice(20))); // last line without a newline
    fake.stdout!.emit("end"); // as a real child's stdout ends before its "close"
    fake.emit("close", 0, null);
    await expect(proc.done).resolves.toMatchObject({ accepted: 10, genId: 0 });
  });

  it("reports a bad config as an error from the child", async () => {
    const proc = startGeneratorProcess(loadgen!.spawn.bind(loadgen), {
      name: "pg-copy",
      config: { batch: 10, nope: 1 },
      ctx: { target: { host: "127.0.0.1", port: PORT, params: {} }, fields, genId: 0 },
    });
    procs.push(proc);
    await expect(proc.done).rejects.toThrow(/generator\.pg-copy.*nope|Unrecognized key/);
  });
});
