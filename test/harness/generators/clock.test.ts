// The loadgen clock offset (harness/generators/clock.ts): the NTP-style estimate and its bound from known exchanges,
// then a real generator child (http-json, harness/generators/child.ts) held by clockSync: it answers pings before it
// sends anything, starts on go, and the offset it gives on this machine agrees with this process's own clocks within
// the bound. Last, the backlog lower bound of GeneratorGroup from a real child process's progress lines.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import {
  bestOffset,
  estimateOffset,
  measureHostClock,
  sinkCorrection,
} from "../../../harness/generators/clock.ts";
import { startGeneratorProcess } from "../../../harness/generators/process.ts";
import { GeneratorGroup } from "../../../harness/runner/generator-group.ts";
import { fields } from "./run-generator.ts";
import { ownClockSkewMs } from "../../helpers/own-skew.ts";

describe("clock offset (NTP-style exchange)", () => {
  it("bounds the offset by the round trip: a child 1000 ms ahead, 4 ms each way, reads 1000 ± 4.5 ms", () => {
    // harness sends at 0, child (ahead by 1000) receives at 1004 and replies at 1004, harness receives at 8
    const o = estimateOffset([{ t0: 0, t1: 1004, t2: 1004, t3: 8 }]);
    expect(o.roundTripMs).toBe(8);
    expect(o.offsetMs).toBeCloseTo(1000.5, 9); // RFC 5905's ((t1 − t0) + (t2 − t3)) / 2 = 1000, + half the 1 ms resolution
    expect(o.boundMs).toBeCloseTo(4.5, 9);
    expect(Math.abs(1000 - o.offsetMs)).toBeLessThanOrEqual(o.boundMs);
  });

  it("intersects the exchanges (asymmetric delays tighten it) and falls back to the shortest round trip when they disagree", () => {
    // true offset −250: one exchange slow out, one slow back
    const o = estimateOffset([
      { t0: 0, t1: -240, t2: -240, t3: 12 },
      { t0: 100, t1: -148, t2: -148, t3: 110 },
    ]);
    expect(o.exchanges).toBe(2);
    expect(o.offsetMs - o.boundMs).toBeLessThanOrEqual(-250);
    expect(o.offsetMs + o.boundMs).toBeGreaterThanOrEqual(-250);
    expect(o.boundMs).toBeLessThan(estimateOffset([{ t0: 0, t1: -240, t2: -240, t3: 12 }]).boundMs);
    // a clock step between exchanges: disjoint intervals, the tighter exchange alone
    const stepped = estimateOffset([
      { t0: 0, t1: 10, t2: 10, t3: 2 },
      { t0: 10, t1: 5020, t2: 5020, t3: 20 },
    ]);
    expect(stepped).toMatchObject({ roundTripMs: 2, offsetMs: 9.5, boundMs: 1.5 });
    expect(() => estimateOffset([])).toThrow(RangeError);
    expect(() => estimateOffset([{ t0: 5, t1: 0, t2: 0, t3: 4 }])).toThrow(/backwards/);
    expect(bestOffset([{ measured: false, offsetMs: 0, reason: "x" }, o])).toBe(o);
    expect(bestOffset([{ measured: false, offsetMs: 0, reason: "x" }])).toMatchObject({
      measured: false,
      reason: "x",
    });
  });

  it("a real generator child held by clockSync answers pings before any load, starts on go; the offset holds on this machine", async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      req.on("end", () => res.writeHead(200).end());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const proc = startGeneratorProcess((c, a, o) => spawn(c, a, o as never), {
      name: "http-json",
      config: { batch: 10, rate: 200 },
      clockSync: true,
      ctx: { target: { host: "127.0.0.1", port, params: { path: "/in" } }, fields, genId: 0 },
    });
    try {
      await proc.ready;
      const clock = await proc.syncClock();
      // held: nothing sent while the exchange ran (plus a margin under which an unheld child would have sent)
      await sleep(300);
      expect(requests).toBe(0);
      if (!clock.measured) throw new Error(`not measured: ${clock.reason}`);
      expect(clock.exchanges).toBe(8);
      // one machine, one system clock: the child's Date.now() minus our performance clock is our own Date.now() minus it
      const own = ownClockSkewMs();
      expect(Math.abs(clock.offsetMs - own)).toBeLessThanOrEqual(clock.boundMs + 1);
      expect(clock.boundMs).toBeLessThan(1000); // a generous ceiling: the bound is half a pipe round trip
      console.log(
        `clock sync with a local generator child: offset ${clock.offsetMs.toFixed(3)} ± ${clock.boundMs.toFixed(3)} ms (own skew ${own.toFixed(3)} ms), round trip ${clock.roundTripMs.toFixed(3)} ms`,
      );
      proc.go();
      const deadline = Date.now() + 30_000;
      while (requests === 0 && Date.now() < deadline) await sleep(20);
      expect(requests).toBeGreaterThan(0);
    } finally {
      await proc.stop().catch(() => undefined);
      await new Promise((r) => server.close(r));
    }
  }, 60_000);
});

