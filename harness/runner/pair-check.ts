/**
 * A scenario checked against a stack before anything is provisioned (docs/errors.md, "A scenario checked against a stack"): one pass over every
 * component's pin and the stack's catalog, returning typed findings rather than stopping at the first problem. Used by
 * `validate <scenario> --stack S` and by the driver of bench, run and nightly (./drive.ts checkCellsOnStack), and by
 * the local platform's own check (checkRunnableLocally, re-exported by ./local-site.ts).
 *
 * What it checks, for every component of every cell (sink and collector alike, no case per sink):
 * - memory: the host's memory cap against the component's floor (./memory-floor.ts);
 * - platform: the component runs on the stack's platform (a local component, or a container image), and the
 *   scenario's features do (an application under test: local; fault steps and `generator: none`: local and docker);
 * - version: on docker and azure the pin against the image the stack deploys (infra/docker/images.ts resolveImage,
 *   the Pulumi program's own choice); on local stacks the installed program found and its version read
 *   (core/program.ts resolveProgram);
 * - placeholder: what the committed stack files carry in place of the user's own values (azure's `allowFrom`, a
 *   documentation address, RFC 5737), unless the user overrides it (ALLOW_FROM_ENV or `pulumi config set`);
 * - site: what only the platform's site knows (hosts, fault steps' targets; on docker and azure the deployed check,
 *   harness/provision/deployed.ts, passed in as `deployed`).
 */
import type { StackSpec } from "../../core/limits.ts";
import { ConfigurationError, IngestbenchError } from "../../core/errors.ts";
import { matchesImagePin, type ImageSource } from "../../core/catalog.ts";
import { hostPrograms } from "../../core/limits.ts";
import { resolveProgram, type Program, type ProgramSpec } from "../../core/program.ts";
import { displayPath, fieldLocation } from "../../core/yaml.ts";
import { resolveImage, type ResolvedImage } from "../../infra/docker/images.ts";
import { callerCidr, isDocumentationAddress, loadPulumiStack } from "../../infra/stack/schema.ts";

export { isDocumentationAddress };
import { findCollector, findSink, pluginNamed } from "../../plugins/registry.ts";
import type { CellPlan } from "./cell-plan.ts";
import { checkMemoryFloors } from "./memory-floor.ts";
import { hostRoles, SINK } from "./site.ts";
import { checkSteps } from "./step-checks.ts";
import { collectorHosts } from "./versions.ts";

/** What a finding is about. */
export type FindingKind = "memory" | "platform" | "version" | "program" | "placeholder" | "site";

/** One reason a stack refuses a scenario (or would, after deploying). */
export interface PairFinding {
  kind: FindingKind;
  /** the stable error code (docs/errors.md), e.g. "E_VERSION" */
  code: string;
  /** the sentence said, naming the file (and field) it is about */
  message: string;
  /** dotted field path, e.g. "config.ingestbench:azure.allowFrom" */
  field?: string;
  /** "file:line" when known */
  location?: string;
  /**
   * what would lift it on this very stack, when it depends on this machine or the user rather than on the pair:
   * e.g. "fluentd 1.12 is installed", "allowFrom is your address"; absent when the pair itself is refused
   */
  unless?: string;
}

/** The environment variable that overrides an azure stack's `ingestbench:azure.allowFrom` for a run (e.g. "198.18.7.9/32"). */
export const ALLOW_FROM_ENV = "INGESTBENCH_AZURE_ALLOW_FROM";

/** What the pair check is given besides the stack and the cells. */
export interface PairCheckOptions {
  /** the docker/azure platform's own check (harness/provision/deployed.ts pulumiStacks().check) */
  deployed?: { check(stack: StackSpec, plans: readonly CellPlan[]): void };
  /** where ALLOW_FROM_ENV and the programs' PATH are read; default process.env */
  env?: NodeJS.ProcessEnv;
}

