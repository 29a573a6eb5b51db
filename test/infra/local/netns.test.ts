/**
 * Real network namespaces, veth pairs, a bridge and tc. Traffic only flows between namespaces created here.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { ownedRunId } from "../../helpers/owned-run-id.ts";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import {
  applyShaping,
  createTopology,
  listNetns,
  NetnsInterfaceCounters,
  netnsName,
  readInterfaceCounters,
  readQdiscs,
  removeRunNetns,
  tbfBurstFor,
} from "../../../infra/local/netns.ts";

// These tests need root (cgroups, namespaces, tc): as another user they fail, loudly, rather than skip.
// each id owned by this process (an owner marker), so that another test's `gc` at the same time leaves it alone
const runIds: Array<{ runId: string; release: () => Promise<boolean> }> = [];
afterEach(async () => {
  for (const id of runIds.splice(0)) {
    await removeRunNetns(id.runId);
    await id.release();
  }
});
function newRunId(): string {
  const id = ownedRunId();
  runIds.push(id);
  return id.runId;
}

/** TCP listener: counts bytes until the sender closes (or 90 s pass), prints {bytes, firstMs, lastMs}. */
const RECEIVER = `
const net = require("node:net");
const port = Number(process.argv[1]);
let bytes = 0, first = 0, last = 0;
const server = net.createServer((s) => {
  s.on("data", (d) => { const t = performance.now(); if (!first) first = t; last = t; bytes += d.length; });
  s.on("close", () => { console.log(JSON.stringify({ bytes, firstMs: first, lastMs: last })); process.exit(0); });
});
server.listen(port, "0.0.0.0", () => console.log("listening"));
setTimeout(() => { console.log(JSON.stringify({ bytes, firstMs: first, lastMs: last, timeout: true })); process.exit(0); }, 90000);
`;

/**
 * TCP sender: writes as fast as the socket drains for durationMs, then closes; prints {bytes, ms}: what it wrote and
 * the time from connect until the receiver had it all and closed (performance.now(), ms).
 */
const SENDER = `
const net = require("node:net");
const [host, port, durationMs] = process.argv.slice(1);
const chunk = Buffer.alloc(64 * 1024, 120);
let bytes = 0, start = 0;
const s = net.connect(Number(port), host, () => {
  start = performance.now();
  const end = Date.now() + Number(durationMs);
  const pump = () => { while (Date.now() < end) { bytes += chunk.length; if (!s.write(chunk)) return s.once("drain", pump); } s.end(); };
  pump();
});
s.on("close", () => { console.log(JSON.stringify({ bytes, ms: performance.now() - start })); process.exit(0); });
setTimeout(() => process.exit(2), Number(durationMs) + 60000);
`;

/** One bounded transfer loadgen → sink (receiver in the sink's namespace); what both ends saw. */
async function transfer(loadgenNs: string, sinkNs: string, address: string, durationMs: number) {
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const received = await startReceiver(sinkNs, port);
  const sent = await execa(
    "ip",
    ["netns", "exec", loadgenNs, "node", "-e", SENDER, address, String(port), String(durationMs)],
    { timeout: 120_000 },
  );
  const res = await received.result;
  return {
    ...res,
    sender: JSON.parse(sent.stdout.split("\n").filter(Boolean).pop()!) as { bytes: number; ms: number },
  };
}

/** Start the receiver in `ns`, wait until it listens; returns a promise of its JSON result. */
async function startReceiver(ns: string, port: number) {
  const proc = execa("ip", ["netns", "exec", ns, "node", "-e", RECEIVER, String(port)], { timeout: 120_000 });
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("listening")) resolve();
    });
    proc.catch(reject);
  });
  // Wrapped in an object: an async function returning a promise would wait for it.
  return {
    result: proc.then(
      (r) =>
        JSON.parse(r.stdout.split("\n").filter(Boolean).pop()!) as {
          bytes: number;
          firstMs: number;
          lastMs: number;
          timeout?: boolean;
        },
    ),
  };
}

