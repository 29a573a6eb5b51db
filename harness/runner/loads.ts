/**
 * The run's load for its plan (./load.ts): an application under test (plan.app, ./load-app.ts), a collector's own
 * generator (`generator: none`, plan.selfLoad, ./load-self.ts) or the generator processes (./load-generators.ts).
 * The one place that reads the plan's load mode; the run's phases use the Load it returns.
 */
import type { CellPlan } from "./cell-plan.ts";
import type { Load } from "./load.ts";
import { AppLoad } from "./load-app.ts";
import { GeneratorLoad, type LoadStart } from "./load-generators.ts";
import { SelfLoad } from "./load-self.ts";

/** Start the plan's load against the stack's entry points. @throws what the load's start throws */
export async function startLoad(s: LoadStart): Promise<Load> {
  if (s.plan.app) return AppLoad.start(s);
  if (s.plan.selfLoad) return SelfLoad.start(s);
  return GeneratorLoad.start(s);
}

/** What the entry points (collectors) need to know of the load: a collector's own generator stamps the run's gen. */
export function entryLoadOptions(plan: CellPlan, genBase: number): { genBase?: number } {
  return plan.selfLoad ? { genBase } : {};
}
