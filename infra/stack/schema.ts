/**
 * The ONLY reader of stack files: `stacks/Pulumi.<stack>.yaml`, Pulumi stack config with keys namespaced by the
 * project name "ingestbench". One schema for all platforms (local, docker, azure).
 *
 * ```yaml
 * config:
 *   ingestbench:platform: local            # local | docker | azure
 *   ingestbench:hosts:
 *     loadgen: { cpu: "1" }
 *     sink:
 *       cpu: "0.25"                         # or "25000 100000" (cpu.max, µs) or { quota: 25000us, period: 100000us }
 *       memory: 2GiB
 *       disk: { iops: 3000, bandwidth: 125829120B/s }   # or readIops/writeIops/readBandwidth/writeBandwidth, or tmpfs: 1GiB
 *       network: { bandwidth: 12000KB/s, delay: 10ms, loss: 0.1% }
 *   ingestbench:expiry: 4h                  # default 4h
 *   # docker and azure stacks only:
 *   ingestbench:components: { collector: fluent-bit, sink: clickhouse }   # host → infra/catalog.ts component
 *   ingestbench:owner: alice                # labels/tags; default: the OS user
 *   ingestbench:docker: { blkioDevice: /dev/vda }   # docker: device for the disk caps
 * ```
 *
 * Two entry points, one schema: loadStack/loadPulumiStack read a file; fromPulumiConfig validates the config
 * Pulumi hands the program (infra/index.ts).
 *
 * Keys of other namespaces (e.g. `azure-native:location`) are ignored; unknown `ingestbench:` keys and unknown
 * host or limit keys are rejected. Units are parsed by ./units.ts.
 */
import { existsSync, readdirSync } from "node:fs";
import { userInfo } from "node:os";
import nodePath from "node:path";
import { z } from "zod";
import { ConfigurationError } from "../../harness/errors.ts";
import { addFlatIssue, addNestedIssues, displayPath, loadYamlFile, parseYamlText, validate } from "../../harness/config/yaml.ts";
import { stringify as yamlStringify } from "yaml";
import { deployableComponents } from "../catalog.ts";
import type { DiskLimit, HostLimits, HostSpec, NetworkLimit, Platform, StackSpec } from "../limits.ts";
import { parseBytes, parseCpu, parseDuration, parseIops, parsePercent, parseRate, zUnit } from "./units.ts";

/** The Pulumi project name; stack config keys are "ingestbench:<key>". */
export const PROJECT = "ingestbench";
/** Host (role) names: lowercase, start with a letter, at most 16 characters (they end up in netns and cgroup names). */
export const HOST_NAME = /^[a-z][a-z0-9-]{0,15}$/;
/** Stack file names: Pulumi.<stack>.yaml. */
const STACK_FILE = /^Pulumi\.(.+)\.ya?ml$/;

const positiveBytes = zUnit((v: string | number) => {
  const n = parseBytes(v);
  if (n <= 0) throw new Error(`${JSON.stringify(v)} is 0 bytes; give a size above 0 or omit the key`);
  return n;
});

/** disk: libvirt-style `iops` / `bandwidth` (total_iops_sec / total_bytes_sec) set read and write alike. */
const diskSchema = z
  .object({
    iops: zUnit(parseIops).optional(),
    readIops: zUnit(parseIops).optional(),
    writeIops: zUnit(parseIops).optional(),
    bandwidth: zUnit(parseRate).optional(),
    readBandwidth: zUnit(parseRate).optional(),
    writeBandwidth: zUnit(parseRate).optional(),
    tmpfs: positiveBytes.optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    for (const [total, parts] of [
      ["iops", ["readIops", "writeIops"]],
      ["bandwidth", ["readBandwidth", "writeBandwidth"]],
    ] as const) {
      for (const part of parts) {
        if (d[total] !== undefined && d[part] !== undefined) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: [part],
            message: `give either ${total} (read and write alike, as libvirt total_*) or ${parts.join("/")}, not both`,
          });
        }
      }
    }
    const capped = ["iops", "readIops", "writeIops", "bandwidth", "readBandwidth", "writeBandwidth"] as const;
    if (d.tmpfs !== undefined && capped.some((k) => d[k] !== undefined)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["tmpfs"],
        message: "a tmpfs is memory, so disk IO caps cannot apply to it: give either tmpfs or iops/bandwidth caps",
      });
    }
  })
  .transform((d): DiskLimit => {
    const out: DiskLimit = {};
    const readIops = d.readIops ?? d.iops;
    const writeIops = d.writeIops ?? d.iops;
    const readBytesPerSec = d.readBandwidth ?? d.bandwidth;
    const writeBytesPerSec = d.writeBandwidth ?? d.bandwidth;
    if (readIops !== undefined) out.readIops = readIops;
    if (writeIops !== undefined) out.writeIops = writeIops;
    if (readBytesPerSec !== undefined) out.readBytesPerSec = readBytesPerSec;
    if (writeBytesPerSec !== undefined) out.writeBytesPerSec = writeBytesPerSec;
    if (d.tmpfs !== undefined) out.tmpfsBytes = d.tmpfs;
    return out;
  });

