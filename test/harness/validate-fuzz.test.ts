// Property-based fuzzing of `ingestbench validate` (fast-check, seeded): every scenario, stack and nightly plan file of
// the repository is mutated (values, keys, indentation, anchors, aliases with and without anchors, tags, merge keys,
// several documents; test/helpers/yaml-mutants.ts) and each mutant must be a valid file or a clean ConfigurationError
// whose every problem names file:line:col (and the field, for schema errors) — never another exception (a crash is
// exit 70 and a stack trace), never a hang. The mutants are validated in process with the function `validate` runs
// (validateFile, validateExitCode); a few are also given to the real CLI, whose exit code and stderr must agree.
//
// INGESTBENCH_FUZZ_RUNS (default 1000) sets the number of mutants, INGESTBENCH_FUZZ_SEED the seed (default 14; a
// failure prints the seed and path fast-check needs to replay it), INGESTBENCH_FUZZ_CLI the CLI samples (default 10).
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { validateExitCode, validateFile, type FileResult } from "../../harness/cli/commands/validate.ts";
import { projectRoot } from "../helpers/bench.ts";
import { editArb, mutate } from "../helpers/yaml-mutants.ts";

const RUNS = Number(process.env.INGESTBENCH_FUZZ_RUNS ?? 1000);
const SEED = Number(process.env.INGESTBENCH_FUZZ_SEED ?? 14);
const CLI_SAMPLES = Number(process.env.INGESTBENCH_FUZZ_CLI ?? 10);
/** a mutant validated in more than this is a hang (the slowest valid file takes a few ms) */
const HANG_MS = 2_000;

interface Original {
  /** directory under the temp root, as in the repository (fileKind reads `nightly/` from it) */
  dir: "scenarios" | "stacks" | "nightly";
  name: string;
  text: string;
}

