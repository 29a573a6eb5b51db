/**
 * The collectors' own counts ("claims") on deployed docker and azure stacks, read by the harness: each collector
 * plugin says how (its `claims`, core/claims.ts: over HTTP from its metrics endpoint, e.g.
 * plugins/collectors/fluent-bit/claims.ts, or inside its container, plugins/collectors/syslog-ng/claims.ts); this
 * module reads an HTTP one at the ports the stack outputs publish for one collector host.
 */
import type { HttpClaims } from "../../core/claims.ts";
import { IngestbenchError } from "../../core/errors.ts";
import { harnessAddress, type StackOutputs } from "../../core/outputs.ts";
import { sumCounts } from "../runner/site.ts";

/**
 * One collector host's claims on a deployed stack: every port `claims` names (HttpClaims.ports), each as this
 * machine reaches it (its published port: core/outputs.ts harnessAddress), read and summed.
 * Arguments as readPortClaims (`name`: the collector plugin's name, its endpoints' key in the outputs).
 * @throws IngestbenchError E_CLAIMS when the outputs give the host no metrics endpoint or a port is not published
 *         (a partial sum would pass for the whole), or as HttpClaims.read
 */
export async function readHostClaims(
  ...args: Parameters<typeof readPortClaims>
): Promise<Record<string, number>> {
  return sumCounts(await readPortClaims(...args));
}

/**
 * One collector host's claims per port, in the order `claims` names its ports (Fluentd: worker w's monitor_agent is
 * the w-th), unsummed: what a `generator: none` run counts per generator index (core/plugin.ts SelfLoad perPort).
 * @throws as readHostClaims
 */
export async function readPortClaims(
  outputs: StackOutputs,
  name: string,
  claims: HttpClaims,
  host: string,
  config: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Array<Record<string, number>>> {
  const ep = (outputs.endpoints[name] ?? []).find((e) => e.host === host);
  if (!ep?.metrics)
    throw new IngestbenchError(
      "E_CLAIMS",
      `stack ${outputs.stack}: no ${name} metrics endpoint on ${host} in the outputs`,
    );
  const ports = claims.ports?.(ep.metrics.port, config) ?? [ep.metrics.port];
  const targets = ports.map((port) => {
    const at = harnessAddress(outputs, ep, port);
    if (!at) {
      throw new IngestbenchError(
        "E_CLAIMS",
        `stack ${outputs.stack}: ${host}'s ${name} metrics port ${port} is not published in the outputs (published: ${ep.published.map((p) => p.internal).join(", ") || "none"}); its counts cannot be read from here`,
      );
    }
    return at;
  });
  return Promise.all(targets.map((at) => claims.read(at, signal)));
}
