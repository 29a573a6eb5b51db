/**
 * readKernelFile: the observers' synchronous reads of procfs/cgroupfs files (infra/local/kernel-file.ts).
 */
import { describe, expect, it } from "vitest";
import { readKernelFile } from "../../../infra/local/kernel-file.ts";

describe("readKernelFile", () => {
  it("reads a procfs file's text; undefined for one that does not exist; throws for anything else", () => {
    expect(readKernelFile("/proc/self/stat")).toMatch(new RegExp(`^${process.pid} \\(`));
    expect(readKernelFile("/proc/self/no-such-file")).toBeUndefined();
    expect(() => readKernelFile("/proc/self")).toThrow(/EISDIR/);
  });
});
