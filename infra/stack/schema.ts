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
 *       pricePerHour: { usd: 0.096, source: "my invoice", date: <YYYY-MM-DD> }   # optional; azure: infra/azure/prices.yaml
 *   ingestbench:expiry: 4h                  # default 4h
 *   # docker and azure stacks only:
 *   ingestbench:components: { collector: fluent-bit, sink: clickhouse }   # host → infra/catalog.ts component
 *   ingestbench:cell:                       # the scenario cell they run (set per cell by the provisioner)
 *     event: [ { name: ts, type: timestamp }, { name: msg, type: string, size: 200 } ]
 *     collector: { fluent-bit: { output: { workers: 2 } } }   # or "none"; the collector's own setting names
 *     sink: { clickhouse: { version: "25.8" } }
 *   ingestbench:owner: alice                # labels/tags; default: the OS user
 *   ingestbench:docker: { blkioDevice: /dev/vda, images: debian }   # docker: device for the disk caps; Debian-built images
 *   ingestbench:azure:                      # azure: where and how the VMs run (azureOptionsSchema)
 *     location: westeurope
 *     allowFrom: 198.51.100.7/32            # the caller's address: the only source the NSG admits
 *     vmSizes: { loadgen: Standard_D2s_v5, sink: Standard_D4s_v5 }   # one per host
 * ```
 *
 * Two entry points, one schema: loadStack/loadPulumiStack read a file; fromPulumiConfig validates the config
 * Pulumi hands the program (infra/index.ts).
 *
 * Keys of other namespaces (e.g. `azure-native:location`) are ignored; unknown `ingestbench:` keys and unknown
 * host or limit keys are rejected. Units are parsed by ./units.ts.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { userInfo } from "node:os";
import nodePath from "node:path";
import { z } from "zod";
import { ConfigurationError } from "../../core/errors.ts";
import { PASSWORD_SINKS, passwordConfigKey, passwordEnvName } from "../../core/secrets.ts";
import {
  addFlatIssue,
  addNestedIssues,
  displayPath,
  loadYamlFile,
  parseYamlText,
  validate,
} from "../../core/yaml.ts";
import { stringify as yamlStringify } from "yaml";
import { catalog, deployableComponents } from "../catalog.ts";
import {
  collectorNames,
  collectorPlugin,
  findCollector,
  findSink,
  sinkNames,
  sinkPlugin,
} from "../../plugins/registry.ts";
import { eventFieldSchema } from "../../core/events/field-schema.ts";
import { pluginBlock, type PluginBlockWording } from "../../core/plugin-block.ts";
import type { EventField } from "../../core/events/types.ts";
import { DEFAULT_DATA_DISK_GIB, diskCapProblems } from "../azure/disk.ts";
import { VM_SIZE_NAMES } from "../azure/sizes.ts";
import { azurePrice } from "../azure/prices.ts";
import type {
  DiskLimit,
  HostLimits,
  HostSpec,
  NetworkLimit,
  Platform,
  StackSpec,
} from "../../core/limits.ts";
import {
  parseBytes,
  parseCpu,
  parseDuration,
  parseIops,
  parsePercent,
  parseRate,
  zUnit,
} from "../../core/units.ts";

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

/**
 * disk: libvirt-style `iops` / `bandwidth` (total_iops_sec / total_bytes_sec): one budget for reads + writes. Parsed
 * into the same cap on each direction (what cgroups and docker can throttle) plus `totalIops` / `totalBytesPerSec`,
 * the budget itself, which the bottleneck scores reads + writes against (core/limits.ts DiskLimit).
 */
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
        message:
          "a tmpfs is memory, so disk IO caps cannot apply to it: give either tmpfs or iops/bandwidth caps",
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
    if (d.iops !== undefined) out.totalIops = d.iops;
    if (d.bandwidth !== undefined) out.totalBytesPerSec = d.bandwidth;
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
 * `pricePerHour: { usd: 0.096, source: "…", date: 2026-12-01 }`: US dollars per hour of the host (Pulumi-config style:
 * the currency is the key); `source` and `date` say where the figure comes from and when (recorded with the run).
 */
export const pricePerHourSchema = z
  .object({
    usd: z
      .number({ invalid_type_error: "a price in US dollars per hour, a number such as 0.096" })
      .nonnegative(),
    source: z.string().min(1).optional(),
    date: z
      .union([z.string(), z.date()])
      .transform((d) => (d instanceof Date ? d.toISOString().slice(0, 10) : d))
      .pipe(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date as YYYY-MM-DD"))
      .optional(),
  })
  .strict();

/**
 * One host's keys. Keep every host key in this one object: platform-specific keys (docker image options, azure VM
 * sizes...) are added here as optional fields.
 */
export const hostShape = {
  cpu: zUnit(parseCpu).optional(),
  memory: positiveBytes.optional(),
  disk: diskSchema.optional(),
  network: networkSchema.optional(),
  /** what the host costs per hour of wall time (any platform; on azure it wins over infra/azure/prices.yaml) */
  pricePerHour: pricePerHourSchema.optional(),
  /** local stacks: the installed program a plugin runs on this host (core/program.ts), e.g. `otelcol: /opt/otelcol` */
  programs: z
    .record(z.string(), z.string().min(1))
    .superRefine((programs, ctx) => {
      const known: string[] = [...sinkNames, ...collectorNames].filter(
        (n) => (findSink(n) ?? findCollector(n))?.local,
      );
      for (const name of Object.keys(programs)) {
        if (!known.includes(name)) {
          addFlatIssue(ctx, {
            path: [name],
            message: `"${name}" is no plugin with a local component; known: ${known.join(", ")}`,
            at: "key",
          });
        }
      }
    })
    .optional(),
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
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: "a stack needs at least one host, e.g. loadgen and sink",
    });
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
 * (without it the program records the disk caps as not enforced). `images`: `upstream` (default) runs each
 * catalog entry's own image, `debian` the Debian-built one (core/catalog.ts CatalogVariant, images/debian/), which
 * must be on the engine (`bash scripts/build-images.sh <name>`; checked before deploying).
 */
export const dockerOptionsSchema = z
  .object({
    images: z.enum(["upstream", "debian"]).optional(),
    blkioDevice: z
      .string()
      .regex(
        /^\/dev\/[A-Za-z0-9._/-]+$/,
        'a block device path such as "/dev/vda" (the device holding Docker\'s data root)',
      )
      .optional(),
  })
  .strict();

/** The validated `ingestbench:docker` block. */
export type DockerOptions = z.infer<typeof dockerOptionsSchema>;

/** RFC 5737 documentation ranges (TEST-NET-1, -2, -3): never a caller's real address. */
const DOCUMENTATION = [/^192\.0\.2\./, /^198\.51\.100\./, /^203\.0\.113\./];

/**
 * Whether an IPv4 address or CIDR lies in an RFC 5737 documentation range (the committed azure stacks' allowFrom
 * stand-in, 203.0.113.10/32): refused before deploying (harness/runner/pair-check.ts) and by the program (infra/azure/stack.ts).
 */
export function isDocumentationAddress(cidr: string): boolean {
  return DOCUMENTATION.some((r) => r.test(cidr));
}

/** An IPv4 address with a prefix length, e.g. "198.51.100.7/32"; the prefix must be /24 or longer (one caller, not a range). */
export const callerCidr = z.string().superRefine((v, ctx) => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(v);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: `"${v}" is not an IPv4 CIDR such as "198.51.100.7/32" (your public address, /32)`,
    });
  } else if (Number(m[5]) < 24) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: `"${v}" opens the stack to /${m[5]}: give the caller's address (/32, at most a /24)`,
    });
  }
});

