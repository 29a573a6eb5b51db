// Every figure in README.md, the pages its figures moved to (MOVED below) and docs/measurements.md names the machine
// it was measured on and the command
// (docs/decisions/0007-every-number-names-its-machine.md): each sample output block is preceded by a machine line
// (CPU model, cores, kernel, the command in backticks), and each prose paragraph with measured figures names one (or,
// "On that machine", follows a block that does). Then scripts/readme-sample.sh, run for real on a captured output:
// it prints this machine's line (from lscpu, nproc, uname) and writes the block between the README's markers.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(path.join(root, "README.md"), "utf8");
/** The pages the README's measured figures moved to when it became a front door (each checked as the README is). */
const MOVED = [
  "docs/output.md",
  "docs/scenarios.md",
  "docs/capacity.md",
  "docs/commands.md",
  "docs/faults.md",
  "docs/deployed-stacks.md",
  "docs/how-a-run-measures.md",
  "docs/verification.md",
  "CONTRIBUTING.md",
];

/** "Measured on <CPU model>, <n> cores, kernel <x.y…>, … `<command>` …" */
const MACHINE = /Measured on ([^,]+), (\d+) cores, kernel (\d+\.\d+\S*?)[,)\s][^\n]*`[^`]+`/;
/** a measured figure in a sample block: "305,647 rows/s" */
const BLOCK_FIGURE = /\d[\d,]*(\.\d+)? rows\/s/;
/** measured figures in prose: "20,021 rows/s", "7.3 times", "568k", "1.35M", "lost 2,500" (not a unit's "ms/1k rows") */
const PROSE_FIGURE = /\d[\d,]*(\.\d+)? rows\/s|\d+(\.\d+)?\s+times\s+as|(?<!\/)\b\d+(\.\d+)?[kM]\b|\blost \d/;

interface Part {
  kind: "block" | "prose";
  text: string;
  before: string;
}

/** The README split into fenced blocks (with the prose just before each) and prose paragraphs. */
function parts(md: string): Part[] {
  const out: Part[] = [];
  const chunks = md.split(/^```[^\n]*\n/m);
  // even chunks are prose, odd chunks are fenced blocks (the closing fence opens the next prose chunk)
  chunks.forEach((chunk, i) => {
    if (i % 2 === 1) {
      const prev = chunks[i - 1]!.split("\n").filter((l) => l.trim() && !/^<!--.*-->$/.test(l.trim()));
      out.push({ kind: "block", text: chunk, before: prev.at(-1) ?? "" });
    } else {
      for (const p of chunk.split(/\n\s*\n/)) out.push({ kind: "prose", text: p, before: "" });
    }
  });
  return out;
}

/** What is wrong with a README's figures: one line per block or paragraph that does not name its machine. */
function unnamedFigures(md: string): string[] {
  const problems: string[] = [];
  let lastBlockNamed = false;
  for (const p of parts(md)) {
    if (p.kind === "block") {
      if (!BLOCK_FIGURE.test(p.text)) continue;
      lastBlockNamed = MACHINE.test(p.before);
      if (!lastBlockNamed)
        problems.push(
          `sample block "${p.text.split("\n")[0]}" is not preceded by a machine line (got "${p.before}")`,
        );
    } else if (
      PROSE_FIGURE.test(p.text) &&
      !MACHINE.test(p.text.replace(/\n/g, " ")) &&
      !(lastBlockNamed && /^On that machine\b/.test(p.text.trim()))
    ) {
      problems.push(`paragraph "${p.text.trim().slice(0, 80)}…" has figures but names no machine`);
    }
  }
  return problems;
}

