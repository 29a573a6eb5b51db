/**
 * Sink passwords inside the Pulumi programs (docker and azure): read as Pulumi secrets, so that they stay
 * `pulumi.Output` secrets and the engine encrypts every resource property they reach in the stack's state
 * (https://www.pulumi.com/docs/iac/concepts/secrets/: "any Output marked secret is encrypted in state").
 *
 * Where a password comes from, first found:
 * 1. the stack's config secret `ingestbench:<sink>Password` (`pulumi config set --secret ingestbench:griddbPassword …`,
 *    `config.getSecret`: already a secret Output);
 * 2. the environment of the program, `INGESTBENCH_<SINK>_PASSWORD` (core/secrets.ts), wrapped with `pulumi.secret`
 *    (the Automation API runs the program with the harness's environment).
 * Neither: a catalog entry that needs the password (its `secretEnv`) fails the program with the names of both.
 */
import * as pulumi from "@pulumi/pulumi";
import type { CatalogImage } from "../core/catalog.ts";
import { passwordConfigKey, passwordEnvName } from "../core/secrets.ts";

/** The password of `sink` as a secret Output, or undefined when neither the config secret nor the variable is set. */
export function stackPassword(
  sink: string,
  env: NodeJS.ProcessEnv = process.env,
): pulumi.Output<string> | undefined {
  const [ns, key] = passwordConfigKey(sink).split(":") as [string, string];
  const fromConfig = new pulumi.Config(ns).getSecret(key);
  if (fromConfig !== undefined) return fromConfig;
  const v = env[passwordEnvName(sink)];
  return v !== undefined && v !== "" ? pulumi.secret(v) : undefined;
}

/**
 * The secret environment of a container: the catalog entry's `secretEnv` (variable → sink), and for a collector the
 * cell's sink password as INGESTBENCH_<SINK>_PASSWORD (the collector's rendered config refers to it, never holds it),
 * each value a secret Output.
 * @throws Error naming the config key and the variable when a `secretEnv` password is set nowhere
 */
export function secretEnvOf(
  component: CatalogImage,
  cellSink: string | undefined,
  password: (sink: string) => pulumi.Output<string> | undefined = stackPassword,
): Record<string, pulumi.Output<string>> {
  const out: Record<string, pulumi.Output<string>> = {};
  for (const [variable, sink] of Object.entries(component.secretEnv ?? {})) {
    const p = password(sink);
    if (p === undefined) {
      throw new Error(
        `${component.name} needs the ${sink} password (${variable}) and has no default: \`pulumi config set --secret ${passwordConfigKey(sink)} …\` or set ${passwordEnvName(sink)}`,
      );
    }
    out[variable] = p;
  }
  if (component.kind === "collector" && cellSink !== undefined) {
    const p = password(cellSink);
    if (p !== undefined) out[passwordEnvName(cellSink)] = p;
  }
  return out;
}
