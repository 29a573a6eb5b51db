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
    const p = role === SINK ? findSink(plan.sink.name) : plan.collector ? findCollector(plan.collector.name) : undefined;
    refuseBelowFloor(stack, role, p);
  }
}

/** Throw E_CAP_TOO_SMALL when `host`'s memory cap is below the floor of plugin `p` (nothing without a cap, plugin or floor). */
function refuseBelowFloor(stack: StackSpec, host: string, p: { name: string; minMemory?: MinMemory } | undefined): void {
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
export function checkDeclaredMemoryFloors(stack: StackSpec, components: Readonly<Record<string, string>>): void {
  for (const [host, component] of Object.entries(components)) refuseBelowFloor(stack, host, findSink(component) ?? findCollector(component));
}

/**
 * For `validate` and `stacks`, which see a (local) stack without a scenario: per host whose memory cap is below the
 * floor of some component with one, one sentence naming those components (a scenario running one of them there is
 * refused, E_CAP_TOO_SMALL), or saying that none with a known floor could start there.
 */
export function memoryFloorWarnings(stack: StackSpec): string[] {
  const floors: Array<{ name: string; floor: MinMemory }> = [...sinkPlugins, ...collectorPlugins]
    .flatMap((p) => (p.minMemory ? [{ name: p.name, floor: p.minMemory }] : []));
  if (floors.length === 0) return [];
  const out: string[] = [];
  for (const [host, h] of Object.entries(stack.hosts)) {
    const cap = h.limits.memoryBytes;
    if (cap === undefined || host === LOADGEN) continue;
    const below = floors.filter((f) => cap < f.floor.bytes);
    if (below.length === 0) continue;
    const what = below.length === floors.length
      ? `below what any component with a known floor needs to start (${below.map((f) => `${f.name} ${formatBytes(f.floor.bytes)}`).join(", ")})`
      : `too small for ${below.map((f) => `${f.name} (needs ${formatBytes(f.floor.bytes)})`).join(", ")} to start`;
    out.push(`${memoryField(stack, host)}: a memory cap of ${formatBytes(cap)} is ${what}: a run of ${below.length === floors.length ? "any of them" : "those"} on host ${host} is refused (E_CAP_TOO_SMALL)`);
  }
  return out;
}
