/**
 * Resource exhaustion named from what the components and generators wrote, so that a run that ran out of disk,
 * ephemeral ports or a collector's buffer says so (run.json `exhaustion`, the run's error and its bottleneck,
 * ./run.ts reportExhaustion) instead of showing an unexplained loss:
 *
 * - a full disk: ENOSPC, strerror(28) "No space left on device" (PostgreSQL: `could not extend file …: No space left
 *   on device`), ClickHouse's `NOT_ENOUGH_SPACE` / `Cannot reserve …, not enough space`; with the df of the host's
 *   data volume as evidence (the site reads it);
 * - an exhausted ephemeral port range: EADDRNOTAVAIL, strerror(99) "Cannot assign requested address" (connect(2):
 *   "no more free local ports or insufficient entries in the routing cache"), as Node prints it (`connect
 *   EADDRNOTAVAIL 10.0.0.2:5432 - Local (0.0.0.0:0)`) or a collector logs it;
 * - a collector's buffer overflow: Fluentd's `Fluent::Plugin::Buffer::BufferOverflowError` ("buffer space has too
 *   many data", raised by lib/fluent/plugin/buffer.rb `write` once total_limit_size is reached; with
 *   `overflow_action throw_exception` it reaches the input, which logs it and refuses the events), and its warning
 *   "failed to write data into buffer by buffer overflow" (not with `action=:block`: then the write waits, nothing is
 *   refused or dropped).
 *
 * Each rule matches a line; the first matching line per kind and source is kept (trimmed to LINE_MAX characters).
 */

/** The kinds of exhaustion named, with the run's error code for each. */
export const EXHAUSTION_CODES = {
  "disk-full": "E_DISK_FULL",
  ports: "E_PORTS_EXHAUSTED",
  "buffer-overflow": "E_BUFFER_OVERFLOW",
} as const;
export type ExhaustionKind = keyof typeof EXHAUSTION_CODES;

/** One named exhaustion: where it was seen, the line that says it, and further evidence (e.g. the volume's df). */
export interface Exhaustion {
  kind: ExhaustionKind;
  /** the host role (loadgen for a generator's error) */
  host: string;
  /** what was read: "postgres.log", "docker logs ib-s-collector", "generator 0 errors", "the run's error" */
  source: string;
  line: string;
  evidence?: string;
}

const LINE_MAX = 300;

/** The rules, in the order the kinds are reported. */
const RULES: ReadonlyArray<{ kind: ExhaustionKind; test: RegExp }> = [
  {
    kind: "disk-full",
    test: /\bENOSPC\b|No space left on device|\bNOT_ENOUGH_SPACE\b|Cannot reserve [^,]*, not enough space/i,
  },
  { kind: "ports", test: /\bEADDRNOTAVAIL\b|Cannot assign requested address/i },
  {
    kind: "buffer-overflow",
    // with `overflow_action block` the warning is backpressure, not loss: output.rb's write rescues the error and waits
    // until the buffer is storable (seen on a real Fluentd 1.12.0, docs/measurements.md "Fluentd's flush time and queue")
    test: /\bBufferOverflowError\b|buffer space has too many data|failed to write data into buffer by buffer overflow(?!.*action=:block)/,
  },
];

/** The exhaustion lines in `text` (a log, an error message): the first line per kind. */
export function classifyLog(text: string): Array<{ kind: ExhaustionKind; line: string }> {
  const out: Array<{ kind: ExhaustionKind; line: string }> = [];
  const lines = text.split(/\r?\n/);
  for (const rule of RULES) {
    const hit = lines.find((l) => rule.test.test(l));
    if (hit !== undefined) {
      const t = hit.trim();
      out.push({ kind: rule.kind, line: t.length > LINE_MAX ? `${t.slice(0, LINE_MAX - 1)}…` : t });
    }
  }
  return out;
}

/** classifyLog of each source's text, as Exhaustion entries of `host`. */
export function exhaustionIn(
  host: string,
  sources: ReadonlyArray<{ source: string; text: string }>,
): Exhaustion[] {
  return sources.flatMap((s) => classifyLog(s.text).map((h) => ({ ...h, host, source: s.source })));
}

/** One entry per kind and host (the first source that showed it), evidence merged. */
export function dedupeExhaustion(list: readonly Exhaustion[]): Exhaustion[] {
  const seen = new Map<string, Exhaustion>();
  for (const e of list) {
    const k = `${e.kind}@${e.host}`;
    const prev = seen.get(k);
    if (!prev) seen.set(k, { ...e });
    else if (!prev.evidence && e.evidence) prev.evidence = e.evidence;
  }
  return [...seen.values()];
}

/** The run's error message for exhaustion entries: per entry, kind, host, the line and its source, the evidence. */
export function exhaustionMessage(list: readonly Exhaustion[]): string {
  const what: Record<ExhaustionKind, string> = {
    "disk-full": "ran out of disk space (ENOSPC)",
    ports: "ran out of ephemeral ports (EADDRNOTAVAIL)",
    "buffer-overflow": "overflowed its collector buffer (BufferOverflowError)",
  };
  return list
    .map(
      (e) => `host ${e.host} ${what[e.kind]}: ${e.source}: ${e.line}${e.evidence ? ` (${e.evidence})` : ""}`,
    )
    .join("; ");
}

/** The bottleneck resource an exhaustion names (harness/results/types.ts Resource). */
export function exhaustionResource(kind: ExhaustionKind): "disk" | "network" | "memory" {
  return kind === "disk-full" ? "disk" : kind === "ports" ? "network" : "memory";
}