/** network: shaping of the host's data-plane link (tc), both directions. */
const networkSchema = z
  .object({
    bandwidth: zUnit(parseRate).optional(),
    delay: zUnit(parseDuration).optional(),
    loss: zUnit(parsePercent).optional(),
  })
  .strict()
  .transform((n): NetworkLimit => {
    const out: NetworkLimit = {};
    if (n.bandwidth !== undefined) out.bandwidthBytesPerSec = n.bandwidth;
    if (n.delay !== undefined) out.delayMs = n.delay;
    if (n.loss !== undefined) out.lossPercent = n.loss;
    return out;
  });

/**
 * One host's keys. Keep every host key in this one object: platform-specific keys (docker image options, azure VM
 * sizes...) are added here as optional fields.
 */
export const hostShape = {
  cpu: zUnit(parseCpu).optional(),
  memory: positiveBytes.optional(),
  disk: diskSchema.optional(),
  network: networkSchema.optional(),
};

/** A host block; `null` (a bare `collector:`) means a host with no limits. Output: HostLimits. */
export const hostSchema = z.preprocess(
  (v) => (v === null ? {} : v),
  z
    .object(hostShape)
    .strict()
    .transform((h): HostLimits => {
      const out: HostLimits = {};
      if (h.cpu !== undefined) out.cpu = h.cpu;
      if (h.memory !== undefined) out.memoryBytes = h.memory;
      if (h.disk !== undefined) out.disk = h.disk;
      if (h.network !== undefined) out.network = h.network;
      return out;
    }),
);

const hostNameSchema = z.string().superRefine((name, ctx) => {
  if (!HOST_NAME.test(name)) {
    addFlatIssue(ctx, {
      path: [],
      message: `host name "${name}" must match ${HOST_NAME} (lowercase letter first, then a-z, 0-9, "-", at most 16 characters)`,
      at: "key",
    });
  }
});

const hostsSchema = z.record(hostNameSchema, hostSchema).superRefine((hosts, ctx) => {
  if (Object.keys(hosts).length === 0) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: "a stack needs at least one host, e.g. loadgen and sink" });
  }
});

const PLATFORMS = ["local", "docker", "azure"] as const satisfies readonly Platform[];

/** `ingestbench:components`: which catalog component each host runs (docker/azure; per cell, set by the harness). */
const componentsSchema = z.record(
  z.string(),
  z.string().superRefine((name, ctx) => {
    if (!deployableComponents.includes(name)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `"${name}" is not a component of the catalog (infra/catalog.ts); known: ${deployableComponents.join(", ")}`,
      });
    }
  }),
);

const ingestbenchKeys = {
  "ingestbench:platform": z.enum(PLATFORMS),
  "ingestbench:hosts": hostsSchema,
  "ingestbench:expiry": zUnit((v: string | number) => {
    const ms = parseDuration(v);
    if (ms <= 0) throw new Error(`expiry must be more than 0, e.g. "4h"`);
    return ms;
  }).optional(),
} as const;

/**
 * `ingestbench:docker`: options of the Docker engine a docker stack deploys to. `blkioDevice` is the block device
 * holding Docker's data root (where the hosts' data volumes live), e.g. `/dev/vda` inside Docker Desktop's VM:
 * docker's --device-read-iops/--device-write-bps... throttle a device, so disk caps on a docker stack need it
 * (without it the program records the disk caps as not enforced).
 */
export const dockerOptionsSchema = z
  .object({
    blkioDevice: z
      .string()
      .regex(/^\/dev\/[A-Za-z0-9._/-]+$/, 'a block device path such as "/dev/vda" (the device holding Docker\'s data root)')
      .optional(),
  })
  .strict();

/** The validated `ingestbench:docker` block. */
export type DockerOptions = z.infer<typeof dockerOptionsSchema>;

/**
 * Keys of docker and azure stacks. They are validated here, in crossKeyChecks, rather than in the core shape above,
 * so that a local stack's unknown-key errors keep listing only the keys a local stack takes.
 */
const platformKeys = {
  /** host → catalog component (a sink or a collector; per cell, set by the harness); other hosts run the load generator's image */
  "ingestbench:components": componentsSchema,
  /** the owner label/tag on every resource; default: the OS user running the program */
  "ingestbench:owner": z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, "letters, digits, . _ @ -, at most 64 characters"),
  "ingestbench:docker": dockerOptionsSchema,
} as const;

