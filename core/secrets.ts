/**
 * Credentials of the sinks (GridDB, Elasticsearch, OpenSearch, Loki, ClickHouse, PostgreSQL) and how they are kept
 * out of everything ingestbench writes (docs/design.md, "Secrets").
 *
 * - Where a password comes from: the environment variable `INGESTBENCH_<SINK>_PASSWORD` (sink name upper-cased,
 *   `-` → `_`; e.g. INGESTBENCH_GRIDDB_PASSWORD) on the local platform and in the harness (the verifier and the
 *   generators), and on docker and azure stacks the Pulumi config secret `ingestbench:<sink>Password`
 *   (`pulumi config set --secret ingestbench:griddbPassword …`, read by the Pulumi program with
 *   `config.getSecret`, infra/secrets.ts). There is no default password anywhere.
 * - Where it must never appear: results (run.json, series.jsonl), reports, logs, progress output, command lines
 *   echoed in errors, rendered configs on disk unless their mode is 0600. Every value this module hands out is
 *   remembered (`knownSecrets`), and `redact` replaces each with `[redacted]`; writers of text that may quote a
 *   command line or a config (error messages, the run record) pass it through `redact`.
 */
import { createHash } from "node:crypto";
import { chmodSync, writeFileSync } from "node:fs";

/** The sinks that may have a password (each has INGESTBENCH_<SINK>_PASSWORD and ingestbench:<sink>Password). */
export const PASSWORD_SINKS = [
  "griddb",
  "elasticsearch",
  "opensearch",
  "loki",
  "clickhouse",
  "postgres",
] as const;

/** A sink that may have a password. */
export type PasswordSink = (typeof PASSWORD_SINKS)[number];

/**
 * The user each sink's clients authenticate as when its params name none: PostgreSQL's bootstrap role `postgres`
 * (initdb -U postgres), ClickHouse's `default` (users.xml), Elasticsearch's built-in superuser `elastic` (the image's
 * ELASTIC_PASSWORD), OpenSearch's `admin` (OPENSEARCH_INITIAL_ADMIN_PASSWORD), GridDB's `admin`, and for Loki, which
 * has no users of its own (an authenticating proxy in front checks Basic auth: Grafana's Loki docs, "Authentication"),
 * `ingestbench`.
 */
export const SINK_DEFAULT_USERS: Readonly<Record<PasswordSink, string>> = {
  griddb: "admin",
  elasticsearch: "elastic",
  opensearch: "admin",
  loki: "ingestbench",
  clickhouse: "default",
  postgres: "postgres",
};

/** The text a secret is replaced with by `redact`. */
export const REDACTED = "[redacted]";

const known = new Set<string>();

/** The environment variable holding the password of `sink`: `INGESTBENCH_<SINK>_PASSWORD` (e.g. INGESTBENCH_GRIDDB_PASSWORD). */
export function passwordEnvName(sink: string): string {
  return `INGESTBENCH_${sink.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_PASSWORD`;
}

/** The Pulumi config key holding the password of `sink` as a secret: `ingestbench:<sink>Password` (e.g. ingestbench:griddbPassword). */
export function passwordConfigKey(sink: string): string {
  return `ingestbench:${sink.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}Password`;
}

/**
 * The password of `sink` from `env` (`INGESTBENCH_<SINK>_PASSWORD`), or undefined when unset or empty. The value is
 * remembered for `redact`.
 */
export function sinkPassword(sink: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env[passwordEnvName(sink)];
  if (v === undefined || v === "") return undefined;
  rememberSecret(v);
  return v;
}

/** `{ password }` for a client's connection options when `sink` has a password in `env`, else `{}`. */
export function passwordOption(sink: string, env: NodeJS.ProcessEnv = process.env): { password?: string } {
  const password = sinkPassword(sink, env);
  return password !== undefined ? { password } : {};
}

/** Remember `value` as a secret, so that `redact` hides it (values shorter than 4 characters are too common to redact reliably and are still remembered). */
export function rememberSecret(value: string): void {
  if (value.length > 0) known.add(value);
}

/** Every secret remembered in this process (for tests and for child processes' redaction). */
export function knownSecrets(): string[] {
  return [...known];
}

/**
 * `text` with every remembered secret (and each of `extra`) replaced by `[redacted]`, longest first (so a secret
 * containing another is hidden whole). Also hides the value of `password=…`/`PASSWORD=…` assignments whose variable
 * ends in PASSWORD, whatever its value, as a second line of defence for echoed env and command lines.
 */
