/**
 * Version gate before load starts: every component must run its pinned version, and the hosts that run the same
 * component (two collector hosts of a scale-out stack) must run the same version — a comparison between hosts that
 * run different builds measures the builds, not the scale-out.
 */
import { VerificationError } from "../../core/errors.ts";

/** One running instance: the host it runs on, the pin it was started with, the version it reports. */
export interface RunningVersion {
  host: string;
  pinned: string;
  running: string;
}

/**
 * @param component catalog name, e.g. "syslog-ng"
 * @param matchesPin the component factory's pin rule (e.g. "3.38" is satisfied by "3.38.1")
 * @throws VerificationError E_VERSION naming the host(s) and both versions, when an instance does not match its pin or
 *   two instances report different versions
 */
export function checkVersions(
  component: string,
  instances: readonly RunningVersion[],
  matchesPin: (pinned: string, running: string) => boolean,
): void {
  for (const v of instances) {
    if (!matchesPin(v.pinned, v.running)) {
      throw new VerificationError(
        "E_VERSION",
        `${component} on host ${v.host} runs version ${v.running} but the scenario pins ${v.pinned}; refusing to start`,
      );
    }
  }
  const first = instances[0];
  const other = instances.find((v) => v.running !== first?.running);
  if (first && other) {
    throw new VerificationError(
      "E_VERSION",
      `${component} runs version ${first.running} on host ${first.host} but version ${other.running} on host ${other.host}; all hosts running ${component} must run one version; refusing to start`,
    );
  }
}

/** Hosts that run the collector: `collector`, or `collector-1`, `collector-2`, … (in numeric order). */
export function collectorHosts(hostNames: readonly string[]): string[] {
  const num = (h: string): number => (h === "collector" ? 0 : Number(h.slice("collector-".length)));
  return hostNames.filter((h) => /^collector(-\d+)?$/.test(h)).sort((a, b) => num(a) - num(b));
}
