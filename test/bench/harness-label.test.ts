// bench/harness.ts's ledger curve (part 2) runs real servers, so its printed heading is checked in the source: it must
// say that the rows are made inside the server (INSERT … SELECT FROM numbers() / generate_series()), so that no reader
// takes the seconds printed under it for a load's.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("bench:harness ledger curve heading", () => {
  it("says the rows are made inside the server by INSERT … SELECT, not loaded", () => {
    const lines = readFileSync(path.join(root, "bench/harness.ts"), "utf8").split("\n").filter((l) => l.includes("console.log(`ledger curve ("));
    expect(lines).toHaveLength(1);
    const heading = lines[0]!;
    expect(heading).toContain("made inside the server by INSERT … SELECT FROM");
    expect(heading).toContain('"generate_series()" : "numbers()"');
    expect(heading).toMatch(/not loaded/);
  });
});