/** The findings of one pair and, on a local stack, the installed programs it would run. */
export interface PairCheck {
  findings: PairFinding[];
  /** installed programs found and their versions read and accepted, e.g. "otelcol 0.165.0" */
  programs: string[];
  /**
   * installed programs whose version is read only when they start (a local component without core/program.ts
   * `program`: ClickHouse, PostgreSQL, syslog-ng, rsyslog), as the scenario pins them, e.g. "clickhouse 18.16.1"
   */
  unchecked: string[];
}

/**
 * Every reason `stack` refuses these cells, checked before anything is provisioned (none: the pair runs as far as
 * anything here can tell). Findings are deduplicated (a sweep's cells repeat them).
 */
export function pairFindings(
  stack: StackSpec,
  plans: readonly CellPlan[],
  opts: PairCheckOptions = {},
): PairFinding[] {
  return checkPair(stack, plans, opts).findings;
}

/** pairFindings with the installed programs a local stack would run (for the refusal hints, ./drive.ts). */
export function checkPair(
  stack: StackSpec,
  plans: readonly CellPlan[],
  opts: PairCheckOptions = {},
): PairCheck {
  const env = opts.env ?? process.env;
  const out: PairCheck = { findings: [], programs: [], unchecked: [] };
  for (const plan of plans) out.findings.push(...caught("memory", () => checkMemoryFloors(stack, plan)));
  if (plans.length === 0) return out;
  out.findings.push(...placeholderFindings(stack, env));
  for (const plan of plans) out.findings.push(...platformFindings(stack, plan));
  if (stack.platform === "local") {
    for (const plan of plans) {
      if (out.findings.some((f) => f.kind === "platform")) break;
      out.findings.push(...localSiteFindings(stack, plan));
      out.findings.push(...programFindings(stack, plan, env, out));
    }
  } else {
    const source =
      stack.platform === "docker"
        ? (loadPulumiStack(stack.file).platform.docker.images ?? "upstream")
        : "upstream";
    for (const plan of plans) out.findings.push(...imageFindings(stack, source, plan));
    if (opts.deployed) {
      const d = opts.deployed;
      // the platform's own check stops at its first refusal: kept when no finding here says the same (its code)
      const site = caught("site", () => d.check(stack, plans));
      out.findings.push(...site.filter((f) => !out.findings.some((g) => g.code === f.code)));
    } else
      out.findings.push(
        finding(
          "site",
          new ConfigurationError(
            "E_PLATFORM",
            `${fieldLocation(stack.file, ["config", "ingestbench:platform"])}: stack ${stack.name}: platform "${stack.platform}" is provisioned with Pulumi; this command runs local stacks`,
            { field: "config.ingestbench:platform" },
          ),
        ),
      );
  }
  out.findings = dedupe(out.findings);
  out.programs = [...new Set(out.programs)];
  out.unchecked = [...new Set(out.unchecked)];
  return out;
}

/**
 * The findings a stack has whatever the scenario: placeholders left in it (azure's `allowFrom` documentation address,
 * unless ALLOW_FROM_ENV overrides it). For `validate` of a stack alone, where they are warnings (the committed files
 * carry them on purpose); a run refuses them.
 */
export function placeholderFindings(stack: StackSpec, env: NodeJS.ProcessEnv = process.env): PairFinding[] {
  if (stack.platform !== "azure") return [];
  const { value, from } = allowFromOf(stack, env);
  if (!isDocumentationAddress(value)) return [];
  const at =
    from === "env"
      ? `${ALLOW_FROM_ENV}`
      : fieldLocation(stack.file, ["config", "ingestbench:azure", "allowFrom"]);
  return [
    {
      kind: "placeholder",
      code: "E_PLACEHOLDER",
      message:
        `${at}: allowFrom ${value} is a documentation address (RFC 5737) standing in for yours: the stack's network would admit nobody; ` +
        `set your public address: ${ALLOW_FROM_ENV}=<your-ip>/32, or pulumi config set --path ingestbench:azure.allowFrom <your-ip>/32 --stack ${stack.name}`,
      field: "config.ingestbench:azure.allowFrom",
      unless: "allowFrom is your address",
    },
  ];
}

