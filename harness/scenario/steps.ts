/**
 * A scenario's `steps:` (fault steps), validated at the edge like the rest of the scenario (errors name
 * file:line:col and the field, through core/yaml.ts). Each step fires once, at a time offset from the start of load
 * (`at`, the run's t0: after the generators are up) or on the first sample that meets a condition (`when`), and does
 * exactly one thing to one host, named by its role in the stack (loadgen, collector / collector-N, sink):
 *
 * ```yaml
 * steps:
 *   - { at: 3s, kill: collector }                 # SIGKILL the host's component (its main process)
 *   - { at: 4s, restart: collector }              # stop what is left of it, start it again (same config, host, downstream)
 *   - { when: stored >= 20000, stop: collector }  # SIGSTOP (freeze) …
 *   - { at: 6s, cont: collector }                 # … SIGCONT (thaw)
 *   - { at: 2s, exec: { host: sink, command: "ss -tn" } }            # a command in the host (its netns and cgroup)
 *   - { at: 2s, network: { host: sink, bandwidth: 1MiB/s } }        # change the host link (tc tbf; delay/loss need netem)
 *   - { at: 2s, script: steps/flap.mjs, timeout: 20s, fault: true } # a zx script (harness/runner/steps.ts StepContext)
 *   - { at: 2s, disk-full: { host: sink, level: 100% } }            # fill the host's size-capped data volume (default 100%)
 *   - { at: 2s, drop-connections: { host: collector, peer: sink } } # destroy their TCP connections (ss -K; default peer: downstream)
 * ```
 *
 * `name` (default e.g. "kill collector"), `timeout` (default 30s) and `fault` (whether run.json `faults` accounts for
 * the step; default true for kill, stop, restart, network, disk-full and drop-connections, false for cont, exec and script) are optional.
 *
 * Conditions (`when`): `stored`, `sent` or `elapsed` (seconds since t0) compared with `>=`, `>`, `<=` or `<` to a
 * number, evaluated on every sample of the load phase (so the step fires up to one interval after the condition
 * first holds). A step whose time or condition never comes during the load is recorded as skipped.
 */
import { existsSync } from "node:fs";
import nodePath from "node:path";
import { z } from "zod";
import { addFlatIssue } from "../../core/yaml.ts";
import { parseDuration, parsePercent, parseRate, parseRunDuration, zUnit } from "../../core/units.ts";

/** What a step does to its host's component: SIGKILL, SIGSTOP, SIGCONT, or stop then start again. */
export const SIGNAL_ACTIONS = ["kill", "stop", "cont", "restart"] as const;
export type SignalAction = (typeof SIGNAL_ACTIONS)[number];
/** Every step action. */
export const STEP_ACTIONS = [
  ...SIGNAL_ACTIONS,
  "exec",
  "network",
  "script",
  "disk-full",
  "drop-connections",
] as const;
export type StepActionName = (typeof STEP_ACTIONS)[number];

/** Host roles a step may name (harness/runner/site.ts hostRoles). */
const HOST_ROLE = /^(loadgen|sink|collector(-[1-9][0-9]*)?)$/;
const HOST_ROLE_TEXT = `a host role: loadgen, collector (collector-1, collector-2, … in a scale-out) or sink`;

/** `when: stored >= 20000`: the metric, the comparison and the number, as written in `text`. */
export interface StepCondition {
  metric: "stored" | "sent" | "elapsed";
  op: ">=" | ">" | "<=" | "<";
  value: number;
  text: string;
}

/** A link change: any of bandwidth (bytes/s), delay (ms), loss (percent). */
export interface NetworkChange {
  bandwidthBytesPerSec?: number;
  delayMs?: number;
  lossPercent?: number;
}

