/**
 * The words of a pair check (harness/runner/pair-check.ts): a stack's refusal of a scenario with every finding, and
 * the hint naming the stacks that take it, each found by checking (harness/runner/drive.ts acceptingHint).
 */
import type { PairFinding } from "../harness/runner/pair-check.ts";

/** A stack that takes the scenario, with what its taking depends on. */
export interface Taker {
  name: string;
  platform: string;
  /** what must hold first, e.g. "fluentd 1.12 is installed", "allowFrom is your address" (none: it takes it now) */
  conditions: readonly string[];
  /** on a local stack, the installed programs found and accepted, e.g. "otelcol 0.165.0" */
  programs: readonly string[];
  /** on a local stack, the programs whose version is read only when they start, as pinned, e.g. "clickhouse 18.16.1" */
  unchecked: readonly string[];
}

/**
 * "--stack docker-4c4g"; a local stack with what its answer depends on: "--stack local-2-cores (accepted if clickhouse
 * 18.16.1 is installed)", "--stack local-otelcol (otelcol 0.165.0 found here)"; a stack the user must finish first:
 * "--stack azure-d2s-v5 (accepted if allowFrom is your address)".
 */
export function takerText(t: Taker): string {
  const ifs = [...t.conditions, ...t.unchecked.map((u) => `${u} is installed`)];
  const notes = [
    ...(ifs.length > 0 ? [`accepted if ${ifs.join(" and ")}`] : []),
    ...(t.programs.length > 0 ? [`${t.programs.join(" and ")} found here`] : []),
  ];
  return `--stack ${t.name}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`;
}

/**
 * The hint after a refusal: "stacks that take it, checked now: --stack a, --stack b (accepted if …)", or that no stack
 * of `stacksDir` (its display path) does. A condition every named stack shares is said once, after the list (a program
 * whose version is read only when it starts: "each if postgres 18.4 is installed"); `more` stacks also take it.
 */
export function acceptingHintText(takers: readonly Taker[], stacksDir: string, more = 0): string {
  if (takers.length === 0) return `no stack in ${stacksDir}/ takes this scenario (each was checked)`;
  const ifs = (t: Taker): string[] => [...t.conditions, ...t.unchecked.map((u) => `${u} is installed`)];
  const shared =
    takers.length > 1 ? ifs(takers[0]!).filter((c) => takers.every((t) => ifs(t).includes(c))) : [];
  const own = takers.map((t) => ({
    ...t,
    conditions: t.conditions.filter((c) => !shared.includes(c)),
    unchecked: t.unchecked.filter((u) => !shared.includes(`${u} is installed`)),
  }));
  const list = own.map(takerText).join(", ");
  const others = more > 0 ? ` and ${more} more (ingestbench stacks)` : "";
  return `stacks that take it, checked now: ${list}${others}${shared.length ? `; each if ${shared.join(" and ")}` : ""}`;
}

/**
 * A stack's refusal of a scenario: one finding as its own sentence (the hint after "; "); several as a count, then one
 * line per finding ("<kind>: <message>") and the hint on its own line.
 */
export function pairRefusalText(
  stack: string,
  scenario: string,
  findings: readonly PairFinding[],
  hint?: string,
): string {
  if (findings.length === 1) return `${findings[0]!.message}${hint ? `; ${hint}` : ""}`;
  return [
    `stack ${stack} refuses scenario ${scenario}: ${findings.length} findings, checked before anything is provisioned`,
    ...findings.map((f) => `${f.kind}: ${f.message}`),
    ...(hint ? [hint] : []),
  ].join("\n");
}

/** "placeholder left in the stack: …" warnings for `validate` of a stack alone (a run refuses them). */
export function placeholderWarning(f: PairFinding): string {
  return `${f.message} (a run refuses it)`;
}
