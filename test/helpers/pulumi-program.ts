/**
 * Run the Pulumi program (infra/index.ts) under Pulumi's own mocks (`pulumi.runtime.setMocks`): every resource's
 * state is its inputs (plus what `state` adds per type, e.g. an address Azure would assign), calls return {}.
 * No Pulumi CLI, engine or cloud is involved: the test sees what the program asks for and the outputs it exports.
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseYaml } from "yaml";
import { vi } from "vitest";
import type { StackOutputs } from "../../core/outputs.ts";

/** One resource the program registered. */
export interface RecordedResource {
  type: string;
  name: string;
  inputs: Record<string, any>;
  custom: boolean;
}

/** A stack file's `config:` as Pulumi hands it to a program: "ingestbench:<key>" → string, objects as JSON text. */
export function configOfFile(file: string): Record<string, string> {
  const doc = parseYaml(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  return encodeConfig(doc.config);
}

/** Encode config values as Pulumi does: strings as they are, anything else as JSON text. */
export function encodeConfig(config: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/** The resolved value of an Output. */
export function outputValue<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply((v) => resolve(v)));
}

/**
 * Install Pulumi's mocks for a program run as stack `stack` (project "ingestbench"): every resource registered from
 * now on is appended to the returned list, with its inputs (plus `state(type, name, inputs)`) as its state; calls
 * return {}. For tests that build a component directly instead of running infra/index.ts.
 */
export async function recordResources(
  stack: string,
  state: (type: string, name: string, inputs: Record<string, any>) => Record<string, unknown> = () => ({}),
): Promise<RecordedResource[]> {
  const resources: RecordedResource[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource: (a) => {
        const inputs = a.inputs as Record<string, any>;
        resources.push({ type: a.type, name: a.name, inputs, custom: a.custom ?? false });
        return { id: `${a.name}-id`, state: { ...inputs, ...state(a.type, a.name, inputs) } };
      },
      call: () => ({}),
    },
    "ingestbench",
    stack,
    false,
  );
  return resources;
}

/**
 * Run infra/index.ts as stack `stack` with `config`. `state(type, inputs)` may add provider-computed properties.
 * Resolves once the exported outputs are known; call `settle()` before the next run (the program's last RPCs).
 * @throws whatever the program throws (e.g. ConfigurationError for bad config)
 */
export async function runPulumiProgram(
  stack: string,
  config: Record<string, string>,
  state?: (type: string, name: string, inputs: Record<string, any>) => Record<string, unknown>,
): Promise<{ resources: RecordedResource[]; outputs: StackOutputs; settle: () => Promise<void> }> {
  const resources = await recordResources(stack, state);
  pulumi.runtime.setAllConfig(config);
  vi.resetModules();
  const program = (await import("../../infra/index.ts")) as Record<string, pulumi.Output<unknown>>;
  const get = async <K extends keyof StackOutputs>(k: K): Promise<StackOutputs[K]> =>
    (await outputValue(program[k]!)) as StackOutputs[K];
  const outputs: StackOutputs = {
    platform: await get("platform"),
    stack: await get("stack"),
    network: await get("network"),
    hosts: await get("hosts"),
    endpoints: await get("endpoints"),
    versions: await get("versions"),
  };
  const message = await get("message");
  if (message !== undefined) outputs.message = message;
  return { resources, outputs, settle: () => pulumi.runtime.disconnect() };
}
