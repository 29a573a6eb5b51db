// Log MiB/s beside wire MiB/s (issue 31, "the authors' units"; write-up 004 reads MiB/s of its log file): the bytes
// of the log lines themselves, counted by the event source (core/events/source.ts EventSource.logBytes), summed by
// the batch loop (harness/generators/loop.ts), carried on the progress lines of a real child process
// (harness/runner/generator-group.ts), turned into Summary.logBytesPerRow / logMibPerSecond and SeriesPoint.logMibPerSec
// (harness/runner/summary.ts), and printed apart from wire MiB/s (ui/run-line.ts, harness/results/format.ts, the
// compare columns). The real end-to-end replay is test/e2e/log-bytes.test.ts.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { createEventSource } from "../../../core/events/source.ts";
import {
  runSourceBatchLoop,
  type BatchTransport,
  type EncodedBatch,
} from "../../../harness/generators/loop.ts";
import type { HostWindow } from "../../../harness/observers/types.ts";
import { columnContext, stackColumns } from "../../../harness/results/columns.ts";
import { mibText } from "../../../harness/results/format.ts";
import type { Phase, RunRecord, SeriesPoint } from "../../../harness/results/types.ts";
import { GeneratorGroup, logBytesPerRowOf, sumProgress } from "../../../harness/runner/generator-group.ts";
import { computeSummary, logMibPerSec } from "../../../harness/runner/summary.ts";
import { describeRun } from "../../../ui/run-block.ts";
import { runLine, shortRunId } from "../../../ui/run-line.ts";
import { writeRunRecord } from "../../helpers/run-records.ts";
import { fields } from "../generators/run-generator.ts";
import { hostWindow } from "../../helpers/host-window.ts";

const MiB = 2 ** 20;
const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-log-bytes-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// CR LF, a lone LF, UTF-8 of 2 and 3 bytes, an empty line: the line ends are no part of the line
const LINES = ["GET /index.html 200", "réseau coupé — retry", "", "sshd[42]: Accepted publickey"];
const LINE_BYTES = LINES.map((l) => Buffer.byteLength(l, "utf8")); // [19, 24, 0, 28]
const replayFile = path.join(tmp, "four.log");
writeFileSync(replayFile, `${LINES[0]}\r\n${LINES[1]}\n${LINES[2]}\r\n${LINES[3]}\n`);
const event = [
  { name: "ts", type: "timestamp" as const },
  { name: "host", type: "string" as const, size: 16 },
  { name: "msg", type: "string" as const, size: 180 },
];

describe("EventSource.logBytes: the bytes of the log line (the last string field), not of its encoding", () => {
  it("seeded text: the last string field's size per row; no string field: 0", () => {
    const s = createEventSource({ fields: event, seed: 1, genId: 0 });
    expect(s.logBytes(0, 1000)).toBe(180_000);
    const ints = createEventSource({ fields: [{ name: "n", type: "int" }], seed: 1, genId: 0 });
    expect(ints.logBytes(0, 10)).toBe(0);
  });

  it("a replay: each row's line as read, without its line end, looping at the end of the file", async () => {
    const s = createEventSource({ fields: event, seed: 1, genId: 0, replayFile });
    await s.load(0, 10);
    expect(s.logBytes(0, 4)).toBe(19 + 24 + 0 + 28);
    // seqs 4..9 are lines 0, 1, 2, 3, 0, 1
    expect(s.logBytes(4, 6)).toBe(19 + 24 + 0 + 28 + 19 + 24);
    expect(() => s.logBytes(40, 1)).toThrow(RangeError);
    await s.close();
  });
});

describe("the batch loop counts log bytes beside wire bytes", () => {
  it("whole passes of the file give its mean line bytes per row, deliberate repeats counted as in the wire bytes", async () => {
    const source = createEventSource({ fields: event, seed: 1, genId: 0, replayFile });
    const transport: BatchTransport<number, EncodedBatch> = {
      label: "MEM",
      address: "memory:0",
      connect: async () => 1,
      send: async (_c, b) => ({ accepted: b.count }),
      close: async () => undefined,
    };
    // 300 wire bytes a row: far more than any line, as a _bulk action line and tracking fields make it
    const encoder = {
      encode: (from: number, count: number) => ({ from, count, payload: new Uint8Array(300 * count) }),
      stamp: () => undefined,
    };
    const progress: number[] = [];
    const final = await runSourceBatchLoop(
      { batch: 4, connections: 1, rate: "max", requests: 6, duplicateEvery: 3 },
      { signal: new AbortController().signal, onProgress: (p) => progress.push(p.logBytes!), genId: 0 },
      transport,
      source,
      encoder,
    );
    const pass = LINE_BYTES.reduce((a, b) => a + b, 0); // 71
    expect(final).toMatchObject({ sent: 24, repeated: 8, bytes: 32 * 300, logBytes: 8 * pass });
    expect(progress.at(-1)).toBe(8 * pass);
    expect(logBytesPerRowOf(final)).toBeCloseTo(pass / 4, 12);
    expect(final.bytes / (final.sent + final.repeated!)).toBeGreaterThan(logBytesPerRowOf(final)!);
  });
});

