// Fault steps through the real runner on the local platform: scenarios/collector-kill-restart.yaml and
// scenarios/collector-stop-cont.yaml on local-pipeline (syslog generator → syslog-ng 3.38 → PostgreSQL, three
// network namespaces, each host in its own cgroup). The steps come from the scenario files; the test only reads the
// final table (before the ledger) to check that the ledger, and the fault it charges, name exactly the absent seqs.
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../harness/results/types.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import {
  expectKillRestartChargesEveryMissingRange,
  expectLedgerNamesExactlyTheAbsentSeqs,
  readStoredSeqs,
  type SinkInfo,
} from "../helpers/pipeline-ledger.ts";

const STACK = "local-pipeline";

/** The run's timeline entry `i`, which must have run to its end. */
function ran(record: RunRecord, i: number) {
  const e = record.timeline?.[i];
  expect(e, `timeline entry ${i}`).toBeDefined();
  expect(e!.startS).not.toBeNull();
  expect(e!.endS!).toBeGreaterThanOrEqual(e!.startS!);
  return e!;
}

/**
 * One run of scenarios/collector-kill-restart.yaml on local-pipeline, checked: the timeline, the ledger naming exactly
 * the seqs absent from the final table, and (when the kill lost rows) every missing range charged to a fault.
 * @returns the rows the run lost
 */
async function killRestartRun(): Promise<number> {
  const plan = scenarioPlan("collector-kill-restart.yaml");
  let present: Set<number> | undefined;
  // the final table, read after the drain: the restarted collector has flushed what it got
  const run = newBenchRun(STACK, plan, undefined, {
    beforeLedger: async (s: SinkInfo) => {
      present = await readStoredSeqs(s);
    },
  });
  const record = await run.run();
  expect(record.error).toBeNull();
  const kill = ran(record, 0);
  const restart = ran(record, 1);
  expect(kill).toMatchObject({
    action: "kill",
    host: "collector",
    status: "ok",
    exitCode: 0,
    trigger: "at 3s",
    fault: true,
  });
  expect(kill.output).toMatch(/^SIGKILL to \d+ process\(es\) of syslog-ng on collector/);
  expect(restart).toMatchObject({ action: "restart", host: "collector", status: "ok", exitCode: 0 });
  expect(restart.output).toMatch(/^restarted syslog-ng on collector/);
  // the steps fired at their offsets from t0 (timers: not early beyond a millisecond of clock granularity)
  expect(kill.startS!).toBeGreaterThanOrEqual(3 - 0.002);
  expect(restart.startS!).toBeGreaterThanOrEqual(4 - 0.002);

  // the ledger names exactly the absent seqs of the final table
  const lost = expectLedgerNamesExactlyTheAbsentSeqs(record, present!);
  const l = record.ledger!;
  const faults = record.faults!;
  console.log(
    `collector-kill-restart: sent ${l.sent}, stored ${l.stored}, lost ${l.lost}, rejected ${l.rejected}, missing ${JSON.stringify(l.missingRanges)}; timeline ${JSON.stringify(record.timeline!.map((e) => [e.name, e.startS?.toFixed(2), e.endS?.toFixed(2), e.status]))}; faults ${JSON.stringify(faults)}`,
  );
  expect(leftovers(record.runId.slice(-6))).toEqual([]);
  if (lost === 0) {
    expect(faults.every((f) => f.lost === 0 && f.lostRanges.length === 0)).toBe(true);
    return 0;
  }
  // every missing range is charged to one fault, and together they are the ledger's (at most 20 ranges listed);
  // what syslog-ng held when it was killed was sent before the kill ended: the kill is charged
  expectKillRestartChargesEveryMissingRange(record);
  // recovery is measured from the kill: nothing is stored before the restarted collector is up
  const k = faults[0]!;
  expect(k.preMedianRowsPerSec!).toBeGreaterThan(0);
  if (k.recoverySeconds !== null)
    expect(k.recoverySeconds).toBeGreaterThanOrEqual(restart.endS! - kill.startS! - 0.05);
  expect(k.peakLagMs).not.toBeNull();
  return lost;
}

describe("fault steps (real pipeline, local platform)", () => {
  it("collector-kill-restart: the ledger and the kill's cost name exactly the absent seqs; the timeline is recorded", async () => {
    // What the kill loses is what syslog-ng held: the generator's 500-line batches come every 50 ms and syslog-ng
    // commits every 1,000 lines, so a kill that lands just after a commit, before the next batch, finds nothing held
    // (one CI run in several: lost 0, the kill 10 ms after the batch at 3.00 s). Every run's ledger and charges are
    // checked; a run that lost nothing is run once more, and one of the two must have lost rows.
    const first = await killRestartRun();
    const lost = first > 0 ? first : await killRestartRun();
    expect(lost).toBeGreaterThan(0);
  });

  it("collector-stop-cont: a frozen collector loses nothing, its processes were stopped, and the lag peak shows the freeze", async () => {
    const run = newBenchRun(STACK, scenarioPlan("collector-stop-cont.yaml"));
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    expect(record.ledger).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, missingRanges: [] });
    expect(record.ledger!.stored).toBe(record.ledger!.sent);
    const stop = ran(record, 0);
    const script = ran(record, 1);
    const cont = ran(record, 2);
    expect(stop).toMatchObject({ action: "stop", status: "ok", fault: true });
    expect(cont).toMatchObject({ action: "cont", status: "ok", fault: false });
    // the zx script ran while the collector was frozen: every process of the collector host in state T (stopped)
    expect(script).toMatchObject({
      action: "script",
      status: "ok",
      exitCode: 0,
      fault: false,
      name: "collector process states",
    });
    expect(script.output).toMatch(/^collector: \d+ T(, \d+ T)*$/);
    // one fault (the stop); the freeze lasted from the stop to the cont: the lag after it is at least most of that
    expect(record.faults!.map((f) => f.step)).toEqual([0]);
    const f = record.faults![0]!;
    expect(f).toMatchObject({ lost: 0, lostRanges: [], duplicated: 0 });
    expect(f.peakLagMs!).toBeGreaterThan((cont.startS! - stop.endS!) * 1000 * 0.75);
    console.log(
      `collector-stop-cont: sent ${record.ledger!.sent}, stored ${record.ledger!.stored}; timeline ${JSON.stringify(record.timeline!.map((e) => [e.name, e.startS?.toFixed(2), e.endS?.toFixed(2), e.status, e.output]))}; faults ${JSON.stringify(record.faults)}`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