export function redact(text: string, extra: readonly string[] = []): string {
  let out = text;
  for (const s of [...known, ...extra].filter((x) => x.length > 0).sort((a, b) => b.length - a.length))
    out = out.split(s).join(REDACTED);
  return out.replace(/\b([A-Z0-9_]*PASSWORD)=(?!\[redacted\])[^\s"',;]+/g, `$1=${REDACTED}`);
}

/** `value` (any JSON-able value) with every string passed through `redact`. */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redactDeep(v)]),
    ) as T;
  }
  return value;
}

/**
 * Write a file that holds a secret (a rendered config with a password, a pwfile): created with mode 0600 and
 * chmod-ed again (an existing file keeps its mode on writeFileSync).
 */
export function writeSecretFile(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** `Basic <base64(user:password)>`, the Authorization header value of HTTP Basic authentication (RFC 7617 section 2). */
export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

/** The user of `sink`'s clients: `params.user`, else SINK_DEFAULT_USERS (a sink without a password entry: undefined). */
export function sinkUser(sink: string, params: Readonly<Record<string, string>> = {}): string | undefined {
  return params.user ?? (SINK_DEFAULT_USERS as Record<string, string>)[sink];
}

/**
 * The credentials of `sink` when INGESTBENCH_<SINK>_PASSWORD is set in `env`: `{ user, password, variable }`
 * (user from sinkUser), else undefined (the sink runs without authentication).
 */
export function sinkCredentials(
  sink: string,
  params: Readonly<Record<string, string>> = {},
  env: NodeJS.ProcessEnv = process.env,
): { user: string; password: string; variable: string } | undefined {
  const password = sinkPassword(sink, env);
  const user = sinkUser(sink, params);
  return password !== undefined && user !== undefined
    ? { user, password, variable: passwordEnvName(sink) }
    : undefined;
}

/** `{ Authorization: "Basic …" }` for an HTTP client of `sink` when it has a password in `env` (sinkCredentials), else `{}`. */
export function sinkAuthHeaders(
  sink: string,
  params: Readonly<Record<string, string>> = {},
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const c = sinkCredentials(sink, params, env);
  return c ? { Authorization: basicAuthorization(c.user, c.password) } : {};
}

/**
 * What a collector's rendered config needs to authenticate to `sink`: the user and the name of the environment
 * variable holding the password (the config refers to the variable, in each collector's own syntax, and never holds
 * the value: the container gets the variable from a Pulumi secret, infra/secrets.ts), or undefined when `env` has no
 * password for the sink.
 */
export function collectorAuth(
  sink: string,
  params: Readonly<Record<string, string>> = {},
  env: NodeJS.ProcessEnv = process.env,
): { user: string; variable: string } | undefined {
  const c = sinkCredentials(sink, params, env);
  return c ? { user: c.user, variable: c.variable } : undefined;
}

/** The lowercase hex SHA-256 of `password` (UTF-8), ClickHouse's users.xml `<password_sha256_hex>` (ClickHouse docs, "Settings → Users"). */
export function sha256Hex(password: string): string {
  return createHash("sha256").update(password, "utf8").digest("hex");
}

/** Who a client of `sink` authenticates as, and whether `env` gave it a password: what `authRefusal` names. */
export interface SinkLogin {
  sink: string;
  user: string;
  passwordGiven: boolean;
}

/** The SinkLogin of a client of `sink` with `params` (user: sinkUser, else "default") in `env`. */
export function sinkLogin(
  sink: string,
  params: Readonly<Record<string, string>> = {},
  env: NodeJS.ProcessEnv = process.env,
): SinkLogin {
  return {
    sink,
    user: sinkUser(sink, params) ?? "default",
    passwordGiven: sinkPassword(sink, env) !== undefined,
  };
}

/**
 * The message of a sink refusing the harness's credentials: names the user and the variable the password came from
 * (or, without one, that the sink asked for a password none was given for); never the password.
 */
export function authRefusal({ sink, user, passwordGiven }: SinkLogin): string {
  const v = passwordEnvName(sink);
  return passwordGiven
    ? `${sink} refused user "${user}" with the password from ${v}: check ${v} (and, on docker and azure stacks, ${passwordConfigKey(sink)})`
    : `${sink} asks user "${user}" for a password and none is set: set ${v}`;
}
