/**
 * Errors as data, for the `--json` output of `validate`: an IngestbenchError's message, whose lines name
 * "file:line:col: field.path: problem" (core/yaml.ts formatIssue) where the position is known, split into one
 * diagnostic per problem.
 */
import { ConfigurationError, IngestbenchError } from "../../core/errors.ts";

/** One problem of one file; line and col are 1-based, null (as field) when the error does not name them. */
export interface Diagnostic {
  file: string;
  line: number | null;
  col: number | null;
  /** dotted field path, e.g. "config.ingestbench:hosts.sink.cpu" */
  field: string | null;
  message: string;
  /** the error's stable code, e.g. "E_STACK_FIELD" */
  code: string;
}

/** "file:line:col: rest" as formatIssue and the YAML loader write it (the file may itself contain colons). */
const POSITIONED = /^(.+?):(\d+):(\d+): (.*)$/;
const SEGMENT = String.raw`(?:[\w$@=-]+(?::[\w$@=-]+)*|"(?:[^"\\]|\\.)*")`;
/** A leading field path, as core/yaml.ts fieldText writes it: segments joined by ".", odd keys JSON-quoted. */
const FIELD = new RegExp(String.raw`^(${SEGMENT}(?:\.${SEGMENT})*): (.+)$`, "s");

/**
 * Split an IngestbenchError raised for `file` into diagnostics: one per positioned line of its message; a line
 * without a position continues the previous problem (or, first, is a problem of its own, positioned by the error's
 * `location` "file:line" when it has one).
 */
export function diagnosticsOf(err: IngestbenchError, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const text of err.message.split("\n")) {
    const m = POSITIONED.exec(text);
    if (m) {
      const f = FIELD.exec(m[4]!);
      out.push({
        file: m[1]!,
        line: Number(m[2]),
        col: Number(m[3]),
        field: f ? f[1]! : null,
        message: f ? f[2]! : m[4]!,
        code: err.code,
      });
    } else if (out.length > 0) {
      out[out.length - 1]!.message += `\n${text}`;
    } else {
      const location = err instanceof ConfigurationError ? err.location : undefined;
      const line = location ? /:(\d+)$/.exec(location)?.[1] : undefined;
      const field = err instanceof ConfigurationError ? (err.field ?? null) : null;
      out.push({ file, line: line ? Number(line) : null, col: null, field, message: text, code: err.code });
    }
  }
  return out;
}
