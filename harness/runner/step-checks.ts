/**
 * A scenario's fault steps checked against the stack before anything is provisioned or deployed (the local platform:
 * ./local-site.ts checkRunnableLocally; docker: harness/provision/deployed.ts), so that a step this cell cannot run is
 * a configuration error (exit 2) and not a failed timeline entry after minutes of load.
 */
import type { StackSpec } from "../../core/limits.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { netemAvailable } from "../../infra/local/netns.ts";
import type { CellPlan } from "./cell-plan.ts";
import { socketDestroyAvailable } from "./step-scripts.ts";

/**
 * Every step must name hosts the cell runs on (`roles`, harness/runner/site.ts hostRoles); delay or loss need netem in
 * this kernel (local and docker hosts share it); `disk-full` needs a host whose data directory is size-capped (the
 * stack's `disk: { tmpfs: … }`: a volume on this machine's own filesystem is every process's disk, filling it would
 * hit them all); `drop-connections` needs socket destruction in this kernel (CONFIG_INET_DIAG_DESTROY, for ss -K).
 * @throws ConfigurationError E_STEP_HOST, E_STEP_NETEM, E_STEP_DISK, E_STEP_SOCKET_DESTROY naming the step (steps.N)
 *         and what to do
 */
export function checkSteps(
  stack: Pick<StackSpec, "name" | "hosts">,
  roles: readonly string[],
  plan: Pick<CellPlan, "scenario" | "steps">,
): void {
  for (const s of plan.steps ?? []) {
    const field = `steps.${s.index}`;
    const a = s.action;
    const named = "host" in a ? [a.host, ...(a.kind === "drop-connections" && a.peer ? [a.peer] : [])] : [];
    for (const h of named) {
      if (!roles.includes(h)) {
        throw new ConfigurationError(
          "E_STEP_HOST",
          `scenario ${plan.scenario}: step ${s.index} (${s.name}) names host "${h}", which this cell does not run on; its hosts: ${roles.join(", ")}`,
          { field },
        );
      }
    }
    if (a.kind === "network" && (a.change.delayMs !== undefined || a.change.lossPercent !== undefined)) {
      const netem = netemAvailable();
      if (netem.available === false) {
        throw new ConfigurationError(
          "E_STEP_NETEM",
          `scenario ${plan.scenario}: step ${s.index} (${s.name}) needs netem for delay or loss, and this kernel has none (${netem.reason}); change bandwidth only, or run on a kernel with CONFIG_NET_SCH_NETEM`,
          { field },
        );
      }
    }
    if (a.kind === "disk-full" && stack.hosts[a.host]?.limits.disk?.tmpfsBytes === undefined) {
      throw new ConfigurationError(
        "E_STEP_DISK",
        `scenario ${plan.scenario}: step ${s.index} (${s.name}) fills host ${a.host}'s data volume, which stack ${stack.name} does not cap in size: it is this machine's (or the Docker engine's) own filesystem, shared with every other process; give the host a size-capped data directory (\`disk: { tmpfs: 256MiB }\` under ingestbench:hosts.${a.host})`,
        { field },
      );
    }
    if (a.kind === "drop-connections") {
      const d = socketDestroyAvailable();
      if (d.available === false) {
        throw new ConfigurationError(
          "E_STEP_SOCKET_DESTROY",
          `scenario ${plan.scenario}: step ${s.index} (${s.name}) closes connections with ss -K, and this kernel cannot destroy sockets (${d.reason}); use a kill or restart step instead, or a kernel with CONFIG_INET_DIAG_DESTROY=y`,
          { field },
        );
      }
    }
  }
}
