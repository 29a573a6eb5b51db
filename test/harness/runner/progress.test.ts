// The progress display's four modes, driven with synthetic runs and series points into captured streams.
import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RunRecord, SeriesPoint } from "../../../harness/results/types.ts";
import {
  formatSeconds,
  OVERHEAD_ESTIMATE_S,
  Progress,
  resolveMode,
  type ProgressRun,
} from "../../../harness/runner/progress.ts";
import type { QueryProgress } from "../../../harness/runner/query-load.ts";

function capture(isTTY = false): {
  stdout: { write: (s: string) => boolean; text: string };
  stderr: { write: (s: string) => boolean; text: string; isTTY: boolean };
} {
  const mk = () => {
    const o = {
      text: "",
      write: (s: string) => {
        o.text += s;
        return true;
      },
    };
    return o;
  };
  return { stdout: mk(), stderr: Object.assign(mk(), { isTTY }) };
}

const runs: ProgressRun[] = [
  {
    stack: "s1",
    plan: { scenario: "quickstart", cell: "batch=1000", replicate: 1, warmupMs: 1000, durationMs: 2000 },
  },
  {
    stack: "s1",
    plan: { scenario: "quickstart", cell: "batch=8000", replicate: 1, warmupMs: 1000, durationMs: 2000 },
    group: "B",
  },
];

const point = (elapsedS: number, phase: SeriesPoint["phase"], t: number): SeriesPoint => ({
  t,
  elapsedS,
  phase,
  stored: elapsedS * 1000,
  countQueryMs: 2,
  rowsPerSec: 1000,
  mibPerSec: 0.2,
  lagMs: 150,
  sent: 0,
  accepted: 0,
  hosts: {},
});

const record = (runId: string): RunRecord =>
  ({
    runId,
    status: "ok",
    summary: { rowsPerSecond: 1234.5, mibPerSecond: 0.3, logMibPerSecond: 0.1, lagP99Ms: 200 },
    ledger: { lost: 0, duplicated: 0 },
  }) as unknown as RunRecord;

/** Drive a whole two-run invocation through a display on a fake clock (each run takes 8 s of wall time). */
function drive(p: Progress, clock: { t: number }): void {
  p.start(runs);
  for (const [i, id] of ["run-a", "run-b"].entries()) {
    p.cellStart(id, "provisioning local hosts loadgen, sink");
    for (let s = 1; s <= 4; s++) {
      clock.t += 2000;
      p.sample(point(s, s === 1 ? "warmup" : s === 4 ? "drain" : "measure", clock.t), { loadEndS: 3 });
    }
    p.cellEnd(record(id), `run ${id}: ok (description ${i + 1})`);
  }
  p.end(null);
}

