/**
 * Errors typed by intent (after Rally's SystemSetupError family). Only the CLI maps them to exit codes.
 *
 * - ConfigurationError: the user's input is wrong (stack or scenario file, CLI flag). Exit code 2.
 * - ProvisioningError: the platform could not create or read back hosts, limits or components. Exit code 3.
 * - VerificationError: the sink or a check disagrees with what was sent (version mismatch, failed check). Exit code 4.
 *
 * Every error carries a stable `code` (string, e.g. "E_STACK_FIELD") and optionally its `cause`.
 */
export class IngestbenchError extends Error {
  readonly code: string;
  readonly exitCode: number = 1;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The user's input is wrong. `location` is "file:line" when known, `field` a dotted path such as "config.ingestbench:hosts.sink.cpu". */
export class ConfigurationError extends IngestbenchError {
  override readonly exitCode = 2;
  readonly location?: string;
  readonly field?: string;
  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; location?: string; field?: string },
  ) {
    super(code, message, options);
    this.location = options?.location;
    this.field = options?.field;
  }
}

/** Hosts, limits or components could not be created, started or read back. */
export class ProvisioningError extends IngestbenchError {
  override readonly exitCode = 3;
}

/** The measurement disagrees with what was expected: version mismatch, failed check, stored > sent. */
export class VerificationError extends IngestbenchError {
  override readonly exitCode = 4;
}

/** The error of a run step cut short by its abort signal (SIGINT/SIGTERM): what was measured so far is kept. */
export function interruptedError(signal: AbortSignal): IngestbenchError {
  return new IngestbenchError(
    "E_INTERRUPTED",
    `interrupted (${String(signal.reason ?? "signal")}); results so far are kept`,
  );
}

/**
 * `p`, or the interruptedError of `signal` as soon as it aborts, whichever comes first: a verifier query that takes
 * minutes (a completion check over a large table under the sink's CPU cap) must not hold Ctrl-C until it returns. The
 * query itself is left to end or fail when its server is torn down; its outcome is then ignored.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(interruptedError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(interruptedError(signal));
    signal.addEventListener("abort", abort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", abort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(e);
      },
    );
  });
}