/** What a step does. `host` is a role of the stack (loadgen, collector, collector-N, sink). */
export type StepAction =
  | { kind: SignalAction; host: string }
  | { kind: "exec"; host: string; command: string }
  | { kind: "network"; host: string; change: NetworkChange; text: string }
  | { kind: "script"; file: string }
  /** fill the host's data volume until `levelPercent` of it is used (a file written there, harness/runner/step-scripts.ts) */
  | { kind: "disk-full"; host: string; levelPercent: number }
  /** destroy the established TCP connections between `host` and `peer` (a host role; null: the host's downstream, or upstream for the sink) */
  | { kind: "drop-connections"; host: string; peer: string | null };

/** One validated step. `index` is its place in the list (0-based); `name` defaults to e.g. "kill collector". */
export interface Step {
  index: number;
  name: string;
  /** ms after t0 (the start of load), or a condition on the samples */
  trigger: { atMs: number; text: string } | { when: StepCondition };
  action: StepAction;
  /** most time the step's action may take, ms (default 30 s); a step past it is recorded with exit status "timeout" */
  timeoutMs: number;
  /**
   * whether the run's `faults` account for it (harness/runner/fault-cost.ts): `fault:` as written, else true for
   * kill, stop, restart and network, false for cont, exec and script (which end a fault or observe)
   */
  fault: boolean;
}

/** Default `timeout` of a step, ms. */
export const DEFAULT_STEP_TIMEOUT_MS = 30_000;

const CONDITION = /^\s*(stored|sent|elapsed)\s*(>=|>|<=|<)\s*([0-9][0-9_]*(\.[0-9]+)?)\s*$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Parse `stored >= 20000` (see the file comment); null when it is not one. */
export function parseCondition(text: string): StepCondition | null {
  const m = CONDITION.exec(text);
  if (!m) return null;
  return {
    metric: m[1] as StepCondition["metric"],
    op: m[2] as StepCondition["op"],
    value: Number(m[3]!.replace(/_/g, "")),
    text: text.trim(),
  };
}

const METRICS = ["stored", "sent", "elapsed"] as const;
const OPERATORS = [">=", ">", "<=", "<"] as const;

/**
 * Why `text` is not a condition, in words, for the `when:` error: which part is wrong (the metric, the operator or
 * the number) and what is allowed there, e.g. `unknown operator "=>" in "stored => 20000": the operators are >=, >,
 * <= and <`.
 */
export function conditionProblem(text: unknown): string {
  const example = `e.g. "stored >= 20000"`;
  if (typeof text !== "string")
    return `expected a condition "<metric> <operator> <number>" (${example}), got ${JSON.stringify(text)}`;
  const m = /^\s*([A-Za-z_]\w*)?\s*([^\w\s.]*)\s*(.*?)\s*$/.exec(text)!;
  const [, metric, op, value] = m;
  const allowed = `the operators are ${OPERATORS.slice(0, -1).join(", ")} and ${OPERATORS.at(-1)}`;
  if (!metric || !(METRICS as readonly string[]).includes(metric)) {
    return `${metric ? `unknown metric "${metric}"` : "no metric"} in "${text}": a condition compares ${METRICS.join(", ")} (elapsed: seconds since the load started), ${example}`;
  }
  if (!op) return `no operator in "${text}": ${allowed}, ${example}`;
  if (!(OPERATORS as readonly string[]).includes(op))
    return `unknown operator "${op}" in "${text}": ${allowed}, ${example}`;
  // `at:` takes a duration, a condition's elapsed a bare number of seconds: "elapsed >= 3s" → "elapsed >= 3"
  const unit = metric === "elapsed" ? /^([0-9]+(?:\.[0-9]+)?)\s*(ms|s)$/.exec(value ?? "") : null;
  if (unit)
    return `"${value}" is not a number in "${text}": elapsed counts seconds since the load started, without a unit: "elapsed ${op} ${unit[2] === "ms" ? Number(unit[1]) / 1000 : Number(unit[1])}"`;
  return `${value ? `"${value}" is not a number` : "no number"} in "${text}": a condition compares ${metric} ${op} a number such as 20000 or 20_000, ${example}`;
}