describe("backlog behind the newest row (GeneratorGroup.backlog)", () => {
  it("is a lower bound from the acknowledgements seen: rows acknowledged − stored, aged from the first line beyond stored", async () => {
    // a real child process speaking child.ts's protocol: ready, then acknowledged totals 100, 200, 300 a moment apart
    const script = `const w=(o)=>process.stdout.write(JSON.stringify(o)+"\\n");const p=(a)=>({type:"progress",sent:a,accepted:a,rejected:0,bytes:a,requests:1,repeated:0,t:Date.now()});
w({type:"ready"});setTimeout(()=>w(p(100)),50);setTimeout(()=>w(p(200)),300);setTimeout(()=>w(p(300)),550);
setTimeout(()=>{w({type:"final",sent:300,accepted:300,rejected:0,bytes:300,requests:3,repeated:0,genId:0,rejectedRanges:[],latencyMs:{mean:0,p50:0,p99:0,max:0},errors:[]});},600);`;
    const group = new GeneratorGroup(
      (c, a, o) => spawn(c, a, o as never),
      1,
      () => ({ name: "x", config: {}, ctx: { target: { host: "", port: 0, params: {} }, fields, genId: 0 } }),
      { command: process.execPath, args: ["-e", script, "--"] },
    );
    const before = performance.timeOrigin + performance.now();
    const deadline = Date.now() + 20_000;
    while (!group.finished && Date.now() < deadline) await sleep(20);
    await group.stop();
    const at = performance.timeOrigin + performance.now();
    expect(group.backlog(300, at)).toBeNull(); // everything acknowledged is stored
    expect(group.backlog(0, before)).toBeNull(); // nothing had been acknowledged yet
    const b = group.backlog(150, at)!;
    expect(b.rows).toBe(150);
    // the first line beyond 150 is the 200 one (~300 ms in), at least ~250 ms before the 300 one's last line
    const all = group.backlog(0, at)!;
    expect(all.rows).toBe(300);
    expect(all.ageMs).toBeGreaterThan(b.ageMs);
    expect(group.backlog(250, at)!.ageMs).toBeLessThan(b.ageMs);
  }, 30_000);
});

describe("a host's clock through its shell (measureHostClock: real sh and GNU date)", () => {
  const shell = (loop: string) => () => spawn("sh", ["-c", loop], { stdio: ["pipe", "pipe", "ignore"] });

  it("this machine's own shell: the offset is this process's own wall-minus-harness skew within its bound", async () => {
    const o = await measureHostClock((c, a) => spawn(c, a, { stdio: ["pipe", "pipe", "ignore"] }), 6);
    expect(o.measured).toBe(true);
    if (!o.measured) return;
    expect(o.exchanges).toBe(6);
    expect(Math.abs(o.offsetMs - ownClockSkewMs())).toBeLessThanOrEqual(o.boundMs + 1);
    expect(o.method).toMatch(/date \+%s%3N/);
  });

  it("a host 5 s ahead: the offset is 5000 ms within its bound, and the sink-minus-loadgen correction subtracts the loadgen's", async () => {
    const o = await measureHostClock(
      shell("while IFS= read -r _; do echo $(( $(date +%s%3N) + 5000 )); done"),
      6,
    );
    expect(o.measured).toBe(true);
    if (!o.measured) return;
    expect(Math.abs(o.offsetMs - 5000 - ownClockSkewMs())).toBeLessThanOrEqual(o.boundMs + 1);
    const loadgen = {
      measured: true as const,
      offsetMs: 1000,
      boundMs: 2,
      roundTripMs: 1,
      exchanges: 8,
      method: "m",
    };
    expect(sinkCorrection(o, loadgen)).toEqual({ correctionMs: o.offsetMs - 1000, boundMs: o.boundMs + 2 });
    expect(sinkCorrection(o, { measured: false, offsetMs: 0, reason: "r" })).toBeNull();
  });

  it("a date without %N, a shell that exits, a command that cannot start: not measured, with the reason", async () => {
    const busybox = await measureHostClock(shell("while IFS= read -r _; do echo 1700000000%3N; done"), 3);
    expect(busybox).toMatchObject({
      measured: false,
      reason: expect.stringMatching(/not epoch milliseconds \(needs GNU date's %3N\)/),
    });
    const exited = await measureHostClock(shell("exit 0"), 3, 2000);
    expect(exited).toMatchObject({
      measured: false,
      reason: expect.stringMatching(/exited before answering/),
    });
    const missing = await measureHostClock(() => {
      throw new Error("docker: not found on PATH");
    });
    expect(missing).toMatchObject({
      measured: false,
      reason: "cannot start the host's shell: docker: not found on PATH",
    });
  });
});
