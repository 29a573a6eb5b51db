/**
 * Pulumi's Automation API (`@pulumi/pulumi/automation`), loaded on first use. Importing it costs more than a second
 * of CPU
 * (docs/measurements.md, "Figures moved from code comments"),
 * which every CLI call that never touches a deployed stack (validate, stacks, compare, a local bench) would pay.
 */
export type Automation = typeof import("@pulumi/pulumi/automation/index.js");

let loaded: Automation | undefined;

/** The Automation API module, imported once. */
export async function automation(): Promise<Automation> {
  loaded ??= await import("@pulumi/pulumi/automation/index.js");
  return loaded;
}

/** The Automation API if something already loaded it, else undefined (then no SDK object can exist yet). */
export function automationIfLoaded(): Automation | undefined {
  return loaded;
}