/** True when `x` meets the condition. */
export function conditionHolds(c: StepCondition, x: number): boolean {
  switch (c.op) {
    case ">=":
      return x >= c.value;
    case ">":
      return x > c.value;
    case "<=":
      return x <= c.value;
    case "<":
      return x < c.value;
  }
}

const TRIGGER_KEYS = ["at", "when"] as const;
const OTHER_KEYS = ["name", "timeout", "fault"] as const;
/** The actions that are faults unless a step says `fault: false`. */
const FAULT_BY_DEFAULT: ReadonlySet<string> = new Set([
  "kill",
  "stop",
  "restart",
  "network",
  "disk-full",
  "drop-connections",
]);

/**
 * The strict schema of one step. `baseDir` (the scenario's directory) resolves and checks a script's file.
 * Output: Step without `index` (set by stepsSchema).
 */
function stepSchema(baseDir: string | undefined) {
  return z.unknown().transform((v, ctx): Omit<Step, "index"> => {
    const example = `e.g. { at: 5s, kill: collector } or { when: stored >= 20000, stop: collector }`;
    if (!isPlainObject(v)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `a step is a map with a time (at) or a condition (when) and one action (${STEP_ACTIONS.join(", ")}), ${example}`,
      });
      return z.NEVER;
    }
    let bad = false;
    const issue = (path: (string | number)[], message: string, at: "key" | "value" = "value"): void => {
      addFlatIssue(ctx, { path, at, message });
      bad = true;
    };
    const keys = Object.keys(v);
    for (const k of keys) {
      if (
        !(STEP_ACTIONS as readonly string[]).includes(k) &&
        !(TRIGGER_KEYS as readonly string[]).includes(k) &&
        !(OTHER_KEYS as readonly string[]).includes(k)
      ) {
        issue(
          [k],
          `unknown key "${k}"; a step has at or when, one action of ${STEP_ACTIONS.join(", ")}, and optionally name and timeout`,
          "key",
        );
      }
    }
    // trigger
    const triggers = TRIGGER_KEYS.filter((k) => Object.hasOwn(v, k));
    let trigger: Step["trigger"] | undefined;
    if (triggers.length !== 1) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          triggers.length === 0
            ? `a step needs a time (at: 5s, from the start of load) or a condition (when: stored >= 20000), ${example}`
            : "give at or when, not both",
      });
      bad = true;
    } else if (triggers[0] === "at") {
      const r = zUnit(parseRunDuration).safeParse(v.at);
      if (!r.success)
        issue(
          ["at"],
          `${r.error.issues[0]?.message ?? "not a duration"} (a time from the start of load, e.g. 5s)`,
        );
      else trigger = { atMs: r.data, text: String(v.at) };
    } else {
      const c = typeof v.when === "string" ? parseCondition(v.when) : null;
      if (!c) issue(["when"], conditionProblem(v.when));
      else trigger = { when: c };
    }
    // action
    const actions = STEP_ACTIONS.filter((k) => Object.hasOwn(v, k));
    let action: StepAction | undefined;
    if (actions.length !== 1) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          actions.length === 0
            ? `a step needs one action: ${STEP_ACTIONS.join(", ")}, ${example}`
            : `one action per step, not ${actions.join(" and ")} (list them as separate steps)`,
      });
      bad = true;
    } else {
      const kind = actions[0]!;
      const x = v[kind];
      const hostOk = (h: unknown, path: (string | number)[]): h is string => {
        if (typeof h === "string" && HOST_ROLE.test(h)) return true;
        issue(path, `expected ${HOST_ROLE_TEXT}, got ${JSON.stringify(h)}`);
        return false;
      };
      if ((SIGNAL_ACTIONS as readonly string[]).includes(kind)) {
        if (hostOk(x, [kind])) {
          if (x === "loadgen")
            issue(
              [kind],
              `${kind}: the loadgen host runs the generators, not a component; name collector or sink (exec works on loadgen)`,
            );
          else action = { kind: kind as SignalAction, host: x };
        }
      } else if (kind === "exec") {
        if (!isPlainObject(x))
          issue(
            ["exec"],
            `expected { host: <role>, command: "<shell command>" }, e.g. { host: collector, command: "ss -tn" }`,
          );
        else {
          for (const k of Object.keys(x))
            if (k !== "host" && k !== "command")
              issue(["exec", k], `unknown key "${k}"; allowed keys: host, command`, "key");
          const okHost = hostOk(x.host, ["exec", "host"]);
          if (typeof x.command !== "string" || x.command.trim() === "")
            issue(
              ["exec", "command"],
              `expected a shell command (run with sh -c in the host), e.g. "ss -tn"`,
            );
          else if (okHost) action = { kind: "exec", host: x.host as string, command: x.command };
        }
      } else if (kind === "network") {
        if (!isPlainObject(x))
          issue(
            ["network"],
            `expected { host: <role>, bandwidth: <rate> } (and delay, loss where the kernel has netem), e.g. { host: sink, bandwidth: 1MiB/s }`,
          );
        else {
          const change: NetworkChange = {};
          for (const k of Object.keys(x))
            if (!["host", "bandwidth", "delay", "loss"].includes(k))
              issue(["network", k], `unknown key "${k}"; allowed keys: host, bandwidth, delay, loss`, "key");
          const okHost = hostOk(x.host, ["network", "host"]);
          const parse = <T>(key: string, f: (s: string | number) => T, what: string): T | undefined => {
            if (x[key] === undefined) return undefined;
            try {
              return f(x[key] as string | number);
            } catch (e) {
              issue(["network", key], `${what}: ${(e as Error).message}`);
              return undefined;
            }
          };
          const bw = parse("bandwidth", parseRate, "bandwidth");
          const delay = parse("delay", parseDuration, "delay");
          const loss = parse("loss", parsePercent, "loss");
          if (bw !== undefined) change.bandwidthBytesPerSec = bw;
          if (delay !== undefined) change.delayMs = delay;
          if (loss !== undefined) change.lossPercent = loss;
          if (x.bandwidth === undefined && x.delay === undefined && x.loss === undefined)
            issue(["network"], "give bandwidth, delay or loss (e.g. bandwidth: 1MiB/s)");
          const text = ["bandwidth", "delay", "loss"]
            .filter((k) => x[k] !== undefined)
            .map((k) => `${k} ${String(x[k])}`)
            .join(", ");
          if (okHost && !bad) action = { kind: "network", host: x.host as string, change, text };
        }
      } else if (kind === "disk-full") {
        // `disk-full: sink` or `{ host: sink, level: 90% }`
        const spec: Record<string, unknown> = isPlainObject(x) ? x : { host: x };
        for (const k of Object.keys(spec))
          if (k !== "host" && k !== "level")
            issue(["disk-full", k], `unknown key "${k}"; allowed keys: host, level`, "key");
        const path = isPlainObject(x) ? ["disk-full", "host"] : ["disk-full"];
        let level = 100;
        if (spec.level !== undefined) {
          try {
            level = parsePercent(spec.level as string | number);
            if (level <= 0)
              issue(
                ["disk-full", "level"],
                "level must be more than 0% (the share of the volume used once the step is done)",
              );
          } catch (e) {
            issue(["disk-full", "level"], `level: ${(e as Error).message}`);
          }
        }
        if (hostOk(spec.host, path)) {
          if (spec.host === "loadgen")
            issue(path, "disk-full: the loadgen host keeps no data volume; name collector or sink");
          else if (!bad) action = { kind: "disk-full", host: spec.host, levelPercent: level };
        }
      } else if (kind === "drop-connections") {
        // `drop-connections: collector` or `{ host: collector, peer: sink }`
        const spec: Record<string, unknown> = isPlainObject(x) ? x : { host: x };
        for (const k of Object.keys(spec))
          if (k !== "host" && k !== "peer")
            issue(["drop-connections", k], `unknown key "${k}"; allowed keys: host, peer`, "key");
        const okHost = hostOk(
          spec.host,
          isPlainObject(x) ? ["drop-connections", "host"] : ["drop-connections"],
        );
        const okPeer = spec.peer === undefined || hostOk(spec.peer, ["drop-connections", "peer"]);
        if (okHost && okPeer && spec.peer === spec.host)
          issue(["drop-connections", "peer"], "peer must be another host than host");
        else if (okHost && okPeer && !bad)
          action = {
            kind: "drop-connections",
            host: spec.host as string,
            peer: (spec.peer as string | undefined) ?? null,
          };
      } else {
        const file = typeof x === "string" ? x : isPlainObject(x) ? x.file : undefined;
        if (isPlainObject(x))
          for (const k of Object.keys(x))
            if (k !== "file") issue(["script", k], `unknown key "${k}"; allowed keys: file`, "key");
        if (typeof file !== "string" || !/\.mjs$/.test(file))
          issue(
            ["script"],
            `expected a zx script file ending in .mjs, relative to the scenario (e.g. steps/flap.mjs), got ${JSON.stringify(x)}`,
          );
        else {
          const resolved = baseDir !== undefined ? nodePath.resolve(baseDir, file) : file;
          if (baseDir !== undefined && !existsSync(resolved))
            issue(
              ["script"],
              `${resolved} does not exist (a relative path is relative to the scenario file)`,
            );
          else action = { kind: "script", file: resolved };
        }
      }
    }
    // timeout, name
    let timeoutMs = DEFAULT_STEP_TIMEOUT_MS;
    if (v.timeout !== undefined) {
      const r = zUnit(parseRunDuration).safeParse(v.timeout);
      if (!r.success) issue(["timeout"], r.error.issues[0]?.message ?? "not a duration");
      else if (r.data <= 0) issue(["timeout"], "timeout must be more than 0");
      else timeoutMs = r.data;
    }
    if (v.name !== undefined && (typeof v.name !== "string" || v.name.trim() === "" || v.name.length > 80))
      issue(["name"], "expected a short name (1 to 80 characters)");
    if (v.fault !== undefined && typeof v.fault !== "boolean")
      issue(["fault"], "expected true or false (whether the run accounts for this step's cost)");
    if (bad || !trigger || !action) return z.NEVER;
    const name = typeof v.name === "string" ? v.name : defaultName(action);
    return {
      name,
      trigger,
      action,
      timeoutMs,
      fault: typeof v.fault === "boolean" ? v.fault : FAULT_BY_DEFAULT.has(action.kind),
    };
  });
}

