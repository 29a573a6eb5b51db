/**
 * syslog-ng's own counts on deployed stacks: it has no HTTP metrics endpoint, so they are read inside its container
 * with `syslog-ng-ctl stats -c <control socket>` (the container's socket, ./render.ts) and parsed as on the local
 * platform (./component.ts parseStats: received, written, dropped, queued; core/claims.ts has the keys).
 */
import { CLAIMS_TIMEOUT_MS, type ShellClaims } from "../../../core/claims.ts";
import { parseStats } from "./component.ts";
import { SYSLOG_NG_CONTAINER_PATHS } from "./render.ts";

export const claims: ShellClaims = {
  kind: "shell",
  read: async (run) =>
    parseStats(
      await run("syslog-ng-ctl", ["stats", "-c", SYSLOG_NG_CONTAINER_PATHS.control], {
        timeoutMs: CLAIMS_TIMEOUT_MS,
      }),
    ),
};