describe("the generators' totals and the run's log bytes per row", () => {
  it("sums log bytes over processes; null without them or before any row", () => {
    const a = { sent: 100, accepted: 100, rejected: 0, bytes: 30_000, requests: 1, logBytes: 8_000 };
    const b = {
      sent: 300,
      accepted: 300,
      rejected: 0,
      bytes: 90_000,
      requests: 3,
      repeated: 100,
      logBytes: 42_000,
    };
    const old = { sent: 50, accepted: 50, rejected: 0, bytes: 15_000, requests: 1 };
    const sum = sumProgress([a, b]);
    expect(sum.logBytes).toBe(50_000);
    expect(logBytesPerRowOf(sum)).toBeCloseTo(50_000 / 500, 12); // (100 + 300 + 100 repeated) rows
    expect(sumProgress([old, old]).logBytes).toBeUndefined();
    expect(logBytesPerRowOf(sumProgress([old]))).toBeNull(); // an application under test, an older generator
    expect(logBytesPerRowOf({ ...a, sent: 0, logBytes: 0 })).toBeNull();
    expect(logBytesPerRowOf(undefined)).toBeNull();
  });

  it("GeneratorGroup.logBytesPerRowAt: from a real child process's progress lines, as the harness had seen them by then", async () => {
    // child.ts's protocol: ready, then running totals 100 rows of 80 log bytes, then 200 more rows of 110
    const script = `const w=(o)=>process.stdout.write(JSON.stringify(o)+"\\n");const p=(n,l)=>({type:"progress",sent:n,accepted:n,rejected:0,bytes:n*300,requests:1,repeated:0,logBytes:l,t:Date.now()});
w({type:"ready"});setTimeout(()=>w(p(100,8000)),50);setTimeout(()=>w(p(300,30000)),400);
setTimeout(()=>{w({type:"final",sent:300,accepted:300,rejected:0,bytes:90000,requests:2,repeated:0,logBytes:30000,genId:0,rejectedRanges:[],latencyMs:{mean:0,p50:0,p99:0,max:0},errors:[]});},450);`;
    const group = new GeneratorGroup(
      (c, a, o) => spawn(c, a, o as never),
      1,
      () => ({ name: "x", config: {}, ctx: { target: { host: "", port: 0, params: {} }, fields, genId: 0 } }),
      { command: process.execPath, args: ["-e", script, "--"] },
    );
    const before = performance.timeOrigin + performance.now();
    let between: number | null = null;
    const deadline = Date.now() + 20_000;
    while (!group.finished && Date.now() < deadline) {
      if (between === null && group.progress.sent === 100)
        between = performance.timeOrigin + performance.now();
      await sleep(10);
    }
    await group.stop();
    expect(group.logBytesPerRowAt(before)).toBeNull();
    expect(between).not.toBeNull();
    expect(group.logBytesPerRowAt(between!)).toBeCloseTo(80, 12);
    expect(group.logBytesPerRowAt(Number.POSITIVE_INFINITY)).toBeCloseTo(100, 12);
    expect(logBytesPerRowOf(group.progress)).toBeCloseTo(100, 12);
  }, 30_000);
});

function hw(cpuCores: number): HostWindow {
  const { dtMs: _default, ...w } = hostWindow({ cpuCores });
  return w;
}

const point = (t: number, phase: Phase, stored: number): SeriesPoint => ({
  t,
  elapsedS: t / 1000,
  phase,
  stored,
  countQueryMs: 5,
  rowsPerSec: null,
  mibPerSec: null,
  lagMs: null,
  sent: stored,
  accepted: stored,
  hosts: { sink: hw(0.2) },
});

describe("computeSummary: log MiB/s = rows/s × log bytes per row ÷ 2^20, beside wire MiB/s", () => {
  // 6000 rows over 2.5 s between the warmup's last sample and the measurement's last: 2400 rows/s
  const series = [
    point(1000, "warmup", 1000),
    point(2000, "warmup", 2000),
    point(3500, "measure", 5000),
    point(4500, "measure", 8000),
    point(5000, "drain", 8000),
  ];
  const input = { series, limits: { sink: {} }, sinkHosts: ["sink"], clientHost: "loadgen", machineCores: 2 };

  it("a replay of Apache lines (83.58 bytes a line) sent as 310-byte _bulk rows", () => {
    const s = computeSummary({ ...input, bytesPerRow: 310, logBytesPerRow: 83.5835 });
    expect(s.rowsPerSecond).toBeCloseTo(2400, 9);
    expect(s.logBytesPerRow).toBe(83.5835);
    expect(s.logMibPerSecond).toBeCloseTo((2400 * 83.5835) / MiB, 12);
    expect(s.mibPerSecond).toBeCloseTo((2400 * 310) / MiB, 12);
    expect(s.logMibPerSecond! / s.mibPerSecond!).toBeCloseTo(83.5835 / 310, 12);
  });

  it("counts distinct rows only, as rows/s does (duplicates spread pro rata)", () => {
    const s = computeSummary({ ...input, bytesPerRow: 310, logBytesPerRow: 100, distinctShare: 0.75 });
    expect(s.rowsPerSecond).toBeCloseTo(1800, 9);
    expect(s.logMibPerSecond).toBeCloseTo((1800 * 100) / MiB, 12);
  });

  it("null when not counted (an application under test, an older generator) or no byte passed the harness", () => {
    expect(computeSummary({ ...input, bytesPerRow: 310 })).toMatchObject({
      logBytesPerRow: null,
      logMibPerSecond: null,
    });
    expect(computeSummary({ ...input, bytesPerRow: 310, logBytesPerRow: null }).logMibPerSecond).toBeNull();
    const self = computeSummary({
      ...input,
      bytesPerRow: 0,
      logBytesPerRow: 50,
      bytesUnknown: "made by the collector",
    });
    expect(self).toMatchObject({ logBytesPerRow: null, logMibPerSecond: null, mibPerSecond: null });
  });

  it("a sample's log MiB/s: its rows/s × the log bytes per row sent by then", () => {
    expect(logMibPerSec(2 * MiB, 50)).toBe(100);
    expect(logMibPerSec(null, 50)).toBeNull();
    expect(logMibPerSec(1000, null)).toBeNull();
    expect(logMibPerSec(1000, undefined)).toBeNull();
  });
});