/** The platform keys (validated, raw otherwise), the docker block only on docker stacks, components on known hosts. */
function crossKeyChecks(cfg: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const platform = cfg["ingestbench:platform"];
  for (const [key, schema] of Object.entries(platformKeys)) {
    const value = cfg[key];
    if (value === undefined) continue;
    const r = (schema as z.ZodTypeAny).safeParse(value);
    if (!r.success) addNestedIssues(ctx, r.error, [key], schema as z.ZodTypeAny);
    if (platform === "local") {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: [key],
        message: `${key} is for docker and azure stacks; a local stack takes its components from the scenario (sink:, collector:)`,
      });
    }
  }
  if (cfg["ingestbench:docker"] !== undefined && platform === "azure") {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["ingestbench:docker"], message: "ingestbench:docker applies to docker stacks only" });
  }
  const hosts = (cfg["ingestbench:hosts"] ?? {}) as Record<string, unknown>;
  const components = cfg["ingestbench:components"];
  if (components !== null && typeof components === "object") {
    for (const host of Object.keys(components)) {
      if (!(host in hosts)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["ingestbench:components", host],
          message: `no host "${host}" in ingestbench:hosts (hosts: ${Object.keys(hosts).join(", ")})`,
        });
      }
    }
  }
}

/** `config:` — "ingestbench:" keys are checked (unknown ones rejected, before and independently of the values); others ignored. */
const configSchema = z.preprocess((cfg, ctx) => {
  if (cfg !== null && typeof cfg === "object" && !Array.isArray(cfg)) {
    const known = [...Object.keys(ingestbenchKeys), ...Object.keys(platformKeys)];
    const unknown = Object.keys(cfg).filter((key) => key.startsWith(`${PROJECT}:`) && !known.includes(key));
    if (unknown.length > 0) ctx.addIssue({ code: z.ZodIssueCode.unrecognized_keys, keys: unknown });
  }
  return cfg;
}, z.object(ingestbenchKeys).passthrough().superRefine(crossKeyChecks));

/** The whole file: Pulumi's own top-level keys are allowed, anything else is rejected. */
export const stackFileSchema = z
  .object({
    config: configSchema,
    secretsprovider: z.string().optional(),
    encryptedkey: z.string().optional(),
    encryptionsalt: z.string().optional(),
    environment: z.unknown().optional(),
  })
  .strict();

/** Default expiry when `ingestbench:expiry` is absent: 4 hours, in ms. */
export const DEFAULT_EXPIRY_MS = 4 * 3600 * 1000;

/**
 * Stack names found in `stacksDir` (files Pulumi.<name>.yaml), sorted. A missing directory gives [].
 */
export function listStacks(stacksDir = "stacks"): string[] {
  if (!existsSync(stacksDir)) return [];
  return readdirSync(stacksDir)
    .map((f) => STACK_FILE.exec(f)?.[1])
    .filter((n): n is string => n !== undefined)
    .sort();
}

/** Resolve a stack name ("local-quarter-core") or a path to the stack file path. */
export function stackFile(nameOrPath: string, stacksDir = "stacks"): string {
  const isPath = nameOrPath.includes("/") || nameOrPath.includes(nodePath.sep) || /\.ya?ml$/.test(nameOrPath);
  return isPath ? nameOrPath : nodePath.join(stacksDir, `Pulumi.${nameOrPath}.yaml`);
}

/**
 * Load and validate one stack: a name ("local-quarter-core" → `<stacksDir>/Pulumi.local-quarter-core.yaml`) or a
 * path to a Pulumi.<stack>.yaml file. Relative paths resolve against the working directory.
 * Returns limits in canonical units (CpuLimit µs, bytes, bytes/s, ms, percent) and each host's verbatim values
 * in HostSpec.requested.
 * @throws ConfigurationError E_STACK_NOT_FOUND (lists the known stacks), E_YAML_SYNTAX, or E_STACK_FIELD with one
 *         "file:line:col: field: problem" line per issue.
 */
export function loadStack(nameOrPath: string, stacksDir = "stacks"): StackSpec {
  const file = stackFile(nameOrPath, stacksDir);
  const base = nodePath.basename(file);
  const name = STACK_FILE.exec(base)?.[1];
  if (!existsSync(file)) {
    const dir = nodePath.dirname(file);
    const known = listStacks(dir);
    throw new ConfigurationError(
      "E_STACK_NOT_FOUND",
      `stack "${nameOrPath}" not found: no file ${displayPath(file)}` +
        (known.length > 0 ? `; stacks in ${displayPath(dir)}: ${known.join(", ")}` : ""),
      { location: displayPath(file) },
    );
  }
  if (name === undefined) {
    throw new ConfigurationError(
      "E_STACK_NOT_FOUND",
      `${displayPath(file)}: stack files are named Pulumi.<stack>.yaml (Pulumi derives the stack name from it)`,
      { location: displayPath(file) },
    );
  }
  return fromLoaded(loadYamlFile(file), file, name).spec;
}

