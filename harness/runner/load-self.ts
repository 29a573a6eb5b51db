/**
 * A collector's own built-in generator (`generator: none`) as the run's load (./load.ts; ./self-load.ts): no
 * generator process, `sent` is the collector's count of the events it made (refreshed before each sample), the load
 * ends by itself (`settled`), the harness knows no bytes, the ledger's `sent` is inferred and the content is not
 * compared (the collector's fixed values).
 */
import { ConfigurationError } from "../../core/errors.ts";
import type { Ledger } from "../../core/verifier.ts";
import type { AfterLoadTimes } from "./fidelity.ts";
import { GroupLoad, type LoadLedgerInput } from "./load.ts";
import type { LoadStart } from "./load-generators.ts";
import { CollectorLoad, inferredSent, selfLoadBytesUnknown, selfLoadFidelity } from "./self-load.ts";

const now = (): number => performance.timeOrigin + performance.now();

/** The collectors' own load, read through the site (RunSite.selfLoadCounts). */
export class SelfLoad extends GroupLoad {
  override readonly bytesUnknown: string;

  private constructor(
    private readonly collector: CollectorLoad,
    readonly generatorCount: number,
    plan: LoadStart["plan"],
  ) {
    super(collector);
    this.bytesUnknown = selfLoadBytesUnknown(plan);
  }

  /**
   * The collector's own load on each entry (collector) host.
   * @throws ConfigurationError E_GENERATOR_NONE when the site cannot read the collector's count (not local)
   */
  static start(s: LoadStart): SelfLoad {
    const { plan, site } = s;
    const self = plan.selfLoad!;
    if (!site.selfLoadCounts) {
      throw new ConfigurationError(
        "E_GENERATOR_NONE",
        `scenario ${plan.scenario}: generator: none runs on the local platform only (this site cannot read ${self.collector}'s own count of the events it made)`,
        { field: "generator" },
      );
    }
    const reason = `no generator process: ${self.collector}'s ${self.input} stamps sent_at with the collector host's clock (generator: none)`;
    const load = new CollectorLoad(
      () => site.selfLoadCounts!(),
      s.entries.length * self.generatorsPerHost,
      self.quietMs,
      reason,
    );
    return new SelfLoad(load, s.entries.length, plan);
  }

  override refresh(): Promise<void> {
    return this.collector.refresh();
  }

  /** The collector's input has stopped and everything it made is stored (./self-load.ts settled). */
  override settled(stored: number): Promise<boolean> {
    return this.collector.settled(stored);
  }

  /** No seeded content to sample: nothing to tell the verifier. */
  override expectContent(): void {}

  /** The ledger against the collector's count (Ledger.inferred), its content not compared (Ledger.fidelity). */
  override async ledger(i: LoadLedgerInput): Promise<{ ledger: Ledger; times: Partial<AfterLoadTimes> }> {
    const t = now();
    const ledger = await i.verifier.ledger(i.sent, i.rejected);
    const ms = now() - t;
    ledger.inferred = inferredSent(i.plan, i.sent, ledger);
    ledger.fidelity = selfLoadFidelity(i.plan);
    return { ledger, times: { ledgerMs: ms, afterLoadMs: ms } };
  }
}
