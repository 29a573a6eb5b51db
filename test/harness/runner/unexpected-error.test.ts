// An unexpected error in a run (not an IngestbenchError, e.g. a failed command's ExecaError): run.json keeps one
// clear line naming what the run was doing and what failed (harness/runner/run.ts unexpectedError), the terminal
// prints that line (harness/runner/drive.ts describeRun), and the whole text and stack only with --debug
// (INGESTBENCH_DEBUG=1, set by harness/cli/index.ts). A real execa failure, not a hand-made message.
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRecord } from "../../../harness/results/types.ts";
import { describeRun } from "../../../ui/run-block.ts";
import { unexpectedError } from "../../../harness/runner/run.ts";

const saved = process.env.INGESTBENCH_DEBUG;
afterEach(() => {
  if (saved === undefined) delete process.env.INGESTBENCH_DEBUG;
  else process.env.INGESTBENCH_DEBUG = saved;
});

describe("unexpected errors of a run", () => {
  it("one line: the stage, the failed command and its last stderr line; the stack only with --debug", async () => {
    const err = (await execa("sh", [
      "-c",
      "echo 'starting...' >&2; echo 'RTNETLINK answers: Operation not permitted' >&2; exit 2",
    ]).catch((e: unknown) => e)) as Error;
    expect(err.constructor.name).toBe("ExecaError");
    const e = unexpectedError(err, "starting the observers");
    expect(e.message).toMatch(
      /^starting the observers: Command failed with exit code 2: sh -c .*: RTNETLINK answers: Operation not permitted$/,
    );
    expect(e.message).not.toContain("\n");
    expect(e.detail).toMatch(/\n\s+at /);

    const rec = {
      runId: "r",
      status: "error",
      stack: "s",
      scenario: "q",
      limits: {},
      checks: [],
      ledger: null,
      summary: null,
      error: { code: "E_UNEXPECTED", kind: "run", ...e },
    } as unknown as RunRecord;
    delete process.env.INGESTBENCH_DEBUG;
    const plain = describeRun(rec);
    expect(plain).toContain(`  error E_UNEXPECTED: ${e.message}`);
    expect(plain).not.toMatch(/\bat /);
    expect(plain).not.toContain("ExecaError");
    process.env.INGESTBENCH_DEBUG = "1";
    expect(describeRun(rec)).toMatch(/\n {4}\s*at /);
  });

  it("a plain bug's error: the stage and its message", () => {
    const e = unexpectedError(
      new TypeError("Cannot read properties of undefined (reading 'rows')"),
      "counting the ledger",
    );
    expect(e.message).toBe("counting the ledger: Cannot read properties of undefined (reading 'rows')");
  });
});
