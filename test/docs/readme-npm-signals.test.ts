// What README.md says about stopping a run started with `npm run`: SIGINT sent to npm's pid alone does not stop it
// (npm keeps waiting, the bench runs to completion, npm then exits 130), so the README must not promise otherwise and
// must name where SIGINT goes instead (the process group, or the node process).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const README = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8").replace(/\s+/g, " ");
/** The sentences about `npm run` and signals, from "Under `npm run`" to "the same way." */
const SENTENCE = /Under `npm run`.*? the same way\./.exec(README)?.[0] ?? "";

describe("README: stopping a run under npm run", () => {
  it("says plainly that SIGINT to npm's pid alone does not stop the run, and where to send it", () => {
    expect(SENTENCE).toContain("SIGINT to npm's pid alone does not stop the run (npm keeps waiting, the bench runs to completion, then npm exits 130)");
    expect(SENTENCE).toMatch(/send SIGINT to the process group \(`kill -INT -- -<pgid>`, as a terminal's Ctrl-C does\) or to the node process itself/);
    expect(README).not.toMatch(/npm alone ignores SIGINT/);
  });
});