/**
 * `ingestbench:azure`: where and how an azure stack's VMs run (infra/azure/). `allowFrom` is the only source
 * address the network security group admits (SSH, node_exporter and the components' ports); `vmSizes` gives
 * every host its VM size (infra/azure/sizes.ts); `zone` is the availability zone of VMs and disks (Premium SSD v2
 * attaches to zonal VMs only); `dataDiskGiB` the Premium SSD v2 data disk's size; `sshPublicKey` the admin's
 * key (OpenSSH one-line format), needed by `pulumi up`, not by validation (it is per user, like allowFrom).
 */
export const azureOptionsSchema = z
  .object({
    location: z
      .string()
      .regex(
        /^[a-z][a-z0-9]{2,39}$/,
        'an Azure region name such as "westeurope" (`az account list-locations -o table`)',
      ),
    zone: z.enum(["1", "2", "3"]).optional(),
    allowFrom: callerCidr,
    vmSizes: z.record(z.string(), z.enum(VM_SIZE_NAMES)),
    adminUsername: z
      .string()
      .regex(
        /^[a-z_][a-z0-9_-]{0,31}$/,
        "a Linux user name: lowercase letters, digits, _ and -, at most 32 characters",
      )
      .refine(
        (u) => !["root", "admin", "administrator", "ubuntu"].includes(u),
        "Azure rejects this admin user name",
      )
      .optional(),
    sshPublicKey: z
      .string()
      .regex(
        /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+={0,3}( \S.*)?$/,
        "an OpenSSH public key line, e.g. the contents of ~/.ssh/id_ed25519.pub",
      )
      .optional(),
    dataDiskGiB: z.number().int().min(4).max(65536).optional(),
  })
  .strict();

