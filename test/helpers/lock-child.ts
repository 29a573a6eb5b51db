/**
 * A harness process holding a stack lock, for test/harness/runner/stack-lock.test.ts: takes the lock of the stack
 * in argv[2] as a run does (harness/runner/stack-lock.ts acquireStackLock), prints `locked <pid>` and waits to be
 * killed; it never releases the lock itself. Environment: TMPDIR (where the lock goes).
 */
import { acquireStackLock } from "../../harness/runner/stack-lock.ts";

const lock = acquireStackLock(process.argv[2]!, "bench");
process.stdout.write(`locked ${lock.holder.ownerPid}\n`);
setInterval(() => {}, 60_000);
