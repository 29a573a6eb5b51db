/**
 * Memory caps too small for a component to start (docs/decisions/0009-memory-caps-too-small-to-start.md): the host
 * that runs a sink or collector whose plugin has a floor (core/plugin.ts PluginBase.minMemory) must not be capped
 * below it. Caps at or above the machine are the other side, flagged by harness/results/caps.ts (docs/decisions/0008).
 */
import { ConfigurationError } from "../../core/errors.ts";
import type { StackSpec } from "../../core/limits.ts";
import type { MinMemory } from "../../core/plugin.ts";
import { formatBytes } from "../../core/units.ts";
import { fieldLocation } from "../../core/yaml.ts";
import { collectorPlugins, findCollector, findSink, sinkPlugins } from "../../plugins/registry.ts";
import type { CellPlan } from "./cell-plan.ts";
import { hostRoles, LOADGEN, SINK } from "./site.ts";
import { collectorHosts } from "./versions.ts";

/** "stacks/Pulumi.x.yaml:12:15: config.ingestbench:hosts.sink.memory" of a host's memory cap. */
function memoryField(stack: StackSpec, host: string): string {
  return fieldLocation(stack.file, ["config", "ingestbench:hosts", host, "memory"]);
}

/**
 * Refuse a cell whose sink or collector host caps memory below its component's floor, before anything is provisioned.
 * @throws ConfigurationError E_CAP_TOO_SMALL naming the stack file:line:col and field, the component and its floor
 */
export function checkMemoryFloors(stack: StackSpec, plan: Pick<CellPlan, "sink" | "collector">): void {
  for (const role of hostRoles(Object.keys(stack.hosts), plan)) {
    if (role === LOADGEN) continue;
    const p =
      role === SINK
        ? findSink(plan.sink.name)
        : plan.collector
          ? findCollector(plan.collector.name)
          : undefined;
    refuseBelowFloor(stack, role, p);
  }
}

/** Throw E_CAP_TOO_SMALL when `host`'s memory cap is below the floor of plugin `p` (nothing without a cap, plugin or floor). */
function refuseBelowFloor(
  stack: StackSpec,
  host: string,
  p: { name: string; minMemory?: MinMemory } | undefined,
): void {
  const cap = stack.hosts[host]?.limits.memoryBytes;
  const floor = p?.minMemory;
  if (cap === undefined || !p || !floor || cap >= floor.bytes) return;
  throw new ConfigurationError(
    "E_CAP_TOO_SMALL",
    `${memoryField(stack, host)}: a memory cap of ${formatBytes(cap)} is too small for ${p.name} on host ${host} to start: it needs at least ${formatBytes(floor.bytes)} (${floor.why}); raise the cap`,
    { field: `config.ingestbench:hosts.${host}.memory` },
  );
}

/**
 * For `validate` of a docker or azure stack, whose hosts' components the stack itself names (`ingestbench:components`,
 * host → component): refuse as a run would, when a host's memory cap is below its component's floor.
 * @throws ConfigurationError E_CAP_TOO_SMALL (as checkMemoryFloors)
 */
export function checkDeclaredMemoryFloors(
  stack: StackSpec,
  components: Readonly<Record<string, string>>,
): void {
  for (const [host, component] of Object.entries(components))
    refuseBelowFloor(stack, host, findSink(component) ?? findCollector(component));
}

/**
 * The components a stack's platform can start on one of its hosts: the sinks on the sink host, the collectors on a
 * collector host (local: those with a local component; docker, azure: those with an image); none on other hosts.
 */
function componentsFor(stack: StackSpec, host: string): Array<{ name: string; minMemory?: MinMemory }> {
  const pool = host === SINK ? sinkPlugins : collectorHosts([host]).length ? collectorPlugins : [];
  return pool.filter((p) => (stack.platform === "local" ? p.local !== undefined : p.image !== undefined));
}

/**
 * For `validate`, which sees a stack without a scenario: refuse a host whose memory cap is below the floor of every
 * component the stack's platform can start there (each of them having a floor), as every run on it would be refused.
 * @throws ConfigurationError E_CAP_TOO_SMALL at the cap's file:line:col, naming those components and their floors
 */
export function checkStackMemoryFloors(stack: StackSpec): void {
  for (const [host, h] of Object.entries(stack.hosts)) {
    const cap = h.limits.memoryBytes;
    const can = componentsFor(stack, host);
    if (cap === undefined || can.length === 0 || !can.every((p) => p.minMemory && cap < p.minMemory.bytes))
      continue;
    throw new ConfigurationError(
      "E_CAP_TOO_SMALL",
      `${memoryField(stack, host)}: a memory cap of ${formatBytes(cap)} is too small for any ${host === SINK ? "sink" : "collector"} the ${stack.platform} platform runs on host ${host} to start: ` +
        `${can.map((p) => `${p.name} needs at least ${formatBytes(p.minMemory!.bytes)}`).join(", ")} (docs/decisions/0009-memory-caps-too-small-to-start.md); raise the cap`,
      { field: `config.ingestbench:hosts.${host}.memory` },
    );
  }
}

/**
 * For `validate`: per host whose memory cap is below the floor of some (not every) component the platform can start
 * there, one note naming them (a scenario running one of them there is refused, E_CAP_TOO_SMALL); the hosts below
 * every floor are checkStackMemoryFloors' refusals.
 */
export function memoryFloorWarnings(stack: StackSpec): string[] {
  const out: string[] = [];
  for (const [host, h] of Object.entries(stack.hosts)) {
    const cap = h.limits.memoryBytes;
    if (cap === undefined) continue;
    const can = componentsFor(stack, host);
    const below = can.filter((p) => p.minMemory && cap < p.minMemory.bytes);
    if (below.length === 0 || below.length === can.length) continue;
    out.push(
      `${memoryField(stack, host)}: a memory cap of ${formatBytes(cap)} is below the floor of ${below.map((p) => `${p.name} (${formatBytes(p.minMemory!.bytes)})`).join(", ")}: ` +
        `scenarios with ${below.length === 1 ? "it" : "them"} cannot run on host ${host} (E_CAP_TOO_SMALL); the others can`,
    );
  }
  return out;
}