/** Validate a loaded stack document and build its StackSpec and PlatformConfig (loadStack and fromPulumiConfig). */
function fromLoaded(loaded: ReturnType<typeof loadYamlFile>, file: string, name: string): PulumiStack {
  const parsed = validate(stackFileSchema, loaded, file, { code: "E_STACK_FIELD" });
  const cfg = parsed.config;
  const rawHosts = ((loaded.data as { config: Record<string, unknown> }).config["ingestbench:hosts"] ?? {}) as Record<
    string,
    unknown
  >;
  const hostLimits: Record<string, HostLimits> = cfg["ingestbench:hosts"];
  const hosts: Record<string, HostSpec> = {};
  for (const [hostName, limits] of Object.entries(hostLimits)) {
    const raw = rawHosts[hostName];
    hosts[hostName] = {
      name: hostName,
      requested: raw && typeof raw === "object" ? structuredClone(raw as Record<string, unknown>) : {},
      limits,
    };
  }
  const raw = cfg as Record<string, unknown>;
  const platformValue = <K extends keyof typeof platformKeys>(key: K): z.infer<(typeof platformKeys)[K]> | undefined =>
    raw[key] === undefined ? undefined : platformKeys[key].parse(raw[key]);
  return {
    spec: {
      name,
      file,
      platform: cfg["ingestbench:platform"],
      hosts,
      expiryMs: cfg["ingestbench:expiry"] ?? DEFAULT_EXPIRY_MS,
    },
    platform: {
      components: platformValue("ingestbench:components") ?? {},
      owner: platformValue("ingestbench:owner") ?? defaultOwner(),
      docker: platformValue("ingestbench:docker") ?? {},
    },
  };
}

/** The platform keys of a docker/azure stack, beside the limits in StackSpec. */
export interface PlatformConfig {
  /** host → catalog component (`ingestbench:components`); hosts absent here run the load generator's image */
  components: Record<string, string>;
  /** `ingestbench:owner`, else the OS user name (labels and tags) */
  owner: string;
  /** `ingestbench:docker` ({} when absent) */
  docker: DockerOptions;
}

/** A validated stack with its platform keys (what the Pulumi program reads). */
export interface PulumiStack {
  spec: StackSpec;
  platform: PlatformConfig;
}

function defaultOwner(): string {
  try {
    const name = userInfo().username.replace(/[^A-Za-z0-9._@-]/g, "-").slice(0, 64);
    return name.length > 0 ? name : "unknown";
  } catch {
    return "unknown";
  }
}

/** loadStack plus the platform keys (components, owner, docker options). Same validation, same errors. */
export function loadPulumiStack(nameOrPath: string, stacksDir = "stacks"): PulumiStack {
  const spec = loadStack(nameOrPath, stacksDir);
  return fromLoaded(loadYamlFile(spec.file), spec.file, spec.name);
}

/**
 * The Pulumi program's path to the same schema: validate the stack config Pulumi hands the program
 * (`pulumi.runtime.allConfig()`: "ingestbench:<key>" → string, objects as JSON text) exactly as a stack file
 * is validated. Keys of other namespaces are ignored. Errors are ConfigurationError E_STACK_FIELD naming
 * "Pulumi.<stack>.yaml (pulumi config)" and the field; line numbers refer to the config re-rendered as YAML.
 * @param stack the stack name (`pulumi.getStack()`)
 */
export function fromPulumiConfig(stack: string, config: Record<string, string>): PulumiStack {
  const values: Record<string, unknown> = {};
  for (const [key, text] of Object.entries(config)) {
    if (!key.startsWith(`${PROJECT}:`)) continue;
    values[key] = decodeConfigValue(key, text);
  }
  const label = `Pulumi.${stack}.yaml (pulumi config)`;
  const loaded = parseYamlText(yamlStringify({ config: values }), label);
  return fromLoaded(loaded, label, stack);
}

/** Pulumi passes object and array config values as JSON text and scalars as plain strings. */
function decodeConfigValue(key: string, text: string): unknown {
  const t = text.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return text;
  try {
    return JSON.parse(t) as unknown;
  } catch (err) {
    throw new ConfigurationError("E_STACK_FIELD", `pulumi config ${key}: not valid JSON: ${(err as Error).message}`, { field: key, cause: err });
  }
}