const temps: string[] = [];
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("README figures name their machine", () => {
  it("every sample block and every paragraph with measured figures names CPU, cores, kernel and the command", () => {
    const blocks = parts(README).filter((p) => p.kind === "block" && BLOCK_FIGURE.test(p.text));
    expect(blocks.length).toBeGreaterThanOrEqual(1);
    expect(unnamedFigures(README)).toEqual([]);
    const [, cpu, cores, kernel] = MACHINE.exec(blocks[0]!.before)!;
    expect({ cpu: cpu!.length > 0, cores: Number(cores) > 0, kernel }).toMatchObject({
      cpu: true,
      cores: true,
      kernel: expect.stringMatching(/^\d+\.\d+/),
    });
  });

  it("so does every page the README's figures moved to, docs/output.md's sample block first", () => {
    const docs = Object.fromEntries(MOVED.map((f) => [f, readFileSync(path.join(root, f), "utf8")]));
    // the sample the output page explains is a named block, and the pages hold the figures they were given
    expect(parts(docs["docs/output.md"]!).some((p) => p.kind === "block" && MACHINE.test(p.before))).toBe(
      true,
    );
    for (const f of ["docs/output.md", "docs/scenarios.md", "docs/faults.md"])
      expect(docs[f]!.split(/\n\s*\n/).filter((p) => PROSE_FIGURE.test(p)).length, f).toBeGreaterThan(0);
    expect(Object.entries(docs).flatMap(([f, md]) => unnamedFigures(md).map((p) => `${f}: ${p}`))).toEqual(
      [],
    );
  });

  it("so does every paragraph of docs/measurements.md, where the README's earlier figures live", () => {
    const doc = readFileSync(path.join(root, "docs/measurements.md"), "utf8");
    expect(doc.split(/\n\s*\n/).filter((p) => PROSE_FIGURE.test(p)).length).toBeGreaterThan(5);
    expect(unnamedFigures(doc)).toEqual([]);
  });

  it("the check can fail: a block without its machine line, a paragraph of figures without a machine", () => {
    expect(unnamedFigures("A run:\n\n```\n  41,866 rows/s, 9.59 MiB/s\n```\n")).toHaveLength(1);
    expect(unnamedFigures("Measured here: 20,021 rows/s with an exact ledger.\n")).toHaveLength(1);
    expect(unnamedFigures("It read 568k rows.\n")).toHaveLength(1);
    expect(unnamedFigures("| CPU ms/1k rows | sink CPU time per 1,000 stored rows |\n")).toEqual([]); // a unit
    expect(
      unnamedFigures(
        "Measured on AMD EPYC, 2 cores, kernel 6.18, with `npm run bench`:\n\n```\n  41,866 rows/s\n```\n\nOn that machine it stores 7.3 times as many.\n",
      ),
    ).toEqual([]);
    // "On that machine" only after a named block
    expect(unnamedFigures("On that machine it stores 7.3 times as many.\n")).toHaveLength(1);
  });
});

describe("scripts/readme-sample.sh (real, on a captured output)", () => {
  it("prints this machine's line and the block, and --write replaces only the README's marked block", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ib-readme-sample-"));
    temps.push(dir);
    const captured = path.join(dir, "bench.txt");
    writeFileSync(
      captured,
      "2 run(s) planned, about 1m22s\n\x1b[32mrun 20261201T000000Z-abcdef: ok\x1b[0m\n  12,345 rows/s, 2.83 MiB/s over 30.0 s\r\n",
    );
    const readme = path.join(dir, "README.md");
    writeFileSync(readme, README);

    const out = execFileSync(
      "bash",
      [path.join(root, "scripts/readme-sample.sh"), "--from", captured, "--write", "--readme", readme],
      { cwd: root, encoding: "utf8" },
    );
    const cpu = execFileSync("lscpu", { encoding: "utf8" })
      .match(/^Model name:\s*(.+)$/m)![1]!
      .trim();
    const firstLine = out.split("\n")[0]!;
    expect(firstLine).toMatch(MACHINE);
    expect(firstLine).toContain(
      `Measured on ${cpu}, ${os.availableParallelism()} cores, kernel ${os.release()}, cgroup `,
    );
    expect(firstLine).toContain("with `npm run bench`:");
    expect(out).toContain(
      "```\n2 run(s) planned, about 1m22s\nrun 20261201T000000Z-abcdef: ok\n  12,345 rows/s, 2.83 MiB/s over 30.0 s\n```",
    );
    expect(out).not.toMatch(/\x1b|\r/);

    const written = readFileSync(readme, "utf8");
    expect(written).toContain(
      `<!-- readme-sample:bench -->\n${out.trimEnd()}\n<!-- /readme-sample:bench -->`,
    );
    // everything outside the markers is untouched, and the result still names its machine
    const outside = (t: string): string =>
      t.replace(/<!-- readme-sample:bench -->[\s\S]*<!-- \/readme-sample:bench -->/, "");
    expect(outside(written)).toBe(outside(README));
    expect(unnamedFigures(written)).toEqual([]);
  });

  it("refuses unknown arguments and a README without markers, writing nothing", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ib-readme-sample-"));
    temps.push(dir);
    const bad = spawnSync("bash", [path.join(root, "scripts/readme-sample.sh"), "--frob"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown argument --frob/);
    const captured = path.join(dir, "bench.txt");
    writeFileSync(captured, "x\n");
    const plain = path.join(dir, "plain.md");
    writeFileSync(plain, "# no markers\n");
    const r = spawnSync(
      "bash",
      [path.join(root, "scripts/readme-sample.sh"), "--from", captured, "--write", "--readme", plain],
      { cwd: root, encoding: "utf8" },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/no <!-- readme-sample:bench -->/);
    expect(readFileSync(plain, "utf8")).toBe("# no markers\n");
  });
});