/** The validated `ingestbench:azure` block. */
export type AzureOptions = z.infer<typeof azureOptionsSchema>;

/** `ingestbench:cell`: the scenario cell a docker/azure stack's components run (see CellConfig). */
export interface CellConfig {
  /** the scenario's event fields, in order (gen, seq, sent_at follow in every row) */
  event: EventField[];
  /** the collector and its scenario block (raw: the renderer parses it again), null for `collector: none` */
  collector: { name: string; config: Record<string, unknown> } | null;
  /** the sink and its scenario block (raw) */
  sink: { name: string; config: Record<string, unknown> };
}

/** The cell's wording of plugin-block errors (core/plugin-block.ts): names in catalog order, pointing at the catalog. */
function cellWording(role: "collector" | "sink"): PluginBlockWording {
  return {
    shape: (known) =>
      `expected { <${role}>: { ... } }${role === "collector" ? ' or "none"' : ""}, the scenario's ${role} block (${role}s: ${known.join(", ")})`,
    unknown: (name, known, near) =>
      `"${name}" is not a ${role} of the catalog (infra/catalog.ts); ${role}s: ${known.join(", ")}${near ? `; did you mean "${near}"?` : ""}`,
    notAMap: (name) => `expected the ${name} block as a map of its settings`,
    absentIsRequired: false,
  };
}

/**
 * `{ <component>: { ... } }` of one role: the name must be a catalog component of that kind (a plugin with an
 * image); the block is checked with the plugin's one scenario schema (plugins/registry.ts), so a bad parameter is
 * reported at its own key (`ingestbench:cell.collector.fluentd.buffer...`). The block is kept as written: the
 * renderer parses it again.
 *
 * Not checked: the block of a sink that also runs locally (postgres, clickhouse). Its scenario schema holds the local
 * server's settings, while a cell's sink block also carries the connection params the renderers read
 * (SinkPlugin `params`: `table`, `database`, `user`; infra/docker/pipeline.ts sinkParams), which that schema does not
 * name.
 */
function cellPlugin(role: "collector" | "sink") {
  return pluginBlock({
    known: deployableComponents.filter((n) => catalog[n]?.kind === role),
    schemaOf: (name) => {
      const plugin = role === "collector" ? collectorPlugin(name) : sinkPlugin(name);
      return role === "sink" && plugin.local ? z.unknown() : plugin.schema;
    },
    allowNone: role === "collector",
    keep: "raw",
    wording: cellWording(role),
  });
}

/** `ingestbench:cell`: a map, or its JSON text (how the provisioner sets it: `pulumi config set-all` takes strings). */
export const cellSchema = z.preprocess(
  (v) => {
    if (typeof v !== "string" || !v.trim().startsWith("{")) return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v; // reported as "expected object" below
    }
  },
  z
    .object({
      event: z.array(eventFieldSchema).min(1, { message: "give the scenario's event fields, at least one" }),
      collector: cellPlugin("collector"),
      sink: cellPlugin("sink"),
    })
    .strict()
    .transform((c): CellConfig => ({
      event: c.event.map((f) =>
        f.size === undefined ? { name: f.name, type: f.type } : { name: f.name, type: f.type, size: f.size },
      ),
      collector: c.collector as CellConfig["collector"],
      sink: c.sink as CellConfig["sink"],
    })),
);

/**
 * Keys of docker and azure stacks. They are validated here, in crossKeyChecks, rather than in the core shape above,
 * so that a local stack's unknown-key errors keep listing only the keys a local stack takes.
 */
const platformKeys = {
  /** host → catalog component (a sink or a collector; per cell, set by the harness); other hosts run the load generator's image */
  "ingestbench:components": componentsSchema,
  /** the owner label/tag on every resource; default: the OS user running the program */
  "ingestbench:owner": z
    .string()
    .regex(/^[A-Za-z0-9._@-]{1,64}$/, "letters, digits, . _ @ -, at most 64 characters"),
  "ingestbench:docker": dockerOptionsSchema,
  "ingestbench:azure": azureOptionsSchema,
  /** the scenario cell the components run (CellConfig); per cell, set by the harness */
  "ingestbench:cell": cellSchema,
  /** a sink's password, only as a Pulumi secret (`pulumi config set --secret ingestbench:griddbPassword …`: `{ secure: … }`) */
  ...Object.fromEntries(PASSWORD_SINKS.map((sink) => [passwordConfigKey(sink), secretValueSchema(sink)])),
} as const;

