import { describe, expect, it } from "vitest";
import { contentionLine } from "../../../ui/run-block.ts";
import type { Contention } from "../../../harness/results/types.ts";

// The README sample's local-quarter-core run (AMD EPYC, 2 cores): both hosts flagged, PSI 19 %, steal 2.2 % (below
// the 5 % that flags), harness 0.02 cores.
const flagged: Contention = {
  contended: true,
  reasons: [
    "loadgen waited 21 ms/s for a CPU while not throttled by its own cap (24 % of its runnable time)",
    "sink waited 35 ms/s for a CPU while not throttled by its own cap (17 % of its runnable time)",
    "CPU pressure (PSI some) 19 % of the time",
  ],
  hosts: {
    loadgen: { runDelayMsPerSec: 21, waitMsPerSec: 21, share: 0.24 },
    sink: { runDelayMsPerSec: 35, waitMsPerSec: 35, share: 0.17 },
  },
  psiCpuSomeShare: 0.19,
  stealShare: 0.022,
  harnessCores: 0.02,
};

describe("contentionLine (vectors from a real run)", () => {
  it("a contended run names each figure once: the reasons, then only what they left out", () => {
    const line = contentionLine(flagged);
    expect(line).toBe(
      "!! contended: loadgen waited 21 ms/s for a CPU while not throttled by its own cap (24 % of its runnable time); " +
        "sink waited 35 ms/s for a CPU while not throttled by its own cap (17 % of its runnable time); CPU pressure (PSI some) 19 % of the time; " +
        "steal 2.2 %; harness 0.02 cores",
    );
    // a host under the flagging share is listed once, after the reasons
    const one = contentionLine({
      ...flagged,
      reasons: [flagged.reasons[0]!, flagged.reasons[2]!],
      hosts: { ...flagged.hosts, sink: { runDelayMsPerSec: 5, waitMsPerSec: 5, share: 0.04 } },
    });
    expect(one).toMatch(/; also waiting for a CPU: sink 4 % \(5 ms\/s\); steal 2\.2 %; harness 0\.02 cores$/);
    expect(one.match(/loadgen/g)).toHaveLength(1);
  });

  it("an uncontended run lists the wait shares and the machine", () => {
    expect(contentionLine({ ...flagged, contended: false, reasons: [] })).toBe(
      "contention: waiting for a CPU loadgen 24 % (21 ms/s), sink 17 % (35 ms/s); PSI cpu some 19 %, steal 2.2 %, harness 0.02 cores",
    );
  });
});