describe("progress", () => {
  it("jsonl: every stdout line is one JSON object with documented fields; descriptions go to stderr", () => {
    const io = capture(true);
    const clock = { t: Date.parse("2026-11-29T00:00:00Z") };
    drive(new Progress("jsonl", io, () => clock.t), clock);
    const lines = io.stdout.text.trimEnd().split("\n");
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.map((e) => e.event)).toEqual([
      "start",
      "cell-start",
      "sample",
      "sample",
      "sample",
      "sample",
      "cell-end",
      "cell-start",
      "sample",
      "sample",
      "sample",
      "sample",
      "cell-end",
      "end",
    ]);
    for (const e of events)
      expect(typeof e.time === "string" && !Number.isNaN(Date.parse(e.time))).toBe(true);
    // 2 × (3 s load + the local platform's assumed overhead: 6 s provisioning, 2 s drain, 25 s ledger, 5 s teardown)
    expect(events[0]).toMatchObject({ runs: 2, estimatedSeconds: 82 });
    expect(events[1]).toMatchObject({
      index: 1,
      runs: 2,
      stack: "s1",
      scenario: "quickstart",
      cell: "batch=1000",
      replicate: 1,
      runId: "run-a",
    });
    expect(events[1]).not.toHaveProperty("group");
    expect(events[3]).toMatchObject({
      phase: "measure",
      elapsedS: 2,
      loadEndS: 3,
      stored: 2000,
      rowsPerSec: 1000,
      lagMs: 150,
    });
    expect(typeof events[3]!.remainingSeconds).toBe("number");
    expect(events[6]).toMatchObject({
      index: 1,
      runId: "run-a",
      status: "ok",
      rowsPerSecond: 1234.5,
      mibPerSecond: 0.3,
      logMibPerSecond: 0.1,
      lagP99Ms: 200,
      lost: 0,
      duplicated: 0,
      seconds: 8,
    });
    expect(events[7]).toMatchObject({ index: 2, group: "B", cell: "batch=8000" });
    expect(events[13]).toMatchObject({
      runs: 2,
      done: 2,
      ok: 2,
      failed: 0,
      errored: 0,
      interrupted: null,
      interruptedRuns: 0,
      seconds: 16,
    });
    expect(io.stdout.text).not.toMatch(/description/);
    expect(io.stderr.text).toMatch(/run run-a: ok \(description 1\)\n[\s\S]*run run-b: ok \(description 2\)/);
  });

  it("jsonl: time left uses the overhead measured on the runs done", () => {
    const io = capture();
    const clock = { t: 0 };
    drive(new Progress("jsonl", io, () => clock.t), clock);
    const events = io.stdout.text
      .trimEnd()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as { event: string; remainingSeconds?: number; index?: number; elapsedS?: number },
      );
    // run 1 measured 1 s before its load (first sample at 2 s, 1 s into the load) and 8 − 1 − 3 = 4 s after it;
    // in run 2 at 2 s of 3 s load: 1 s of load + 4 s after it = 5
    expect(
      events.find((e) => e.event === "sample" && e.index === 2 && e.elapsedS === 2)?.remainingSeconds,
    ).toBe(5);
  });

  it("a capacity step: no assumed overhead before one is measured (load only, said so), then the earlier steps' measured overhead", () => {
    const step = [runs[0]!];
    const first = capture();
    const clock = { t: 0 };
    const p1 = new Progress("plain", first, () => clock.t).measuredFrom([], "leave-out");
    p1.start(step);
    // 3 s of load, not 3 + 38 s of a bench run's assumed provisioning, drain, ledger and teardown
    expect(first.stderr.text).toBe(
      "1 run(s) planned, about 3s of load (+ setup, drain, ledger: not measured yet)\n",
    );
    p1.cellStart("run-a");
    clock.t += 2000;
    p1.sample(point(1, "warmup", clock.t), { loadEndS: 3 });
    expect(p1.remainingSeconds()).toBe(2); // what is left of the load, nothing assumed beside it
    clock.t += 6000;
    p1.cellEnd(record("run-a"), "run run-a: ok");
    // the next step starts from what this one measured: 1 s before the load, 8 − 2 + 1 − 3 = 4 s after it
    const second = capture();
    const p2 = new Progress("plain", second, () => clock.t).measuredFrom(p1.overheadMeasured, "leave-out");
    p2.start(step);
    expect(second.stderr.text).toBe(
      `1 run(s) planned, about ${formatSeconds(1 + 3 + p1.overheadMeasured[0]!.after)}\n`,
    );
    expect(p1.overheadMeasured).toHaveLength(1);
  });

  it("quiet: no progress lines at all, only the run descriptions on stdout", () => {
    const io = capture(true);
    const clock = { t: 0 };
    drive(new Progress("quiet", io, () => clock.t), clock);
    expect(io.stderr.text).toBe("");
    expect(io.stdout.text).toBe("run run-a: ok (description 1)\nrun run-b: ok (description 2)\n");
  });

  it("plain --verbose: a line per run start and per 5 s of samples (and drain), on stderr; descriptions on stdout", () => {
    const io = capture(false);
    const clock = { t: 0 };
    drive(new Progress("auto", io, () => clock.t, { verbose: true }), clock);
    const lines = io.stderr.text.trimEnd().split("\n");
    expect(lines[0]).toBe("2 run(s) planned, about 1m22s");
    expect(lines[1]).toBe("[1/2] s1 quickstart batch=1000 r1: provisioning local hosts loadgen, sink");
    expect(lines.filter((l) => l.includes(" drain "))).toHaveLength(2);
    expect(lines.filter((l) => /rows\/s/.test(l)).length).toBeLessThan(8); // not every sample
    expect(lines.some((l) => l.startsWith("[2/2] s1 quickstart batch=8000 r1 B:"))).toBe(true);
    // the drain is shown past the planned load ("3s+1s"), never as more seconds than the load has ("4s/3s")
    expect(lines.filter((l) => l.includes(" drain ")).every((l) => / drain +3s\+1s /.test(l))).toBe(true);
    expect(io.stderr.text).not.toMatch(/4s\/3s/);
    expect(lines.at(-1)).toBe("2/2 run(s) ok in 16s");
    expect(io.stderr.text).not.toContain("\r");
    expect(io.stdout.text).toBe("run run-a: ok (description 1)\nrun run-b: ok (description 2)\n");
  });

  it("plain (the default without --verbose): no line per run start, at most one progress line per 30 s, each within 100 columns", () => {
    const io = capture(false);
    const clock = { t: 0 };
    const p = new Progress("plain", io, () => clock.t);
    p.start(runs);
    for (const id of ["run-a", "run-b"]) {
      p.cellStart(id, "provisioning local hosts loadgen, sink");
      // 40 s of samples a second apart, then the run's end
      for (let s = 1; s <= 40; s++) {
        clock.t += 1000;
        p.sample(point(s, s <= 1 ? "warmup" : "measure", clock.t), { loadEndS: 40 });
      }
      p.cellEnd(record(id), `run ${id}: ok`);
    }
    p.end(null);
    const lines = io.stderr.text.trimEnd().split("\n");
    const progress = lines.filter((l) => l.includes("rows/s"));
    // 80 s of samples: a line at 30 s and at 60 s, none per run start
    expect(progress).toHaveLength(2);
    expect(progress[0]).toBe("[1/2] s1 batch=1000 measure 30s/40s · 1,000 rows/s · lag 150 ms · 1m19s left");
    expect(lines.some((l) => l.includes("provisioning"))).toBe(false);
    expect(lines.every((l) => l.length <= 100)).toBe(true);
    expect(io.stdout.text).toBe("run run-a: ok\nrun run-b: ok\n");
  });

  it("plain --verbose: a long drain sampled every 250 ms gets a line at its start and one per 5 s, in each run", () => {
    const io = capture(false);
    const clock = { t: 0 };
    const p = new Progress("plain", io, () => clock.t, { verbose: true });
    p.start(runs);
    for (const id of ["run-a", "run-b"]) {
      p.cellStart(id);
      clock.t += 3000;
      p.sample(point(3.02, "measure", clock.t), { loadEndS: 3 });
      // 12 s of drain samples 250 ms apart (48 points)
      for (let k = 1; k <= 48; k++) {
        clock.t += 250;
        p.sample(point(3 + k / 4, "drain", clock.t), { loadEndS: 3 });
      }
      p.cellEnd(record(id), `run ${id}: ok`);
    }
    const drains = io.stderr.text.split("\n").filter((l) => l.includes(" drain "));
    // the sample that closes the measurement a moment after the load's end reads 3s/3s, not 3s+0s
    expect(io.stderr.text).toMatch(/ measure +3s\/3s /);
    expect(io.stderr.text).not.toMatch(/ measure +3s\+/);
    // per run: the first drain sample (3s+0s) and then one each 5 s (+5, +10)
    expect(drains.map((l) => / drain +(3s\+\d+)s /.exec(l)?.[1])).toEqual([
      "3s+0",
      "3s+5",
      "3s+10",
      "3s+0",
      "3s+5",
      "3s+10",
    ]);
  });

  describe('the stages after the load (run.ts emits "stage")', () => {
    afterEach(() => vi.useRealTimers());
    /** One run whose load ends at 3 s, then `stages` of the given seconds each, through follow() as a BenchRun emits them. */
    const afterLoad = (mode: "plain" | "live" | "jsonl", stages: Array<[string, number]>) => {
      vi.useFakeTimers({ now: 0 });
      const io = capture(mode === "live");
      const p = new Progress(mode, io, () => Date.now(), { verbose: true });
      const run = new EventEmitter();
      p.follow(run);
      p.start(runs.slice(0, 1));
      p.cellStart("run-a");
      vi.advanceTimersByTime(3000);
      run.emit("tick", point(3, "measure", Date.now()), { loadEndS: 3 });
      for (const [stage, seconds] of stages) {
        run.emit("stage", stage);
        vi.advanceTimersByTime(seconds * 1000);
      }
      p.cellEnd(record("run-a"), "run run-a: ok");
      vi.advanceTimersByTime(20_000); // nothing after the run's end
      p.end(null);
      return io;
    };

    /** A plain display on fake timers following a run emitter, `planned` started and its first run begun. */
    const plainRun = (planned: ProgressRun[]) => {
      vi.useFakeTimers({ now: 1_000_000 });
      const io = capture(false);
      const p = new Progress("plain", io, () => Date.now(), { verbose: true });
      const run = new EventEmitter();
      p.follow(run);
      p.start(planned);
      p.cellStart("run-a");
      return { io, p, run };
    };

    it("plain --verbose: a line every 5 s while one stage lasts, none for a short one, none after the run", () => {
      const io = afterLoad("plain", [
        ["stopping the generators", 1],
        ["waiting for every acknowledged row", 12],
        ["counting the ledger", 3],
      ]);
      const lines = io.stderr.text.split("\n").filter((l) => l.includes(" so far"));
      expect(lines.map((l) => /: (.*) so far/.exec(l)?.[1])).toEqual([
        "waiting for every acknowledged row, 5s",
        "waiting for every acknowledged row, 10s",
      ]);
      expect(lines[0]).toMatch(
        /^\[1\/1\] s1 quickstart batch=1000 r1: waiting for every acknowledged row, 5s so far  /,
      );
    });

    it("plain --verbose: no stage line while drain samples print their own", () => {
      const { io, p, run } = plainRun(runs.slice(0, 1));
      run.emit("stage", "waiting for every acknowledged row");
      for (let k = 1; k <= 48; k++) {
        vi.advanceTimersByTime(250);
        run.emit("tick", point(3 + k / 4, "drain", Date.now()), { loadEndS: 3 });
      }
      p.cellEnd(record("run-a"), "run run-a: ok");
      expect(io.stderr.text).not.toContain(" so far");
      expect(io.stderr.text.split("\n").filter((l) => l.includes(" drain "))).toHaveLength(3);
    });

    it("plain --verbose: a stage's line comes 5 s after the run's last line of any kind, and none after a notice or once the run has ended", () => {
      const { io, p, run } = plainRun(runs);
      run.emit("stage", "waiting for every acknowledged row");
      vi.advanceTimersByTime(2000);
      run.emit("tick", point(3, "drain", Date.now()), { loadEndS: 3 }); // a drain line at 2 s
      vi.advanceTimersByTime(7500);
      // the stage's line 5 s after the drain line (at 7 s: "7s so far"), not at the next multiple of 5 s from the stage's start
      expect(
        io.stderr.text
          .split("\n")
          .filter((l) => l.includes(" so far"))
          .map((l) => /, (\w+) so far/.exec(l)?.[1]),
      ).toEqual(["7s"]);
      p.notice("interrupted (SIGINT): tearing down");
      vi.advanceTimersByTime(20_000);
      expect(io.stderr.text.split("\n").filter((l) => l.includes(" so far"))).toHaveLength(1);
      // the run's own "tearing down" after the notice, however long it lasts: no line either
      run.emit("stage", "tearing down");
      vi.advanceTimersByTime(12_000);
      expect(io.stderr.text.split("\n").filter((l) => l.includes(" so far"))).toHaveLength(1);
      p.cellEnd(record("run-a"), "run run-a: interrupted");
      run.emit("stage", "tearing down"); // late: the run has ended
      vi.advanceTimersByTime(20_000);
      expect(io.stderr.text.split("\n").filter((l) => l.includes(" so far"))).toHaveLength(1);
      p.end("SIGINT");
    });

    it("the time left counts down after the load, from the after-load estimate to 0", () => {
      const { p, run } = plainRun(runs.slice(0, 1));
      vi.advanceTimersByTime(3000);
      run.emit("tick", point(3, "measure", Date.now()), { loadEndS: 3 });
      run.emit("stage", "waiting for every acknowledged row");
      const atEnd = p.remainingSeconds();
      vi.advanceTimersByTime(10_000);
      expect(p.remainingSeconds()).toBeCloseTo(Math.max(0, atEnd - 10), 6);
      vi.advanceTimersByTime(10 * atEnd * 1000);
      expect(p.remainingSeconds()).toBe(0);
      p.cellEnd(record("run-a"), "run run-a: ok");
    });

    it("jsonl: a stage event each; live: the line names the stage", () => {
      const jsonl = afterLoad("jsonl", [
        ["waiting for every acknowledged row", 1],
        ["counting the ledger", 1],
      ]);
      const stages = jsonl.stdout.text
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((e) => e.event === "stage");
      expect(stages.map((e) => e.stage)).toEqual([
        "waiting for every acknowledged row",
        "counting the ledger",
      ]);
      expect(stages[0]).toMatchObject({
        index: 1,
        stack: "s1",
        scenario: "quickstart",
        cell: "batch=1000",
        replicate: 1,
      });
      expect(typeof stages[0]!.remainingSeconds).toBe("number");
      const live = afterLoad("live", [["counting the ledger", 1]]);
      expect(live.stderr.text).toMatch(/s1 quickstart batch=1000 r1 · counting the ledger · /);
    });
  });

  it("live (auto on a terminal): one line rewritten in place with done/total, rate, lag and time left", () => {
    const io = capture(true);
    const clock = { t: 0 };
    const p = new Progress("auto", io, () => clock.t);
    expect(p.mode).toBe("live");
    drive(p, clock);
    const frames = io.stderr.text.split("\r\x1b[K").filter(Boolean);
    expect(
      frames.some((f) =>
        /^\[1\/2 done, 50 %\] s1 quickstart batch=8000 r1 B · measure 2\/3 s · 1,000 rows\/s · lag 150 ms · 5s left$/.test(
          f,
        ),
      ),
    ).toBe(true);
    // the line is cleared before each description is printed (on stdout), so the terminal shows no torn lines
    expect(io.stdout.text).toBe("run run-a: ok (description 1)\nrun run-b: ok (description 2)\n");
    expect(frames.some((f) => / drain 3\+1 s /.test(f))).toBe(true);
    expect(io.stderr.text.endsWith("2/2 run(s) ok in 16s\n")).toBe(true);
  });

  it("the end line counts ok, failed and errored runs, never 'N/N done' when one errored; jsonl splits them too", () => {
    for (const mode of ["plain", "jsonl"] as const) {
      const io = capture(false);
      const p = new Progress(mode, io, () => 0);
      p.start([...runs, { ...runs[0]!, plan: { ...runs[0]!.plan, replicate: 2 } }]);
      for (const [id, status] of [
        ["run-a", "error"],
        ["run-b", "ok"],
      ] as const) {
        p.cellStart(id);
        p.cellEnd({ ...record(id), status } as RunRecord, `run ${id}: ${status}`);
      }
      p.end(null);
      if (mode === "plain")
        expect(io.stderr.text.trimEnd().split("\n").at(-1)).toBe("1/3 run(s) ok, 1 errored, 1 not run in 0s");
      else
        expect(JSON.parse(io.stdout.text.trimEnd().split("\n").at(-1)!)).toMatchObject({
          runs: 3,
          done: 2,
          ok: 1,
          errored: 1,
          failed: 0,
        });
    }
  });

  it("before any run ended, the estimate is the platform's overhead (OVERHEAD_ESTIMATE_S) plus the load", () => {
    const io = capture(false);
    const p = new Progress("jsonl", io, () => 0);
    const o = OVERHEAD_ESTIMATE_S.docker!;
    p.start([{ ...runs[0]!, platform: "docker" }]);
    expect(JSON.parse(io.stdout.text).estimatedSeconds).toBe(
      Math.round(3 + o.provision + o.drain + o.ledger + o.teardown),
    );
  });

  describe("a query phase after the load (harness/runner/query-load.ts QueryProgress)", () => {
    const q = (over: Partial<QueryProgress>): QueryProgress => ({
      statement: "count",
      cellId: "count@10x5000",
      cellIndex: 2,
      cells: 9,
      done: 12_345,
      total: 50_000,
      errors: 3,
      elapsedS: 10,
      queriesPerSec: 1234.5,
      cellRemainingS: 30.5,
      phaseRemainingS: 250,
      ended: false,
      ...over,
    });
    /** one run whose load ends, then query reports every second of the fake clock (12 s of one cell, then its end) */
    function queryRun(p: Progress, clock: { t: number }): void {
      p.start([runs[0]!]);
      p.cellStart("run-q");
      clock.t += 1000;
      // a fixed workload stored in 1 s of its planned 3: the queries follow, and no load is left to wait for
      p.sample(point(1, "measure", clock.t), { loadEndS: 3 });
      for (let s = 0; s <= 12; s++) {
        p.query(
          q({
            elapsedS: s,
            done: s * 1000,
            queriesPerSec: s === 0 ? null : 1000,
            cellRemainingS: s === 0 ? null : 50 - s,
            phaseRemainingS: 300 - s,
          }),
        );
        clock.t += 1000;
      }
      p.query(
        q({
          elapsedS: 13,
          done: 50_000,
          queriesPerSec: 1000,
          cellRemainingS: 0,
          phaseRemainingS: 200,
          ended: true,
        }),
      );
    }

    it("jsonl: a query event per report with the cell, done/total, queries/s, errors and the time left", () => {
      const io = capture();
      const clock = { t: 10_000 };
      const p = new Progress("jsonl", io, () => clock.t);
      queryRun(p, clock);
      const events = io.stdout.text
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((e) => e.event === "query");
      expect(events).toHaveLength(14);
      expect(events[5]).toMatchObject({
        index: 1,
        stack: "s1",
        scenario: "quickstart",
        cell: "batch=1000",
        replicate: 1,
        statement: "count",
        cellId: "count@10x5000",
        cellIndex: 2,
        cells: 9,
        done: 5000,
        total: 50_000,
        errors: 3,
        elapsedS: 5,
        queriesPerSec: 1000,
        cellRemainingS: 45,
        phaseRemainingS: 295,
        ended: false,
      });
      expect(events[5]).not.toHaveProperty("pass");
      // the run's time left: the phase's own estimate plus what follows the load (drain, ledger, teardown: 2 + 25 + 5)
      expect(events[5]!.remainingSeconds).toBe(295 + 32);
      expect(events.at(-1)).toMatchObject({ ended: true, done: 50_000, remainingSeconds: 200 + 32 });
    });

    it("plain --verbose: a line every 5 s and one when the cell ends, naming the cell, its counts and the time left", () => {
      const io = capture(false);
      const clock = { t: 10_000 };
      queryRun(new Progress("plain", io, () => clock.t, { verbose: true }), clock);
      const lines = io.stderr.text
        .trimEnd()
        .split("\n")
        .filter((l) => l.includes(" query "));
      expect(lines).toEqual([
        "[1/1] s1 quickstart batch=1000 r1 query   count@10x5000 [2/9]  0/50,000 queries  – queries/s  3 errors  cell – left  5m32s left",
        "[1/1] s1 quickstart batch=1000 r1 query   count@10x5000 [2/9]  5,000/50,000 queries  1,000 queries/s  3 errors  cell 45s left  5m27s left",
        "[1/1] s1 quickstart batch=1000 r1 query   count@10x5000 [2/9]  10,000/50,000 queries  1,000 queries/s  3 errors  cell 40s left  5m22s left",
        "[1/1] s1 quickstart batch=1000 r1 query   count@10x5000 [2/9]  50,000/50,000 queries  1,000 queries/s  3 errors  cell done  3m52s left",
      ]);
    });

    it("live: the run's line names the statement's cell and pass (during the ingest), with no phase estimate then", () => {
      const io = capture(true);
      const p = new Progress("live", io, () => 0);
      p.start([runs[0]!]);
      p.cellStart("run-q");
      p.query(q({ pass: 2, errors: 1, phaseRemainingS: null }));
      const frames = io.stderr.text.split("\r\x1b[K").filter(Boolean);
      expect(frames.at(-1)).toBe(
        "[0/1 done, 0 %] s1 quickstart batch=1000 r1 · query count@10x5000 [2/9, pass 2] 12,345/50,000 queries · 1,235 queries/s · 1 error · cell 31s left · 41s left",
      );
    });

    it("follow: a run's tick and query events reach the display", () => {
      const io = capture();
      const p = new Progress("jsonl", io, () => 10_000);
      p.start([runs[0]!]);
      p.cellStart("run-f");
      const run = new EventEmitter();
      p.follow(run);
      run.emit("tick", point(1, "measure", 10_000), { loadEndS: 3 });
      run.emit("query", q({}));
      expect(
        io.stdout.text
          .trimEnd()
          .split("\n")
          .map((l) => (JSON.parse(l) as { event: string }).event),
      ).toEqual(["start", "cell-start", "sample", "query"]);
    });

    it("the overhead measured after a run's load leaves its query phase out", () => {
      const io = capture();
      const clock = { t: 1000 };
      const p = new Progress("jsonl", io, () => clock.t);
      p.start(runs);
      p.cellStart("run-a");
      p.sample(point(0, "warmup", clock.t), { loadEndS: 3 });
      clock.t += 3000;
      p.sample(point(3, "measure", clock.t), { loadEndS: 3 });
      p.query(q({ elapsedS: 0 }));
      clock.t += 100_000; // a 100 s query phase
      p.query(q({ elapsedS: 100, ended: true, phaseRemainingS: 0 }));
      clock.t += 4000; // then 4 s of ledger and teardown
      p.cellEnd(record("run-a"), "run run-a: ok");
      p.cellStart("run-b");
      const start = io.stdout.text
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as { event: string; remainingSeconds?: number });
      p.sample(point(0, "warmup", clock.t), { loadEndS: 3 });
      const s = JSON.parse(io.stdout.text.trimEnd().split("\n").at(-1)!) as { remainingSeconds: number };
      expect(start.some((e) => e.event === "query")).toBe(true);
      // run b at the start of its load: 3 s of load + 4 s measured after run a's load (its 100 s of queries left out)
      expect(s.remainingSeconds).toBe(7);
    });
  });

  it("runEnded: the run's line and each flag's note once by default; with verbose the run block (ui/run-block.ts)", () => {
    const rec = (runId: string): RunRecord =>
      ({
        runId,
        status: "ok",
        stack: "s1",
        scenario: "quickstart",
        cell: "batch=1000",
        replicate: 1,
        limits: { sink: { enforced: "partial", partial: ["disk write caps"], notes: [], applied: {} } },
        summary: {
          rowsPerSecond: 1234.5,
          mibPerSecond: 0.3,
          bytesPerRow: 240,
          measuredSeconds: 30,
          sinkCores: 0.2,
          throttledShare: null,
          sinkNetworkMbitPerSecond: 5,
          lagP99Ms: null,
          bottleneck: {
            resource: "client",
            host: "loadgen",
            score: 0.1,
            evidence: "closed loop",
            candidates: [],
          },
        },
        ledger: {
          sent: 10,
          stored: 10,
          distinct: 10,
          lost: 0,
          duplicated: 0,
          rejected: 0,
          missingRanges: [],
        },
        checks: [],
      }) as unknown as RunRecord;
    const plain = capture(false);
    const p = new Progress("plain", plain, () => 0);
    p.start(runs);
    for (const id of ["20261205T091714Z-aee9c2", "20261205T091800Z-477040"]) {
      p.cellStart(id);
      p.runEnded(rec(id), "results");
    }
    expect(plain.stdout.text.trimEnd().split("\n")).toEqual([
      "ok  s1 batch=1000  1,235 rows/s  exact  bound by client  partial caps  run aee9c2",
      "  partial caps: some limits can't be set here (cgroup v1 can't slow buffered disk writes)",
      "  (a run in full: ingestbench show <run>; or bench --verbose)",
      "ok  s1 batch=1000  1,235 rows/s  exact  bound by client  partial caps  run 477040",
    ]);
    const verbose = capture(false);
    const v = new Progress("plain", verbose, () => 0, { verbose: true });
    v.start(runs.slice(0, 1));
    v.cellStart("20261205T091714Z-aee9c2");
    v.runEnded(rec("20261205T091714Z-aee9c2"), "results");
    const block = verbose.stdout.text.split("\n");
    expect(block[0]).toBe(
      "run 20261205T091714Z-aee9c2: ok  → results/s1/quickstart/20261205T091714Z-aee9c2/",
    );
    expect(block).toContain("  !! limits partially enforced on sink: disk write caps");
    expect(block).toContain("  ledger: sent 10, stored 10, distinct 10, lost 0, duplicated 0, rejected 0");
  });

  it("resolves modes and formats durations", () => {
    expect(resolveMode("auto", { isTTY: true })).toBe("live");
    expect(resolveMode(undefined, {})).toBe("plain");
    expect(() => resolveMode("loud" as "live", {})).toThrow(/progress mode must be one of/);
    expect([formatSeconds(45), formatSeconds(250), formatSeconds(3725)]).toEqual(["45s", "4m10s", "1h02m"]);
  });
});
