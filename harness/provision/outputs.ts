/**
 * Reading a deployed stack's outputs: the Automation API hands them as an OutputMap (`pulumi stack output --json
 * --show-secrets`: output name → { value, secret }); this module checks them against the outputs contract of the
 * Pulumi program (core/outputs.ts, StackOutputs) and derives where the harness sends load and where it
 * counts (the targets of generators and verifiers).
 */
import { z } from "zod";
import {
  harnessAddress,
  type ComponentEndpoints,
  type EndpointOutput,
  type StackOutputs,
} from "../../core/outputs.ts";
import { ProvisioningError } from "../../core/errors.ts";

/** The Automation API's OutputMap (automation/stack.d.ts): output name → value and whether it is a secret. */
export type OutputMap = Record<string, { value: unknown; secret: boolean }>;

const endpointSchema = z
  .object({ host: z.string().min(1), port: z.number().int().min(1).max(65535), scheme: z.string().min(1) })
  .strict();

const publishedSchema = z
  .object({
    internal: z.number().int().min(1).max(65535),
    external: z.number().int().min(1).max(65535).nullable(),
    ip: z.string().min(1),
    protocol: z.string().min(1),
  })
  .strict();

const limitsSchema = z
  .object({
    requested: z.record(z.unknown()),
    applied: z.record(z.union([z.number(), z.string()])),
    enforced: z.boolean(),
    notes: z.array(z.string()),
  })
  .strict();

/** A collector's rendered config (HostConfigOutput). */
const hostConfigSchema = z
  .object({
    file: z.string().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "64 hex digits"),
    source: z.enum(["stack config", "defaults"]),
    built: z.object({ context: z.string(), image: z.string(), adds: z.string() }).strict().optional(),
  })
  .strict();

/** core/outputs.ts StackOutputs as a zod schema (the `satisfies` below keeps the two in step). */
export const stackOutputsSchema = z
  .object({
    platform: z.enum(["local", "docker", "azure"]),
    stack: z.string().min(1),
    message: z.string().optional(),
    network: z
      .object({ name: z.string().min(1), subnet: z.string().min(1) })
      .strict()
      .nullable(),
    hosts: z.record(
      z
        .object({
          address: z.string(),
          publicAddress: z.string().min(1).optional(),
          container: z.string(),
          component: z.string(),
          image: z.string(),
          limits: limitsSchema,
          config: hostConfigSchema.optional(),
        })
        .strict(),
    ),
    endpoints: z.record(
      z.array(
        z
          .object({
            host: z.string().min(1),
            data: endpointSchema.nullable(),
            metrics: endpointSchema.nullable(),
            published: z.array(publishedSchema),
          })
          .strict(),
      ),
    ),
    versions: z.record(
      z
        .object({
          pinned: z.string(),
          image: z.string(),
          digestResolved: z.boolean(),
          versionCommand: z.array(z.string()).min(1).optional(),
        })
        .strict(),
    ),
  })
  .strict();

// compile-time check that the schema produces exactly the contract's type
const _contract: z.ZodType<StackOutputs> = stackOutputsSchema satisfies z.ZodType<StackOutputs>;
void _contract;

/**
 * Validate an OutputMap against the outputs contract. `message` is dropped when the program exported it as
 * undefined (Pulumi omits undefined outputs).
 * @throws ProvisioningError E_STACK_OUTPUTS naming the stack and each bad output field ("hosts.sink.limits.enforced:
 *         Expected boolean, received string"), e.g. when the deployed program is older than the harness.
 */
export function parseStackOutputs(stack: string, outputs: OutputMap): StackOutputs {
  const plain = Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, v.value]));
  const r = stackOutputsSchema.safeParse(plain);
  if (!r.success) {
    const lines = r.error.issues.map(
      (i) => `  ${i.path.length ? i.path.join(".") : "(outputs)"}: ${i.message}`,
    );
    throw new ProvisioningError(
      "E_STACK_OUTPUTS",
      `stack ${stack}: the stack outputs do not follow the outputs contract (core/outputs.ts):\n${lines.join("\n")}`,
    );
  }
  if (r.data.stack !== stack) {
    throw new ProvisioningError(
      "E_STACK_OUTPUTS",
      `stack ${stack}: its outputs describe stack "${r.data.stack}"`,
    );
  }
  return r.data;
}

/** Where a harness process reaches one component: `inStack` on the stack network, `fromHarness` where this machine reaches it. */
export interface ComponentTarget {
  component: string;
  host: string;
  /** address:port on the stack network (what a generator on the loadgen host uses) */
  inStack: EndpointOutput;
  /** 127.0.0.1:<published port> on docker; the VM's public address on azure (null when not reachable from here) */
  fromHarness: { host: string; port: number } | null;
}

/** The load path of a cell: generators write to `entry`, verifiers count in `sink`. */
export interface RunTargets {
  /** the collector when the cell has one, else the sink */
  entry: ComponentTarget;
  sink: ComponentTarget;
  collector: ComponentTarget | null;
}

function targetOf(outputs: StackOutputs, component: string): ComponentTarget {
  const list: ComponentEndpoints[] = outputs.endpoints[component] ?? [];
  const ep = list[0];
  if (!ep || !ep.data) {
    throw new ProvisioningError(
      "E_STACK_OUTPUTS",
      `stack ${outputs.stack}: no data endpoint for component "${component}" in the outputs (components deployed: ${Object.keys(outputs.endpoints).join(", ") || "none"}); ` +
        "the stack runs other components than the scenario asks for: `ingestbench up --stack S --scenario F` deploys the scenario's components",
    );
  }
  return { component, host: ep.host, inStack: ep.data, fromHarness: harnessAddress(outputs, ep) };
}

/**
 * The targets of a cell (sink, optional collector) on a deployed stack.
 * @throws ProvisioningError E_STACK_OUTPUTS when the stack does not run one of them
 */
export function runTargets(
  outputs: StackOutputs,
  cell: { sink: string; collector: string | null },
): RunTargets {
  const sink = targetOf(outputs, cell.sink);
  const collector = cell.collector === null ? null : targetOf(outputs, cell.collector);
  return { entry: collector ?? sink, sink, collector };
}