describe("netns (real namespaces and tc)", () => {
  it("two namespaces, veth, a 12000 KB/s tbf read back as 12,000,000 B/s; a bounded transfer stays under the cap (+15 %) and reaches 85 % of it or of an unshaped reference measured in the same test", async () => {
    const runId = newRunId();
    const topo = await createTopology(runId, ["loadgen", "sink"]);
    expect(topo.mode).toBe("pair");
    expect(topo.netns).toEqual([`ib-${runId}-loadgen`, `ib-${runId}-sink`]);
    expect(await listNetns()).toEqual(expect.arrayContaining(topo.netns));
    const sink = topo.hosts.sink!;
    const loadgen = topo.hosts.loadgen!;
    expect(sink.interface!.length).toBeLessThanOrEqual(15);
    expect(sink.controlRootInterface.length).toBeLessThanOrEqual(15);

    // A reference transfer before shaping, in the same test: what this machine can push between the namespaces
    // right now (a busy machine pushes less; the shaped transfer is held to the cap and to this, not to a constant).
    const reference = await transfer(loadgen.netns, sink.netns, sink.address, 1000);
    expect(reference.timeout).toBeUndefined();
    expect(reference.bytes).toBe(reference.sender.bytes);
    const referenceRate = reference.sender.bytes / (reference.sender.ms / 1000);

    const shaping = await applyShaping(topo, { sink: { bandwidthBytesPerSec: 12_000 * 1000 } });
    expect(Object.keys(shaping)).toEqual(["sink"]);
    const r = shaping.sink!;
    expect(r.enforced).toBe(true);
    expect(r.applied.tbfRateBytesPerSec).toBe(12_000_000);
    expect(r.applied.ingressTbfRateBytesPerSec).toBe(12_000_000);
    // The kernel stores the bucket in time units: the burst reads back within 0.1 % of what was asked.
    const burst = tbfBurstFor(12_000_000);
    expect(Math.abs(Number(r.applied.tbfBurstBytes) - burst)).toBeLessThan(burst / 1000);
    expect((await readQdiscs(sink.netns, sink.interface!)).kinds).toEqual(["tbf"]);
    expect((await readQdiscs(loadgen.netns, loadgen.interface!)).tbfRateBytesPerSec).toBe(12_000_000);

    // Bounded transfer loadgen → sink over the data plane (~2.5 s). Its rate is bytes over the sender's measured
    // time from connect until the receiver had everything (the close), so a late timer only lowers it.
    const rxBefore = await readInterfaceCounters(sink.netns, sink.interface!);
    const res = await transfer(loadgen.netns, sink.netns, sink.address, 2500);
    const rxAfter = await readInterfaceCounters(sink.netns, sink.interface!);
    const txLoadgen = await readInterfaceCounters(loadgen.netns, loadgen.interface!);
    const seconds = res.sender.ms / 1000;
    const goodput = res.sender.bytes / seconds;
    const wireBytes = rxAfter.rxBytes - rxBefore.rxBytes;
    const wire = wireBytes / seconds;
    console.log(
      `tbf 12,000,000 B/s: goodput ${(goodput / 1e6).toFixed(3)} MB/s, on the wire ${(wire / 1e6).toFixed(3)} MB/s ` +
        `(${res.bytes} B payload, ${wireBytes} B / ${rxAfter.rxPackets - rxBefore.rxPackets} packets on ${sink.interface}) in ${seconds.toFixed(3)} s; ` +
        `unshaped reference ${(referenceRate / 1e6).toFixed(1)} MB/s`,
    );
    expect(res.timeout).toBeUndefined();
    // exact: the receiver got every byte the sender wrote
    expect(res.bytes).toBe(res.sender.bytes);
    // the cap holds (its bucket may add one burst), whatever the machine does
    expect(wireBytes).toBeLessThanOrEqual(12e6 * seconds * 1.15 + burst);
    expect(goodput).toBeLessThan(12e6 * 1.15 + burst / seconds);
    // and binds: at least 85 % of the cap, or of what the machine pushed unshaped just before when that is less
    const reachable = Math.min(12e6, referenceRate);
    expect(goodput).toBeGreaterThan(reachable * 0.85);
    expect(wire).toBeGreaterThan(reachable * 0.85);
    expect(wireBytes).toBeGreaterThanOrEqual(res.bytes);
    expect(txLoadgen.txBytes).toBeGreaterThanOrEqual(wireBytes);
  });

  it("three hosts share a bridge namespace; the harness reaches each host over its control link", async () => {
    const runId = newRunId();
    const topo = await createTopology(runId, ["loadgen", "collector", "sink"]);
    expect(topo.mode).toBe("bridge");
    expect(topo.netns).toContain(`ib-${runId}-net`);
    const { loadgen, sink, collector } = topo.hosts as Record<string, (typeof topo.hosts)[string]>;
    expect(new Set([loadgen!.address, sink!.address, collector!.address]).size).toBe(3);

    const shaping = await applyShaping(topo, { collector: { bandwidthBytesPerSec: 5_000_000 } });
    expect(shaping.collector!.applied).toMatchObject({
      tbfRateBytesPerSec: 5_000_000,
      ingressTbfRateBytesPerSec: 5_000_000,
    });
    expect((await readQdiscs(sink!.netns, sink!.interface!)).tbfRateBytesPerSec).toBeUndefined(); // unshaped

    // loadgen → sink across the bridge
    const port = 40_000 + Math.floor(Math.random() * 10_000);
    let received = await startReceiver(sink!.netns, port);
    await execa(
      "ip",
      ["netns", "exec", loadgen!.netns, "node", "-e", SENDER, sink!.address, String(port), "200"],
      { timeout: 20_000 },
    );
    expect((await received.result).bytes).toBeGreaterThan(0);
    // root namespace (the harness) → collector over the control link
    received = await startReceiver(collector!.netns, port);
    await execa("node", ["-e", SENDER, collector!.controlAddress, String(port), "200"], { timeout: 20_000 });
    expect((await received.result).bytes).toBeGreaterThan(0);

    expect(await removeRunNetns(runId)).toHaveLength(4);
    expect((await listNetns()).filter((n) => n.startsWith(`ib-${runId}-`))).toEqual([]);
    expect(await removeRunNetns(runId)).toEqual([]); // idempotent
    const links = JSON.parse((await execa("ip", ["-j", "link"])).stdout) as Array<{ ifname: string }>;
    expect(links.filter((l) => l.ifname.startsWith(`ib${runId}`))).toEqual([]);
  });

  it("delay and loss use netem, or are reported NOT enforced where the kernel has no netem", async () => {
    const runId = newRunId();
    const topo = await createTopology(runId, ["loadgen", "sink"]);
    const r = (
      await applyShaping(topo, { sink: { bandwidthBytesPerSec: 1_000_000, delayMs: 10, lossPercent: 1 } })
    ).sink!;
    expect(r.applied.tbfRateBytesPerSec).toBe(1_000_000);
    if (r.enforced) {
      expect(r.applied).toMatchObject({ netemDelayMs: 10, netemLossPercent: 1, ingressNetemDelayMs: 10 });
    } else {
      expect(r.applied.netemDelayMs).toBeUndefined();
      expect(r.notes.join("\n")).toMatch(/netem is not available/);
      expect(r.notes.join("\n")).toMatch(/delay, loss NOT in force/);
    }
  });

  it("NetnsInterfaceCounters reads the counters through a task inside the namespace (between two of ip's reads); through ip when no task is inside", async () => {
    // a bare namespace (its lo only), removed by afterEach with the run's other namespaces
    const ns = netnsName(newRunId(), "x");
    await execa("ip", ["netns", "add", ns]);
    await execa("ip", ["-n", ns, "link", "set", "lo", "up"]);
    // two UDP datagrams over its lo (bash's /dev/udp; no ping on every machine)
    await execa("ip", [
      "netns",
      "exec",
      ns,
      "bash",
      "-c",
      "for i in 1 2; do echo x > /dev/udp/127.0.0.1/9; done",
    ]);
    const task = spawn("ip", ["netns", "exec", ns, "sleep", "30"], { stdio: "ignore" });
    const gone = new Promise((resolve) => task.once("exit", resolve));
    try {
      // `ip netns exec` enters the namespace, then execs sleep
      for (let i = 0; i < 200 && readFileSync(`/proc/${task.pid}/comm`, "utf8").trim() !== "sleep"; i++)
        await new Promise((r) => setTimeout(r, 10));
      let viaIp = 0;
      const ip = () => readInterfaceCounters(ns, "lo");
      const c = new NetnsInterfaceCounters(ns, "lo", () => {
        viaIp++;
        return ip();
      });
      // this process is in the root namespace: not a task to read the namespace's counters through
      await c.read([process.pid]);
      expect(viaIp).toBe(1);
      const before = await ip();
      const through = await c.read([process.pid, task.pid!]);
      const after = await ip();
      expect(viaIp).toBe(1);
      expect(through.rxPackets).toBeGreaterThanOrEqual(2); // the datagrams
      for (const k of ["rxBytes", "txBytes", "rxPackets", "txPackets"] as const) {
        expect(through[k]).toBeGreaterThanOrEqual(before[k]);
        expect(through[k]).toBeLessThanOrEqual(after[k]);
      }
      task.kill();
      await gone;
      await c.read([task.pid!]); // the task found last time is gone
      expect(viaIp).toBe(2);
    } finally {
      task.kill();
    }
  });

  it("a second run picks a different address block", async () => {
    const a = await createTopology(newRunId(), ["loadgen", "sink"]);
    const b = await createTopology(newRunId(), ["loadgen", "sink"]);
    expect(a.block).not.toBe(b.block);
  });
});
