/**
 * Sink passwords a deployed stack needs, checked before anything is deployed (docs/design.md, "Secrets"): every
 * component a cell runs whose catalog entry has a `secretEnv` (PostgreSQL, ClickHouse, GridDB: their containers get
 * the password from the stack's Pulumi config secret `ingestbench:<sink>Password`, else INGESTBENCH_<SINK>_PASSWORD,
 * infra/secrets.ts) needs INGESTBENCH_<SINK>_PASSWORD in the harness's environment too: its verifier, generators and
 * query load authenticate with it. There is no default.
 */
import { ConfigurationError } from "../../core/errors.ts";
import { passwordConfigKey, passwordEnvName, sinkPassword } from "../../core/secrets.ts";
import { catalogEntry } from "../../infra/catalog.ts";

/**
 * @param components the catalog names the stack's cells run (hosts' components)
 * @throws ConfigurationError E_SINK_PASSWORD naming the component, the variable and the config key, for the first
 *   component whose sink password `env` lacks
 */
export function requireSinkPasswords(
  stack: string,
  components: Iterable<string>,
  env: NodeJS.ProcessEnv = process.env,
): void {
  for (const component of new Set(components)) {
    for (const sink of Object.values(catalogEntry(component).secretEnv ?? {})) {
      if (sinkPassword(sink, env) !== undefined) continue;
      throw new ConfigurationError(
        "E_SINK_PASSWORD",
        `stack ${stack} runs ${component}, whose password has no default: set ${passwordEnvName(sink)} (the harness's verifier and generators authenticate with it; the container takes the stack's config secret \`pulumi config set --secret ${passwordConfigKey(sink)} …\` when set, else the same variable: give both the same value)`,
        { field: passwordConfigKey(sink) },
      );
    }
  }
}