describe("printed: log MiB/s and wire MiB/s said apart", () => {
  const record = (): RunRecord =>
    writeRunRecord(tmp, {
      stack: "local-quarter-core",
      invocation: "2026-12-07T09:17:14.000Z",
      rows: 33598.4,
    });

  it("the run block's headline names both; a result without log bytes names wire MiB/s alone", () => {
    const r = record();
    r.summary!.logMibPerSecond = 2.678;
    expect(describeRun(r)).toMatch(/ {2}33,598 rows\/s, 2\.68 log MiB\/s, \d+\.\d\d wire MiB\/s over /);
    delete r.summary!.logMibPerSecond;
    expect(describeRun(r)).toMatch(/ {2}33,598 rows\/s, \d+\.\d\d wire MiB\/s over /);
    expect(mibText({ mibPerSecond: 7.69, bytesPerRow: 240, logMibPerSecond: null })).toBe("7.69 wire MiB/s");
  });

  it("the run line shows log MiB/s when the whole line fits in 100 columns, else gives it up before any flag", () => {
    const r = record();
    r.summary!.logMibPerSecond = 2.678;
    const line = runLine(r);
    expect(line).toBe(
      `ok  local-quarter-core  33,598 rows/s  2.68 log MiB/s  exact  bound by cpu (sink)  run ${shortRunId(r.runId)}`,
    );
    r.summary!.contention = { contended: true, reasons: [], hosts: {} } as never;
    // a stack name that leaves the line without log MiB/s at 95 columns: with it, 111
    const plain = runLine({ ...r, summary: { ...r.summary!, logMibPerSecond: null } });
    r.stack += "-".repeat(95 - plain.length);
    const long = runLine(r);
    expect(long.length).toBe(95);
    expect(long).not.toContain("log MiB/s");
    expect(long).toContain("contended");
  });

  it("after a file replay (004's case) the run line keeps log MiB/s before the flags' words, never in place of the last …", () => {
    const r = record();
    r.summary!.logMibPerSecond = 2.678;
    r.summary!.contention = { contended: true, reasons: [], hosts: {} } as never;
    r.scenarioConfig = { ...(r.scenarioConfig as object), source: { file: "../shared/logs/Apache_2k.log" } };
    const plain = runLine({ ...r, summary: { ...r.summary!, logMibPerSecond: null } });
    const stack = r.stack;
    // 90 columns without it: 106 with it and "contended", 98 with "…" in its place
    r.stack = stack + "-".repeat(90 - plain.length);
    const kept = runLine(r);
    expect(kept).toBe(
      `ok  ${r.stack}  33,598 rows/s  2.68 log MiB/s  exact  bound by cpu (sink)  …  run ${shortRunId(r.runId)}`,
    );
    // 95 columns without it: even "…" leaves no room (103), so the flags stay whole and log MiB/s goes
    r.stack = stack + "-".repeat(95 - plain.length);
    const dropped = runLine(r);
    expect(dropped.length).toBe(95);
    expect(dropped).not.toContain("log MiB/s");
    expect(dropped).toContain("contended");
  });

  it("compare: both are --wide columns, named apart; the default table has neither", () => {
    const ctx = columnContext([]);
    const wide = stackColumns("terminal", ctx, { wide: true }).map((c) => c.header(ctx));
    expect(wide).toEqual(expect.arrayContaining(["log MiB/s", "wire MiB/s"]));
    expect(wide).not.toContain("MiB/s");
    const plain = stackColumns("terminal", ctx).map((c) => c.key);
    expect(plain).not.toContain("logMibPerSecond");
    expect(plain).not.toContain("mibPerSecond");
    expect(stackColumns("terminal", ctx, { columns: ["log MiB/s"] }).map((c) => c.key)).toEqual([
      "stack",
      "logMibPerSecond",
    ]);
  });
});