/** A config value Pulumi stores encrypted (`secure: v1:…`); plain text is refused, it would sit in the tracked stack file. */
function secretValueSchema(sink: string) {
  return z
    .object(
      { secure: z.string().min(1) },
      {
        invalid_type_error: `a password must be a Pulumi secret: \`pulumi config set --secret ${passwordConfigKey(sink)} …\` (or ${passwordEnvName(sink)} in the environment), never plain text in the stack file`,
      },
    )
    .strict();
}

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
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ["ingestbench:docker"],
      message: "ingestbench:docker applies to docker stacks only",
    });
  }
  if (cfg["ingestbench:azure"] !== undefined && platform !== "azure" && platform !== "local") {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ["ingestbench:azure"],
      message: "ingestbench:azure applies to azure stacks only",
    });
  }
  if (platform === "azure") azureChecks(cfg, ctx);
  const hosts = (cfg["ingestbench:hosts"] ?? {}) as Record<string, unknown>;
  const components = cfg["ingestbench:components"];
  cellMatchesComponents(cfg["ingestbench:cell"], components, ctx);
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

/**
 * The cell's collector and sink are what the hosts run: every collector host of `ingestbench:components` runs the
 * cell's collector (a cell with a collector needs one), every sink host its sink. Reported at the cell's key.
 */
function cellMatchesComponents(rawCell: unknown, rawComponents: unknown, ctx: z.RefinementCtx): void {
  if (rawCell === undefined) return;
  const cell = cellSchema.safeParse(rawCell);
  const comps = componentsSchema.safeParse(rawComponents ?? {});
  if (!cell.success || !comps.success) return; // reported by crossKeyChecks
  const runs = (kind: "collector" | "sink") =>
    Object.entries(comps.data).filter(([, c]) => catalog[c]?.kind === kind);
  const listed =
    Object.entries(comps.data)
      .map(([h, c]) => `${h}: ${c}`)
      .join(", ") || "none";
  const { collector, sink } = cell.data;
  const collectorHosts = runs("collector");
  if (collector === null && collectorHosts.length > 0) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ["ingestbench:cell", "collector"],
      message: `the cell has no collector, but hosts run one (ingestbench:components: ${listed})`,
    });
  }
  if (
    collector !== null &&
    (collectorHosts.length === 0 || collectorHosts.some(([, c]) => c !== collector.name))
  ) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ["ingestbench:cell", "collector"],
      message: `the cell's collector ${collector.name} is not what the collector hosts run (ingestbench:components: ${listed})`,
    });
  }
  const sinkHosts = runs("sink");
  if (sinkHosts.length === 0 || sinkHosts.some(([, c]) => c !== sink.name)) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ["ingestbench:cell", "sink"],
      message: `the cell's sink ${sink.name} is not what the sink hosts run (ingestbench:components: ${listed})`,
    });
  }
}

/**
 * An azure stack: the azure block is required, every host has a VM size (and only hosts do), and each host's disk
 * caps fit its VM size's uncached disk cap and Premium SSD v2's rules (infra/azure/disk.ts), reported at the
 * host's `disk` key.
 */
function azureChecks(cfg: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const parsed = azureOptionsSchema.safeParse(cfg["ingestbench:azure"]);
  if (cfg["ingestbench:azure"] === undefined) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ["ingestbench:azure"],
      message:
        "an azure stack needs ingestbench:azure: { location, allowFrom (your address, /32), vmSizes (one per host) }",
    });
    return;
  }
  if (!parsed.success) return; // reported by crossKeyChecks
  const hosts = (cfg["ingestbench:hosts"] ?? {}) as Record<string, HostLimits>;
  const { vmSizes, dataDiskGiB } = parsed.data;
  for (const host of Object.keys(hosts)) {
    const size = vmSizes[host];
    if (size === undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["ingestbench:azure", "vmSizes"],
        message: `host "${host}" has no VM size; give one, e.g. ${host}: Standard_D2s_v5`,
      });
      continue;
    }
    for (const p of diskCapProblems(hosts[host]?.disk, size, dataDiskGiB ?? DEFAULT_DATA_DISK_GIB)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        // at the cap's own key when the file has it (iops, bandwidth), else at the host's disk block
        path:
          p.key === "dataDiskGiB"
            ? ["ingestbench:azure", "dataDiskGiB"]
            : ["ingestbench:hosts", host, "disk", p.key],
        message: p.message,
      });
    }
  }
  for (const host of Object.keys(vmSizes)) {
    if (!(host in hosts)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["ingestbench:azure", "vmSizes", host],
        message: `no host "${host}" in ingestbench:hosts (hosts: ${Object.keys(hosts).join(", ")})`,
      });
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
    // point at the top-level `config:` that makes the file a stack (harness/cli/commands/validate.ts fileKind)
    const lines = readFileSync(file, "utf8").split("\n");
    const line =
      Math.max(
        0,
        lines.findIndex((l) => /^config:/.test(l)),
      ) + 1;
    throw new ConfigurationError(
      "E_STACK_NOT_FOUND",
      `${displayPath(file)}:${line}:1: config: stack files are named Pulumi.<stack>.yaml (Pulumi derives the stack name from it)`,
      { location: `${displayPath(file)}:${line}`, field: "config" },
    );
  }
  return fromLoaded(loadYamlFile(file), file, name).spec;
}

