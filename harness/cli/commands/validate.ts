/**
 * `ingestbench validate FILES... [--json]`: validate stack files (infra/stack/schema.ts loadStack), nightly plans
 * (harness/nightly/plan.ts loadNightlyPlan) and scenario files (harness/runner/plan.ts: loaded and planned into
 * cells, so that check paths and component pairings are checked too). Every file is checked; exit 2 if any is wrong.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { IngestbenchError } from "../../../core/errors.ts";
import { loadPulumiStack, loadStack } from "../../../infra/stack/schema.ts";
import { loadNightlyPlan } from "../../nightly/plan.ts";
import { loadScenarioFile, planCells } from "../../runner/plan.ts";
import { EXIT, type CommandModule } from "../context.ts";
import { stackFit, stackFitText } from "./stacks.ts";
import { diagnosticsOf, type Diagnostic } from "../diagnostics.ts";
import {
  checkDeclaredMemoryFloors,
  checkMemoryFloors,
  checkStackMemoryFloors,
  memoryFloorWarnings,
} from "../../runner/memory-floor.ts";
import { checkCellsOnStack, PairRefusedError, type DeployedStacks } from "../../runner/drive.ts";
import { errorOf, placeholderFindings } from "../../runner/pair-check.ts";
import { placeholderWarning } from "../../../ui/pair-check.ts";
import { pulumiStacks } from "../../provision/deployed.ts";

/** What a file is taken for. */
export type FileKind = "stack" | "nightly plan" | "scenario";

/**
 * Tell a file's kind by its content: a top-level `config:` map (Pulumi stack settings) is a stack, a top-level
 * `entries:` list a nightly plan, anything else a scenario — except that a file in a `nightly/` directory is a plan
 * whatever it holds (so a plan that lost its `entries:` is told so, not read as a scenario), and a file that cannot
 * be read is a stack when named Pulumi.*.yaml (its loader then reports why it cannot be read).
 */
export function fileKind(file: string): FileKind {
  const inNightlyDir = path.basename(path.dirname(path.resolve(file))) === "nightly";
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    if (path.basename(file).startsWith("Pulumi.")) return "stack";
    return inNightlyDir ? "nightly plan" : "scenario";
  }
  if (/^config:/m.test(text)) return "stack";
  if (inNightlyDir || /^entries:/m.test(text)) return "nightly plan";
  return "scenario";
}

/** The outcome for one file (`validate --json` prints an array of these). */
export interface FileResult {
  file: string;
  kind: FileKind;
  ok: boolean;
  /** one per problem (empty when ok) */
  errors: Diagnostic[];
  /** the file's verdict line as printed without --json, "<file>: refused: <the error's message>" (absent when ok) */
  text?: string;
  /**
   * a stack's caps against this machine: "oversubscribed …", "uncapped (≥ machine) …", and memory caps below the
   * floor of some of the components its hosts could run (harness/runner/memory-floor.ts memoryFloorWarnings); flags,
   * not errors (a cap below every floor is an error, checkStackMemoryFloors)
   */
  warnings?: string[];
}

/** Validate one file as its kind says. Only IngestbenchErrors are findings; anything else propagates (a bug). */
export function validateFile(file: string): FileResult {
  const kind = fileKind(file);
  try {
    if (kind === "stack") {
      const stack = loadStack(file);
      // a docker or azure stack names its components: a cap below one's floor fails as its run would
      if (stack.platform !== "local")
        checkDeclaredMemoryFloors(stack, loadPulumiStack(file).platform.components as Record<string, string>);
      // a host under which no component of its platform can start: every run on the stack would be refused
      checkStackMemoryFloors(stack);
      const fit = stackFitText(stackFit(stack));
      // placeholders the committed stack files carry on purpose (azure's allowFrom): flagged here, refused by a run
      const warnings = [
        ...(fit ? [fit] : []),
        ...memoryFloorWarnings(stack),
        ...placeholderFindings(stack).map(placeholderWarning),
      ];
      if (warnings.length) return { file, kind, ok: true, errors: [], warnings };
    } else if (kind === "nightly plan") loadNightlyPlan(file);
    else planCells(loadScenarioFile(file), file);
    return { file, kind, ok: true, errors: [] };
  } catch (err) {
    if (!(err instanceof IngestbenchError)) throw err;
    return { file, kind, ok: false, errors: diagnosticsOf(err, file), text: refusedLine(file, err.message) };
  }
}

/** "<file>: refused: <message>", its further lines indented: one verdict line per file, the reason on it. */
export function refusedLine(file: string, message: string): string {
  const [first, ...rest] = message.split("\n");
  return [`${file}: refused: ${first}`, ...rest.map((l) => `  ${l}`)].join("\n");
}

