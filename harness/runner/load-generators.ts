/**
 * The generator processes as the run's load (./load.ts): `processes` per entry point on the loadgen host
 * (./generator-group.ts), each entry's processes sharing its load.
 */
import type { CellPlan } from "./cell-plan.ts";
import { GeneratorGroup, processesOf, splitConfig } from "./generator-group.ts";
import { GroupLoad } from "./load.ts";
import type { RunSite } from "./site.ts";

/** Where the load starts: the stack's entry points (the sink, or each collector host) and the sink's params. */
export interface LoadStart {
  plan: CellPlan;
  site: RunSite;
  /** the run's stack platform (for an error naming it) */
  platform: string;
  projectRoot: string;
  entries: ReadonlyArray<{ host: string; port: number }>;
  params: Record<string, string>;
  genBase: number;
}

/** The generator processes, one entry point's load shared by its `processes`. */
export class GeneratorLoad extends GroupLoad {
  readonly generatorCount: number;

  private constructor(group: GeneratorGroup, entries: number) {
    super(group);
    this.generatorCount = entries;
  }

  /** Start the generator processes on the loadgen host, `processes` per entry point (./generator-group.ts). */
  static async start(s: LoadStart): Promise<GeneratorLoad> {
    const { plan, entries, params, genBase } = s;
    const loadgen = await s.site.loadgen(plan.replayFile);
    // `processes` per entry point share its load (generator-group.ts splitConfig); entry e's are genIds e·n .. e·n+n-1
    const perEntry = processesOf(plan.generator.config);
    const configs = splitConfig(plan.generator.config, perEntry);
    const group = new GeneratorGroup(
      loadgen.spawn,
      entries.length * perEntry,
      (genId) => {
        const entry = entries[Math.floor(genId / perEntry)]!;
        return {
          name: plan.generator.name,
          config: configs[genId % perEntry]!,
          ctx: {
            target: { host: entry.host, port: entry.port, params },
            fields: plan.fields,
            genId,
            genBase,
            replayFile: loadgen.replayFile,
          },
          projectRoot: s.projectRoot,
          clockSync: true,
        };
      },
      loadgen.program,
    );
    return new GeneratorLoad(group, entries.length);
  }
}