/** Validate a loaded stack document and build its StackSpec and PlatformConfig (loadStack and fromPulumiConfig). */
function fromLoaded(loaded: ReturnType<typeof loadYamlFile>, file: string, name: string): PulumiStack {
  const parsed = validate(stackFileSchema, loaded, file, { code: "E_STACK_FIELD" });
  const cfg = parsed.config;
  const rawHosts = ((loaded.data as { config: Record<string, unknown> }).config["ingestbench:hosts"] ??
    {}) as Record<string, unknown>;
  const hostLimits: Record<string, HostLimits> = cfg["ingestbench:hosts"];
  const hosts: Record<string, HostSpec> = {};
  const raw = cfg as Record<string, unknown>;
  const platformValue = <K extends keyof typeof platformKeys>(
    key: K,
  ): z.infer<(typeof platformKeys)[K]> | undefined =>
    raw[key] === undefined ? undefined : platformKeys[key].parse(raw[key]);
  const azure = platformValue("ingestbench:azure");
  for (const [hostName, limits] of Object.entries(hostLimits)) {
    const given = rawHosts[hostName];
    const requested =
      given && typeof given === "object" ? structuredClone(given as Record<string, unknown>) : {};
    hosts[hostName] = {
      name: hostName,
      requested,
      limits,
      ...hostPrice(
        requested.pricePerHour,
        `${displayPath(file)} ingestbench:hosts.${hostName}.pricePerHour`,
        {
          size: azure?.vmSizes[hostName],
          region: azure?.location,
        },
      ),
    };
  }
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
      azure: platformValue("ingestbench:azure"),
      cell: platformValue("ingestbench:cell"),
    },
  };
}

/**
 * A host's price: its own `pricePerHour` (validated already) wins; else an azure host's VM size in the price table
 * (infra/azure/prices.ts), which may say there is none; else nothing (no price set).
 */
function hostPrice(
  own: unknown,
  field: string,
  azure: { size: string | undefined; region: string | undefined },
): Pick<HostSpec, "price" | "noPrice"> {
  if (own !== undefined) {
    const p = pricePerHourSchema.parse(own);
    return {
      price: {
        usdPerHour: p.usd,
        source: p.source ? `${field} (${p.source})` : field,
        date: p.date ?? "not given",
      },
    };
  }
  if (azure.size === undefined || azure.region === undefined) return {};
  const r = azurePrice(azure.size, azure.region);
  return "price" in r ? { price: r.price } : { noPrice: r.noPrice };
}

/** The platform keys of a docker/azure stack, beside the limits in StackSpec. */
export interface PlatformConfig {
  /** host → catalog component (`ingestbench:components`); hosts absent here run the load generator's image */
  components: Record<string, string>;
  /** `ingestbench:owner`, else the OS user name (labels and tags) */
  owner: string;
  /** `ingestbench:docker` ({} when absent) */
  docker: DockerOptions;
  /** `ingestbench:azure` (required on azure stacks, undefined elsewhere) */
  azure: AzureOptions | undefined;
  /** `ingestbench:cell`: the scenario cell the collectors are configured from; undefined: none set (defaults) */
  cell: CellConfig | undefined;
}

/** A validated stack with its platform keys (what the Pulumi program reads). */
export interface PulumiStack {
  spec: StackSpec;
  platform: PlatformConfig;
}

function defaultOwner(): string {
  try {
    const name = userInfo()
      .username.replace(/[^A-Za-z0-9._@-]/g, "-")
      .slice(0, 64);
    return name.length > 0 ? name : "unknown";
  } catch {
    return "unknown";
  }
}

/** loadStack plus the platform keys (components, owner, docker and azure options). Same validation, same errors. */
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
    throw new ConfigurationError(
      "E_STACK_FIELD",
      `pulumi config ${key}: not valid JSON: ${(err as Error).message}`,
      { field: key, cause: err },
    );
  }
}
