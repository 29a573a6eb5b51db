/**
 * Run ids for tests that create a run's namespaces or cgroups directly (without LocalPlatform, which writes its own
 * marker): each id gets this process's owner marker (infra/local/platform.ts writeOwnerMarker), so that a `gc` of
 * another test or lane running at the same time leaves them alone (gc takes a run without a live owner for a
 * leftover). The returned `release` removes the marker; call it after the test has removed what it created.
 */
import { randomBytes } from "node:crypto";
import { processStartTicks, removeOwnerMarker, writeOwnerMarker } from "../../infra/local/platform.ts";

/** A fresh 6-hex run id owned by this process, and the function that gives the ownership up. */
export function ownedRunId(): { runId: string; release: () => Promise<boolean> } {
  const runId = randomBytes(3).toString("hex");
  const ticks = processStartTicks(process.pid);
  writeOwnerMarker({
    runId,
    ownerPid: process.pid,
    ...(ticks === undefined ? {} : { ownerStartTicks: ticks }),
  });
  return { runId, release: () => removeOwnerMarker(runId) };
}