/**
 * Given stacks and scenarios together (`validate stacks/Pulumi.x.yaml scenarios/y.yaml`): every valid scenario's cells
 * on every valid stack, as a run checks them before provisioning. With one stack, everything `bench --stack` checks
 * before it provisions (harness/runner/drive.ts checkCellsOnStack, the pair check of harness/runner/pair-check.ts:
 * memory floors, what the platform runs, pins against images or installed programs, placeholders, hosts, steps;
 * `deployed` is the docker/azure check, harness/provision/deployed.ts), each finding its own diagnostic; with several (e.g.
 * `stacks/*.yaml`, which pairs every scenario with stacks of other platforms too) only the memory floors
 * (harness/runner/memory-floor.ts checkMemoryFloors). One failed result per stack and scenario that a run would
 * refuse, labelled with both files.
 */
export function crossCheck(
  results: readonly FileResult[],
  deployed?: Pick<DeployedStacks, "check">,
  stacksDir?: string,
): FileResult[] {
  const out: FileResult[] = [];
  const stacks = results.filter((r) => r.ok && r.kind === "stack");
  for (const st of stacks) {
    const stack = loadStack(st.file);
    for (const sc of results.filter((r) => r.ok && r.kind === "scenario")) {
      try {
        const plans = planCells(loadScenarioFile(sc.file), sc.file);
        if (stacks.length === 1) checkCellsOnStack(stack, plans, deployed, stacksDir);
        else for (const plan of plans) checkMemoryFloors(stack, plan);
      } catch (err) {
        if (!(err instanceof IngestbenchError)) throw err;
        // one diagnostic (or more, one per positioned line) per finding of the pair check
        const errors =
          err instanceof PairRefusedError && err.findings.length > 1
            ? err.findings.flatMap((f) => diagnosticsOf(errorOf(f), st.file))
            : diagnosticsOf(err, st.file);
        out.push({
          file: sc.file,
          kind: "scenario",
          ok: false,
          errors,
          text: refusedLine(sc.file, `on ${st.file}: ${err.message}`),
        });
      }
    }
  }
  return out;
}

/**
 * The results with crossCheck's findings folded into the scenario they concern (not ok, its errors and verdict lines
 * joined), so that each file has one result and one verdict.
 */
export function withCrossChecks(
  results: readonly FileResult[],
  crossed: readonly FileResult[],
): FileResult[] {
  return results.map((r) => {
    const mine = crossed.filter((c) => c.file === r.file && c.kind === r.kind);
    if (mine.length === 0) return r;
    const texts = [...(r.ok ? [] : [r.text!]), ...mine.map((c) => c.text!)];
    const { warnings: _warnings, ...rest } = r;
    return {
      ...rest,
      ok: false,
      errors: [...r.errors, ...mine.flatMap((c) => c.errors)],
      text: texts.join("\n"),
    };
  });
}

/**
 * The exit code of `validate` for these results (EXIT in ../context.ts): 0 when every file is valid, 2
 * (configuration) when any is not. A non-IngestbenchError thrown by validateFile is a bug and exits 70 (../index.ts).
 */
export function validateExitCode(results: readonly FileResult[]): number {
  return results.every((r) => r.ok) ? EXIT.ok : EXIT.configuration;
}

export const registerValidate: CommandModule = (program, ctx) => {
  program
    .command("validate")
    .summary("Check stack, scenario and nightly plan files")
    .description(
      'Validate stack files, nightly plans and scenarios: one line per file, "<file>: ok" or "<file>: refused: <file:line:col: field: reason>"; exit 2 if any is refused. Given one stack and scenarios, each scenario is also checked on that stack as `bench` would before provisioning.',
    )
    .argument("<files...>", "stacks/Pulumi.<name>.yaml, nightly/<plan>.yaml or scenario files")
    .option(
      "-s, --stack <name>",
      "check the scenarios on stack <name> (stacks/Pulumi.<name>.yaml), as bench does",
    )
    .option(
      "--json",
      "print one JSON array on stdout: per file { file, kind, ok, errors: [{ file, line, col, field, message, code }] }",
    )
    .action(
      ctx.action((args: string[], flags: { json?: boolean; stack?: string }) => {
        const files = flags.stack
          ? [
              path.relative(
                process.cwd(),
                path.join(ctx.projectRoot, "stacks", `Pulumi.${flags.stack}.yaml`),
              ),
              ...args,
            ]
          : args;
        const checked = files.map(validateFile);
        const results = withCrossChecks(
          checked,
          crossCheck(
            checked,
            pulumiStacks({ projectRoot: ctx.projectRoot }),
            path.join(ctx.projectRoot, "stacks"),
          ),
        );
        if (flags.json) {
          ctx.printJson(results.map(({ text: _text, ...r }) => r));
        } else {
          for (const r of results) {
            // a plan says so: `validate` was for stacks and scenarios only, whose lines stay "file: ok"
            if (r.ok)
              ctx.print(
                `${r.file}: ok${r.kind === "nightly plan" ? " (nightly plan)" : ""}${r.warnings?.length ? `; ${r.warnings.join("; ")}` : ""}`,
              );
            else ctx.stderr.write(`${r.text}\n`);
          }
        }
        return validateExitCode(results);
      }),
    );
};