const originals: Original[] = (["scenarios", "stacks", "nightly"] as const).flatMap((dir) =>
  readdirSync(path.join(projectRoot, dir))
    .filter((f) => f.endsWith(".yaml") && (dir !== "stacks" || f.startsWith("Pulumi.")))
    .sort()
    .map((name) => ({ dir, name, text: readFileSync(path.join(projectRoot, dir, name), "utf8") })),
);

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-fuzz-"));
for (const d of ["scenarios", "stacks", "nightly"]) mkdirSync(path.join(tmp, d));
// what scenarios refer to beside them (fault steps' zx scripts, relative to the scenario file)
cpSync(path.join(projectRoot, "scenarios", "steps"), path.join(tmp, "scenarios", "steps"), {
  recursive: true,
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A mutant validated in process: where it was written, its text, the outcome and the exit code `validate` maps it to. */
interface Validated {
  file: string;
  text: string;
  result: FileResult;
  exitCode: number;
}

/** What is wrong with one outcome (empty when it is a valid file or a clean error). */
function problemsOf(v: Validated): string[] {
  const out: string[] = [];
  if (v.exitCode !== 0 && v.exitCode !== 2) out.push(`exit ${v.exitCode}`);
  if (v.result.ok) return out;
  if (v.result.errors.length === 0) out.push("an error without diagnostics");
  for (const d of v.result.errors) {
    const where = `${d.code} ${JSON.stringify(d.message.slice(0, 200))}`;
    if (!/^E_[A-Z_]+$/.test(d.code)) out.push(`code ${d.code}`);
    if (d.line === null || d.col === null) out.push(`no line:col: ${where}`);
    // a YAML syntax error names a position, not a field; every schema error names its field (a top-level problem's
    // field is the document itself: its message says what is missing or wrong)
    if (
      d.code !== "E_YAML_SYNTAX" &&
      d.field === null &&
      !/^(required|expected|invalid|unknown key|at least|the file|this file|a (stack|scenario|nightly)|file is empty)/i.test(
        d.message,
      )
    ) {
      out.push(`no field: ${where}`);
    }
    if (/\n\s+at .+:\d+:\d+\)?$/m.test(d.message)) out.push(`stack trace in message: ${where}`);
  }
  return out;
}

let counter = 0;
/** Write a mutant where its original lives (relative to the temp root) and validate it as `validate` does. */
function validateMutant(orig: Original, text: string): Validated {
  // a fresh name each time: the stack's name comes from its file name, so keep the original's as a prefix
  const n = counter++;
  const name =
    orig.dir === "stacks" ? orig.name.replace(/^Pulumi\./, `Pulumi.fz${n}-`) : `fz${n}-${orig.name}`;
  const file = path.join(tmp, orig.dir, name);
  writeFileSync(file, text);
  let result: FileResult;
  const t0 = performance.now();
  try {
    result = validateFile(file);
  } catch (err) {
    // the CLI prints this as "unexpected error" and exits 70: a crash
    throw new Error(
      `crash on a mutant of ${orig.dir}/${orig.name}: ${(err as Error).stack}\n--- mutant ---\n${text}`,
    );
  }
  const ms = performance.now() - t0;
  if (ms > HANG_MS)
    throw new Error(
      `a mutant of ${orig.dir}/${orig.name} took ${ms.toFixed(0)} ms to validate (a hang)\n--- mutant ---\n${text}`,
    );
  return { file, text, result, exitCode: validateExitCode([result]) };
}

/** Run the real CLI's `validate` on files (one process: the CLI's start-up through tsx takes seconds). */
function cli(files: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/ingestbench.js", "validate", ...files], {
      cwd: projectRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "",
      stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe(`validate on ${RUNS} mutants of the repository's ${originals.length} scenario, stack and nightly plan files (fast-check seed ${SEED})`, () => {
  const seen: Validated[] = [];

  it("every mutant is a valid file or a clean error naming file:line:col and the field (exit 0 or 2), in process", () => {
    expect(originals.filter((o) => o.dir === "nightly").length).toBeGreaterThan(0);
    expect(originals.filter((o) => o.dir === "stacks").length).toBeGreaterThan(0);
    // the originals themselves validate (a mutant's refusal is then the mutation's doing)
    for (const o of originals) expect(validateMutant(o, o.text).result.errors).toEqual([]);
    fc.assert(
      fc.property(
        fc.nat({ max: originals.length - 1 }),
        fc.array(editArb, { minLength: 1, maxLength: 2 }),
        (which, edits) => {
          const orig = originals[which]!;
          const v = validateMutant(orig, mutate(orig.text, edits));
          seen.push(v);
          const problems = problemsOf(v);
          if (problems.length > 0)
            throw new Error(`${orig.dir}/${orig.name}: ${problems.join("; ")}\n--- mutant ---\n${v.text}`);
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const refused = seen.filter((v) => !v.result.ok).length;
    // the mutations reach past the YAML parser into the schemas: both outcomes occur, and more than syntax errors
    expect(refused).toBeGreaterThan(0);
    expect(seen.length - refused).toBeGreaterThan(0);
    expect(new Set(seen.flatMap((v) => v.result.errors.map((d) => d.code))).size).toBeGreaterThan(2);
  }, 120_000);

  it(`the real CLI exits as the in-process mapping says on ${CLI_SAMPLES} of them, with their errors and no stack trace`, async () => {
    expect(seen.length).toBeGreaterThan(0);
    // a spread of outcomes: every error code seen once, then valid files, then the rest in order
    const byCode = new Map<string, Validated>();
    for (const v of seen)
      byCode.set(
        v.result.ok ? "ok" : v.result.errors[0]!.code,
        byCode.get(v.result.ok ? "ok" : v.result.errors[0]!.code) ?? v,
      );
    const samples = [...new Set([...byCode.values(), ...seen])].slice(0, CLI_SAMPLES);
    const valid = samples.filter((v) => v.result.ok);
    expect(valid.length).toBeGreaterThan(0);
    expect(samples.length - valid.length).toBeGreaterThan(0);
    // all samples at once (exit 2: some are wrong), and the valid ones alone (exit 0): both sides of the mapping
    const [all, good] = await Promise.all([cli(samples.map((v) => v.file)), cli(valid.map((v) => v.file))]);
    expect(all.code, all.stderr).toBe(validateExitCode(samples.map((v) => v.result)));
    expect(good.code, good.stderr).toBe(validateExitCode(valid.map((v) => v.result)));
    for (const r of [all, good])
      expect(r.stderr).not.toMatch(/unexpected error|Warning|\n\s+at .+:\d+:\d+\)?\n/);
    // stderr is each refused file's error, in order, exactly as validateFile gave it; stdout names each valid one
    expect(all.stderr).toBe(
      samples
        .filter((v) => !v.result.ok)
        .map((v) => `${v.result.text}\n`)
        .join(""),
    );
    expect(
      all.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split(": ok")[0]),
    ).toEqual(valid.map((v) => v.file));
    expect(good.stderr).toBe("");
  }, 120_000);
});
