/**
 * An application under test as the run's load (./load.ts; ./app-host.ts, docs/app-under-test.md): it runs in place
 * of the generator processes, its exporter aimed at the first entry point. Its dropped records keep their seqs and
 * are never stored (`unstorable`); once the ledger is taken, its own figures and the bytes it exported are run.json
 * `app`, and the ledger must have lost exactly its drops (verifyLedger, E_APP_LEDGER).
 */
import { ConfigurationError, VerificationError } from "../../core/errors.ts";
import { DEFAULT_FIDELITY } from "../../core/fidelity.ts";
import type { GeneratorFinal } from "../generators/types.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";
import { appBytes, generatorBlock } from "./app-bytes.ts";
import { AppRun, appLedger } from "./app-host.ts";
import { GroupLoad, type LoadConclusionInput } from "./load.ts";
import type { LoadStart } from "./load-generators.ts";

/** The application under test (plan.app), one generator for the ledger (genId 0). */
export class AppLoad extends GroupLoad {
  readonly generatorCount = 1;
  private concluded: Pick<RunRecord, "app"> = {};

  private constructor(private readonly run: AppRun) {
    super(run);
  }

  /**
   * Start the application under test (plan.app) on its host, its exporter aimed at the first entry (./app-host.ts).
   * @throws ConfigurationError E_APP_NOT_RUNNABLE when the site has no application host (a deployed stack)
   */
  static start(s: LoadStart): AppLoad {
    const { plan, site, genBase } = s;
    const entry = s.entries[0]!;
    const app = plan.app!;
    if (!site.appHost)
      throw new ConfigurationError(
        "E_APP_NOT_RUNNABLE",
        `scenario ${plan.scenario}: an application under test runs on local stacks only (this stack is ${s.platform})`,
        { field: "app" },
      );
    const host = site.appHost(app.spec.host);
    return new AppLoad(
      new AppRun({
        plan: app,
        spawn: host.spawn,
        controlAddress: host.controlAddress,
        cwd: s.projectRoot,
        exporterEnv: {
          INGESTBENCH_TARGET: `${entry.host}:${entry.port}`,
          INGESTBENCH_PROTOCOL: plan.generator.name,
          INGESTBENCH_GEN: String(genBase),
          INGESTBENCH_SEED: String(plan.seed ?? 1),
          INGESTBENCH_FIELDS: JSON.stringify(plan.fields),
          INGESTBENCH_WARMUP_MS: String(plan.warmupMs),
          // the protocol's block (defaults filled in): how the exporter frames records (tag, APP-NAME, …: ./app-bytes.ts)
          INGESTBENCH_GENERATOR: JSON.stringify(generatorBlock(plan.generator.name, plan.generator.config)),
        },
      }),
    );
  }

  /** The app's dropped records keep their seqs and are never stored: the completion wait does not wait for them. */
  override unstorable(final: GeneratorFinal): number {
    return final.sent - final.accepted;
  }

  /** run.json `app`: its own figures, its hosts' CPU and its ledger check with the bytes it exported. */
  override async conclude(i: LoadConclusionInput): Promise<Pick<RunRecord, "app">> {
    const { plan, final, ledger } = i;
    const figures = this.run.figures!.figures;
    const bytes = await appBytes({
      figures,
      reader: i.verifier.rows,
      sent: final.sent,
      stored: ledger.distinct,
      limit: (plan.fidelity ?? DEFAULT_FIDELITY).all,
      encoding: {
        protocol: plan.generator.name,
        config: plan.generator.config,
        fields: plan.fields,
        seed: plan.seed ?? 1,
        gen: i.genBase,
      },
    });
    this.concluded = {
      app: {
        ...this.run.info,
        ...this.run.figures!,
        cpuCores: meanCpuByHost(i.series),
        ledger: { ...appLedger(figures, ledger), bytes },
      },
    };
    return this.concluded;
  }

  /** @throws VerificationError E_APP_LEDGER when the sink's ledger has not lost exactly the app's drops */
  override verifyLedger(): void {
    const agree = this.concluded.app?.ledger;
    if (agree && !agree.agrees) {
      throw new VerificationError(
        "E_APP_LEDGER",
        `the sink's ledger disagrees with the app: it reports ${agree.sent} sent and ${agree.dropped} dropped, so ${agree.expected} should be stored; the sink holds ${agree.stored} distinct and lost ${agree.lost} (${agree.unaccounted > 0 ? `${agree.unaccounted} lost in the pipeline beyond the app's drops` : `${-agree.unaccounted} reported dropped yet stored`}; ledger.missingRanges)`,
      );
    }
  }
}

/** Mean CPU per host over the measured window's points (every point when none is "measure"), cores. */
export function meanCpuByHost(series: readonly SeriesPoint[]): Record<string, number> {
  const measured = series.filter((p) => p.phase === "measure");
  const points = measured.length ? measured : series;
  const sums: Record<string, { total: number; n: number }> = {};
  for (const p of points) {
    for (const [h, w] of Object.entries(p.hosts)) {
      const s = (sums[h] ??= { total: 0, n: 0 });
      s.total += w.cpuCores;
      s.n++;
    }
  }
  return Object.fromEntries(Object.entries(sums).map(([h, s]) => [h, s.total / s.n]));
}
