/**
 * Ctrl-C for commands that deploy Pulumi stacks: SIGINT/SIGTERM abort a signal (the update in flight is cancelled
 * and the stack destroyed by the code holding it); a second signal only says that the teardown is still running,
 * as harness/runner/drive.ts does for local runs (its handler is inline there, so this is the same policy in a
 * reusable form).
 */

/** Exit code of an interrupted command: 130 for SIGINT, 143 for SIGTERM (128 + signal number). */
export function interruptedExitCode(sig: NodeJS.Signals): number {
  return sig === "SIGTERM" ? 143 : 130;
}

/** The signal that SIGINT/SIGTERM abort (reason: the signal name), and `dispose` to remove the handlers. */
export interface InterruptHandle {
  signal: AbortSignal;
  /** the signal received, null while none was */
  interrupted(): NodeJS.Signals | null;
  dispose(): void;
}

/** Install SIGINT/SIGTERM handlers that abort a signal; call dispose() when the command is done. */
export function installInterruptHandlers(): InterruptHandle {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      process.stderr.write(`\n${sig} again: still tearing down, please wait\n`);
      return;
    }
    process.stderr.write(`\n${sig}: stopping; cancelling the Pulumi update and destroying the stack\n`);
    controller.abort(sig);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    interrupted: () => (controller.signal.aborted ? (controller.signal.reason as NodeJS.Signals) : null),
    dispose: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