/** "kill collector", "network sink (bandwidth 1MiB/s)", "exec sink: ss -tn", "script flap.mjs". */
function defaultName(a: StepAction): string {
  switch (a.kind) {
    case "exec":
      return `exec ${a.host}: ${a.command.length > 40 ? `${a.command.slice(0, 39)}…` : a.command}`;
    case "network":
      return `network ${a.host} (${a.text})`;
    case "script":
      return `script ${nodePath.basename(a.file)}`;
    case "disk-full":
      return `disk-full ${a.host} (${a.levelPercent}%)`;
    case "drop-connections":
      return `drop-connections ${a.host}${a.peer ? ` ↔ ${a.peer}` : ""}`;
    default:
      return `${a.kind} ${a.host}`;
  }
}

/** The `steps:` list (default []): each step as stepSchema, with its index. */
export function stepsSchema(baseDir: string | undefined) {
  return z
    .array(stepSchema(baseDir))
    .nullable()
    .default([])
    .transform((list): Step[] => (list ?? []).map((s, index) => ({ index, ...s })));
}

/** The hosts the steps name (roles), deduplicated, in step order. */
export function stepHosts(steps: readonly Step[]): string[] {
  return [
    ...new Set(
      steps.flatMap((s) =>
        "host" in s.action
          ? [s.action.host, ...(s.action.kind === "drop-connections" && s.action.peer ? [s.action.peer] : [])]
          : [],
      ),
    ),
  ];
}
