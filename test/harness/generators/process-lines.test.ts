// GeneratorProcess (harness/generators/process.ts) reads the child's JSON lines with node:readline: a final report of
// megabytes (a 60 GiB replay's index is 6.5 MB of base64) written in many pieces arrives whole, and so does a last
// line that the child ends without a newline. Real child processes (node -e).
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { GeneratorProcess } from "../../../harness/generators/process.ts";

/** A child that prints `ready`, then a final report whose replayIndex.marks is `n` chars, in 64 KiB writes. */
function child(n: number, newline: boolean): GeneratorProcess {
  const script = `
    const w = (s) => new Promise((r) => process.stdout.write(s, r));
    (async () => {
      await w(JSON.stringify({ type: "ready" }) + "\\n");
      const final = JSON.stringify({ type: "final", genId: 0, sent: 5, replayIndex: { size: 1, lines: 1, lineCount: 1, marks: "A".repeat(${n}) } }) + (${newline} ? "\\n" : "");
      for (let i = 0; i < final.length; i += 65536) await w(final.slice(i, i + 65536));
    })();`;
  return new GeneratorProcess(spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "pipe"] }));
}

describe("generator process: the child's lines (real child processes)", () => {
  it("a final report of 8 MB written in 64 KiB pieces arrives whole", async () => {
    const final = await child(8_000_000, true).done;
    expect(final.sent).toBe(5);
    expect(final.replayIndex?.marks.length).toBe(8_000_000);
    expect(/^A+$/.test(final.replayIndex!.marks)).toBe(true);
  });

  it("a last line without a newline is still read when the child exits", async () => {
    const final = await child(100_000, false).done;
    expect(final.replayIndex?.marks.length).toBe(100_000);
  });
});
