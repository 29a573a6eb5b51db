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
    const cap = stack.hosts[role]?.limits.memoryBytes;
    if (cap === undefined) continue;
    const p = role === SINK ? findSink(plan.sink.name) : plan.collector ? findCollector(plan.collector.name) : undefined;
    const floor = p?.minMemory;
    if (!p || !floor || cap >= floor.bytes) continue;
    throw new ConfigurationError(
      "E_CAP_TOO_SMALL",
      `${memoryField(stack, role)}: a memory cap of ${formatBytes(cap)} is too small for ${p.name} on host ${role} to start: it needs at least ${formatBytes(floor.bytes)} (${floor.why}); raise the cap`,
      { field: `config.ingestbench:hosts.${role}.memory` },
    );
  }
}

/**
 * For `validate` and `stacks`, which see a stack without a scenario: the hosts whose memory cap is below the floor of
 * every component with one (no sink or collector with a known floor could start there), one sentence each.
 */
export function memoryFloorWarnings(stack: StackSpec): string[] {
  const floors: Array<{ name: string; floor: MinMemory }> = [...sinkPlugins, ...collectorPlugins]
    .flatMap((p) => (p.minMemory ? [{ name: p.name, floor: p.minMemory }] : []));
  if (floors.length === 0) return [];
  const least = floors.reduce((a, b) => (b.floor.bytes < a.floor.bytes ? b : a));
  const out: string[] = [];
  for (const [host, h] of Object.entries(stack.hosts)) {
    const cap = h.limits.memoryBytes;
    if (cap === undefined || host === LOADGEN || cap >= least.floor.bytes) continue;
    out.push(`${memoryField(stack, host)}: a memory cap of ${formatBytes(cap)} is below what any component with a known floor needs to start (the least, ${least.name}, needs ${formatBytes(least.floor.bytes)}): a run is refused (E_CAP_TOO_SMALL)`);
  }
  return out;
}