/**
 * The caller's address an azure stack's network admits: ALLOW_FROM_ENV when set, else the stack file's
 * `ingestbench:azure.allowFrom`.
 * @throws ConfigurationError E_ALLOW_FROM when ALLOW_FROM_ENV is not an IPv4 CIDR of /24 or longer
 */
export function allowFromOf(
  stack: StackSpec,
  env: NodeJS.ProcessEnv = process.env,
): { value: string; from: "env" | "stack" } {
  const override = env[ALLOW_FROM_ENV];
  if (override !== undefined && override !== "") {
    const parsed = callerCidr.safeParse(override);
    if (!parsed.success)
      throw new ConfigurationError(
        "E_ALLOW_FROM",
        `${ALLOW_FROM_ENV}: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
      );
    return { value: override, from: "env" };
  }
  return { value: loadPulumiStack(stack.file).platform.azure?.allowFrom ?? "", from: "stack" };
}

/**
 * The Pulumi config a deployment of `stack` carries besides the cell's (harness/provision/provisioner.ts cellConfig):
 * ALLOW_FROM_ENV as `ingestbench:azure.allowFrom` on an azure stack, so that the address checked here is the one the
 * network admits (the tracked stack file keeps its own).
 */
export function allowFromConfig(
  stack: StackSpec,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, { value: string; secret: false }> {
  const override = env[ALLOW_FROM_ENV];
  if (stack.platform !== "azure" || override === undefined || override === "") return {};
  return { "ingestbench:azure.allowFrom": { value: allowFromOf(stack, env).value, secret: false } };
}

/** The cell's components: [role word, block] for the sink and, when there is one, the collector. */
function components(
  plan: Pick<CellPlan, "sink" | "collector">,
): Array<["sink" | "collector", { name: string; config: Record<string, unknown> }]> {
  return plan.collector
    ? [
        ["sink", plan.sink],
        ["collector", plan.collector],
      ]
    : [["sink", plan.sink]];
}

/** "a local stack", "an azure stack". */
function aStack(stack: StackSpec): string {
  return `${stack.platform === "azure" ? "an" : "a"} ${stack.platform} stack`;
}

/** What a scenario may ask for, the platforms that offer it, and the refusal elsewhere. */
const FEATURES: ReadonlyArray<{
  has(p: CellPlan): boolean;
  code: string;
  field: string;
  platforms: readonly string[];
  refusal(p: CellPlan, stack: StackSpec): string;
}> = [
  {
    has: (p) => p.app !== undefined,
    code: "E_APP_NOT_RUNNABLE",
    field: "app",
    platforms: ["local"],
    refusal: (p, stack) =>
      `scenario ${p.scenario}: an application under test runs on local stacks only (stack ${stack.name} is ${aStack(stack)})`,
  },
  {
    has: (p) => (p.steps?.length ?? 0) > 0,
    code: "E_STEP_PLATFORM",
    field: "steps",
    platforms: ["local", "docker"],
    refusal: (p, stack) =>
      `scenario ${p.scenario}: fault steps (steps:) run on local and docker stacks; stack ${stack.name} is ${aStack(stack)} (its sites offer no kill, stop, restart, exec or network steps yet)`,
  },
  {
    // on docker each run uploads the collector's config with its gens and restarts it (harness/remote/site.ts);
    // azure's sites cannot restart a collector with another config in a run
    has: (p) => p.selfLoad !== undefined,
    code: "E_GENERATOR_NONE",
    field: "generator",
    platforms: ["local", "docker"],
    refusal: (p, stack) =>
      `scenario ${p.scenario}: generator: none runs on local and docker stacks; stack ${stack.name} (platform ${stack.platform}) runs on a site that cannot start ${p.selfLoad!.collector}'s ${p.selfLoad!.input} with a run's own generator ids (the ledger could not tell its events from another run's). Its config renders (ingestbench validate)`,
  },
];

/** Each component runs on the stack's platform (a local component or an image), and so does each feature the cell uses. */
export function platformFindings(stack: StackSpec, plan: CellPlan): PairFinding[] {
  const out: PairFinding[] = [];
  const local = stack.platform === "local";
  for (const [role, block] of components(plan)) {
    const p = role === "sink" ? findSink(block.name) : findCollector(block.name);
    if (local ? p?.local : p?.image) continue;
    const at = plan.scenarioFile ? `${fieldLocation(plan.scenarioFile, [role, block.name], "key")}: ` : "";
    const where = local
      ? "has no local component: it runs on docker and azure stacks only"
      : "has no container image: it runs on local stacks only";
    out.push({
      kind: "platform",
      code: role === "sink" ? "E_SINK" : "E_COLLECTOR",
      message: `${at}scenario ${plan.scenario}: ${role} "${block.name}" ${where} (stack ${stack.name} is ${aStack(stack)})`,
      field: role,
    });
  }
  for (const f of FEATURES) {
    if (!f.has(plan) || f.platforms.includes(stack.platform)) continue;
    out.push({
      kind: "platform",
      code: f.code,
      message: f.refusal(plan, stack),
      field: f.field,
    });
  }
  return out;
}

/**
 * On docker and azure: each component's pin against the image the stack deploys for it (the Pulumi program picks it
 * with the same resolveImage: docker by `ingestbench:docker.images`, azure the catalog's upstream image).
 */
function imageFindings(stack: StackSpec, source: ImageSource, plan: CellPlan): PairFinding[] {
  const out: PairFinding[] = [];
  for (const [, block] of components(plan)) {
    if (!pluginNamed(block.name).image) continue; // a platform finding already
    out.push(
      ...caught("version", () => {
        const image = resolveImage(block.name, source, block.config.version);
        checkImagePin(stack.name, plan.scenario, block.name, block.config.version, image);
      }),
    );
  }
  return out;
}

/**
 * The scenario's pin of a component against the version of the image the stack deploys for it, by the rule the
 * deployed site applies after `up` (harness/remote/site.ts checkComponent).
 * @throws ConfigurationError E_VERSION naming the scenario's pin, the image and its version
 */
export function checkImagePin(
  stackName: string,
  scenario: string,
  component: string,
  pinned: unknown,
  image: ResolvedImage,
): void {
  if (typeof pinned !== "string") return;
  const deploys = image.entry.version;
  if (matchesImagePin(deploys, pinned) || matchesImagePin(pinned, deploys)) return;
  throw new ConfigurationError(
    "E_VERSION",
    `scenario ${scenario} pins ${component} ${pinned}, but stack ${stackName} deploys ${component} ${deploys} (image ${image.ref}); refusing before anything is deployed`,
    { field: "version" },
  );
}

/** A local stack's site: the collector writes into the sink, the hosts the cell needs exist, its steps can run. */
function localSiteFindings(
  stack: StackSpec,
  plan: Pick<CellPlan, "sink" | "collector" | "scenario" | "steps" | "app"> & { scenarioFile?: string },
): PairFinding[] {
  return caught("site", () => checkLocalSite(stack, plan));
}

function checkLocalSite(
  stack: StackSpec,
  plan: Pick<CellPlan, "sink" | "collector" | "scenario" | "steps" | "app"> & { scenarioFile?: string },
): void {
  const at = (what: string, name: string): string =>
    plan.scenarioFile ? `${fieldLocation(plan.scenarioFile, [what, name], "key")}: ` : "";
  const localCollector = plan.collector ? findCollector(plan.collector.name)?.local : undefined;
  if (plan.collector && localCollector?.writesTo && !localCollector.writesTo.includes(plan.sink.name)) {
    throw new ConfigurationError(
      "E_COLLECTOR",
      `${at("sink", plan.sink.name)}scenario ${plan.scenario}: collector "${plan.collector.name}" on the local platform writes into ${localCollector.writesTo.join(", ") || "no sink"}, not into sink "${plan.sink.name}" (plugins/collectors/${plan.collector.name}/README.md says why); use a docker or azure stack for this pairing`,
      { field: "sink" },
    );
  }
  const roles = hostRoles(Object.keys(stack.hosts), plan);
  for (const role of roles) {
    if (stack.hosts[role]) continue;
    const need = roles.map((r) => `"${r}"`).join(plan.collector ? ", " : " and ");
    const where = fieldLocation(stack.file, ["config", "ingestbench:hosts"]);
    // a host the scenario names itself (the application's `app.host`) is pointed at in the scenario too: a typo there
    // is the likelier mistake
    const named =
      plan.app?.spec.host === role && plan.scenarioFile
        ? `${fieldLocation(plan.scenarioFile, ["app", "host"])}: "${role}" is not a host of stack ${stack.name}; `
        : "";
    throw new ConfigurationError(
      "E_STACK_HOSTS",
      `${named}${where}: this scenario${plan.scenarioFile ? ` (${displayPath(plan.scenarioFile)})` : ""} needs hosts ${need}; the stack has ${Object.keys(stack.hosts).join(", ")}`,
      { field: `config.ingestbench:hosts.${role}` },
    );
  }
  checkSteps(stack, roles, plan);
}

/**
 * The installed programs the cell's local components run (core/program.ts): found on each host that runs them, and
 * their versions read from the programs themselves and held against the pins. `found.programs` collects "name
 * version" of each program found and accepted, `found.unchecked` the components whose version is read only when they
 * start. Findings: E_PROGRAM_MISSING, E_PROGRAM_VERSION, E_VERSION naming both versions.
 */
function programFindings(
  stack: StackSpec,
  plan: Pick<CellPlan, "sink" | "collector">,
  env: NodeJS.ProcessEnv,
  found: Pick<PairCheck, "programs" | "unchecked"> = { programs: [], unchecked: [] },
): PairFinding[] {
  const out: PairFinding[] = [];
  for (const [role, block] of components(plan)) {
    const factory = role === "sink" ? findSink(block.name)?.local : findCollector(block.name)?.local;
    if (!factory) continue;
    if (!factory.program) {
      const pin = block.config.version;
      found.unchecked.push(typeof pin === "string" ? `${block.name} ${pin}` : block.name);
      continue;
    }
    const pinned = factory.program.pin(block.config);
    const hosts = role === "sink" ? [SINK] : collectorHosts(Object.keys(stack.hosts));
    for (const host of hosts) {
      if (!stack.hosts[host]) continue; // a site finding
      const where = fieldLocation(stack.file, ["config", "ingestbench:hosts", host]);
      const unless = `${factory.name} ${pinned} is installed`;
      const program = installed(
        factory.program.spec,
        hostPrograms(stack.hosts[host]!)[factory.name],
        where,
        env,
      );
      if (program instanceof Error) {
        out.push({ ...finding("program", program), unless });
        continue;
      }
      if (factory.matchesPin(pinned, program.version)) {
        found.programs.push(`${factory.name} ${program.version}`);
        continue;
      }
      out.push({
        kind: "version",
        code: "E_VERSION",
        message: `${where}: ${factory.name} at ${program.argv.join(" ")} (${program.from}) reports version ${program.version}, but the scenario pins ${pinned}; refusing before provisioning: install ${pinned}, or set the scenario's version to ${program.version} to measure that one`,
        field: `config.ingestbench:hosts.${host}.programs.${factory.name}`,
        unless,
      });
    }
  }
  return out;
}

/** resolveProgram's answers in this process, by plugin, the stack's choice and PATH (each costs a child process). */
const programs = new Map<string, { program: Program } | { error: Error; where: string }>();

/**
 * The program resolveProgram finds (its version read once per process for the same plugin, choice and PATH: a hint's
 * search checks every local stack), or its ConfigurationError, naming `where`.
 */
function installed(
  spec: ProgramSpec,
  choice: string | undefined,
  where: string,
  env: NodeJS.ProcessEnv,
): Program | Error {
  const key = JSON.stringify([spec.plugin, choice ?? null, env.PATH ?? ""]);
  let known = programs.get(key);
  if (!known) {
    try {
      known = { program: resolveProgram(spec, choice, where, env) };
    } catch (err) {
      if (!(err instanceof ConfigurationError)) throw err;
      known = { error: err, where };
    }
    programs.set(key, known);
  }
  if ("program" in known) return known.program;
  const e = known.error as ConfigurationError;
  // the same refusal, naming this stack's host
  return new ConfigurationError(e.code, e.message.split(known.where).join(where), {
    ...(e.field !== undefined ? { field: e.field } : {}),
  });
}

/**
 * Can this cell run on this local stack? The pair check of one cell on the local platform, its first finding thrown:
 * a local stack; a local component for the sink and the collector — the container-only ones (Fluentd, Fluent Bit,
 * Vector, Elasticsearch, Loki, GridDB) run on docker and azure stacks — the hosts the cell needs, its steps, and the
 * installed programs at the pinned versions. LocalSite checks it again when it provisions.
 * @throws ConfigurationError E_PLATFORM, E_SINK, E_COLLECTOR, E_STACK_HOSTS, E_STEP_*, E_PROGRAM_MISSING,
 *         E_PROGRAM_VERSION or E_VERSION, naming the stack or scenario file and field
 */
export function checkRunnableLocally(
  stack: StackSpec,
  plan: Pick<CellPlan, "sink" | "collector" | "scenario" | "steps" | "app"> & { scenarioFile?: string },
): void {
  if (stack.platform !== "local") {
    throw new ConfigurationError(
      "E_PLATFORM",
      `${fieldLocation(stack.file, ["config", "ingestbench:platform"])}: stack ${stack.name}: platform "${stack.platform}" is provisioned with Pulumi; this command runs local stacks`,
      { field: "config.ingestbench:platform" },
    );
  }
  const first = [
    ...platformFindings(stack, plan as CellPlan).filter(
      (f) => f.code === "E_SINK" || f.code === "E_COLLECTOR",
    ),
  ][0];
  if (first) throw errorOf(first);
  checkLocalSite(stack, plan);
  const programs = programFindings(stack, plan, process.env);
  if (programs[0]) throw errorOf(programs[0]);
}

/** The ConfigurationError a finding stands for (its code, message, field and location). */
export function errorOf(f: PairFinding): ConfigurationError {
  return new ConfigurationError(f.code, f.message, {
    ...(f.field !== undefined ? { field: f.field } : {}),
    ...(f.location !== undefined ? { location: f.location } : {}),
  });
}

/** The ConfigurationError `fn` throws as findings of `kind` (none when it returns); anything else propagates. */
function caught(kind: FindingKind, fn: () => void): PairFinding[] {
  try {
    fn();
    return [];
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    return [finding(kind, err)];
  }
}

function finding(kind: FindingKind, err: unknown): PairFinding {
  if (!(err instanceof IngestbenchError)) throw err;
  const c = err instanceof ConfigurationError ? err : undefined;
  return {
    kind,
    code: err.code,
    message: err.message,
    ...(c?.field !== undefined ? { field: c.field } : {}),
    ...(c?.location !== undefined ? { location: c.location } : {}),
  };
}

function dedupe(findings: PairFinding[]): PairFinding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.code}\n${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
