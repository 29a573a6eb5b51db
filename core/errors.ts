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
  constructor(code: string, message: string, options?: { cause?: unknown; location?: string; field?: string }) {
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
  return new IngestbenchError("E_INTERRUPTED", `interrupted (${String(signal.reason ?? "signal")}); results so far are kept`);
}
