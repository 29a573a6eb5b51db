import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { HostPrice, HostSpec } from "../../../core/limits.ts";
import type { HostWindow } from "../../../harness/observers/types.ts";
import type { Phase, SeriesPoint } from "../../../harness/results/types.ts";
import { hostsCoreSeconds, stackCost } from "../../../harness/runner/cost.ts";
import { azurePrice, loadPriceTable, PRICE_TABLE } from "../../../infra/azure/prices.ts";
import { VM_SIZE_NAMES } from "../../../infra/azure/sizes.ts";
import { hostWindow } from "../../helpers/host-window.ts";

function hw(cpuCores: number, dtMs?: number): HostWindow {
  // without dtMs unless given: cost.ts then takes the time since the previous sample
  const { dtMs: _default, ...w } = hostWindow({ cpuCores });
  return dtMs === undefined ? w : { ...w, dtMs };
}

function point(t: number, phase: Phase, hosts: Record<string, HostWindow>): SeriesPoint {
  return {
    t,
    elapsedS: t / 1000,
    phase,
    stored: 0,
    countQueryMs: 5,
    rowsPerSec: null,
    mibPerSec: null,
    lagMs: null,
    sent: 0,
    accepted: 0,
    hosts,
  };
}

/**
 * A series of a pipeline (loadgen → collector → sink): warmup samples (not counted), two measurement samples of 1 s
 * and 2 s, a drain sample (not counted). Core-seconds: loadgen 0.5 × 1 + 0.5 × 2 = 1.5; collector 1 × 1 + 1 × 2 = 3;
 * sink 0.25 × 1 + 0.25 × 2 = 0.75 (its dtMs absent: the time since the previous sample is used).
 */
const series: SeriesPoint[] = [
  point(0, "warmup", { loadgen: hw(9, 1000), collector: hw(9, 1000), sink: hw(9) }),
  point(1000, "warmup", { loadgen: hw(9, 1000), collector: hw(9, 1000), sink: hw(9) }),
  point(2000, "measure", { loadgen: hw(0.5, 1000), collector: hw(1, 1000), sink: hw(0.25) }),
  point(4000, "measure", { loadgen: hw(0.5, 2000), collector: hw(1, 2000), sink: hw(0.25) }),
  point(5000, "drain", { loadgen: hw(9, 1000), collector: hw(9, 1000), sink: hw(9) }),
];
/** 10,000 distinct rows/s over the 3 s window: 30,000 rows; 200 wire bytes a row */
const summary = { rowsPerSecond: 10_000, measuredSeconds: 3, bytesPerRow: 200 };

const host = (name: string, price?: HostPrice, noPrice?: string): HostSpec => ({
  name,
  requested: {},
  limits: {},
  ...(price ? { price } : {}),
  ...(noPrice ? { noPrice } : {}),
});
const priced = (usdPerHour: number): HostPrice => ({ usdPerHour, source: "test", date: "2026-12-01" });

describe("the stack's cost of a run's rows (harness/runner/cost.ts)", () => {
  it("sums every host's cores × window over the measurement samples only, dtMs or else the time since the last sample", () => {
    const cs = hostsCoreSeconds(series);
    expect(Object.keys(cs).sort()).toEqual(["collector", "loadgen", "sink"]);
    expect(cs.loadgen).toBeCloseTo(1.5, 9);
    expect(cs.collector).toBeCloseTo(3, 9);
    expect(cs.sink).toBeCloseTo(0.75, 9);
  });

  it("without prices: the whole stack's core-seconds per million distinct rows, and says which hosts lack a price", () => {
    const c = stackCost(series, summary, {
      loadgen: host("loadgen"),
      collector: host("collector"),
      sink: host("sink"),
    });
    // (1.5 + 3 + 0.75) core-s ÷ 30,000 rows × 1e6 = 175
    expect(c.coreSecondsPerMillionRows).toBeCloseTo(175, 9);
    expect(c.usdPerMillionRows).toBeUndefined();
    expect(c.usdPerGiB).toBeUndefined();
    expect(c.noPrice).toBe(
      "no price for every host (loadgen: no pricePerHour in the stack file; collector: no pricePerHour in the stack file; sink: no pricePerHour in the stack file)",
    );
  });

  it("with a price for every host: $ per million rows from the wall time, and per GiB of wire bytes when no log bytes are known", () => {
    const hosts = {
      loadgen: host("loadgen", priced(0.192)),
      collector: host("collector", priced(0.096)),
      sink: host("sink", priced(0.192)),
    };
    const c = stackCost(series, summary, hosts);
    // 0.48 $/h × 3 s = 0.0004 $ for 30,000 rows: 0.0004 / 30,000 × 1e6 = 0.013333 $/M rows
    expect(c.usdPerHour).toBeCloseTo(0.48, 12);
    expect(c.usdPerMillionRows).toBeCloseTo(0.0004 / 0.03, 12);
    // 30,000 × 200 B = 6,000,000 B: 0.0004 $ ÷ 6e6 B × 2^30
    expect(c.usdPerGiB).toBeCloseTo((0.0004 / 6e6) * 2 ** 30, 12);
    expect(c.usdPerGiBOf).toBe("wire");
    expect(c.prices).toEqual({ source: "test", date: "2026-12-01" });
    expect(c.noPrice).toBeUndefined();
    expect(c.coreSecondsPerMillionRows).toBeCloseTo(175, 9);
    // the log text's bytes, when the run knows them, are what a GiB ingested counts
    const log = stackCost(series, { ...summary, logBytesPerRow: 100 }, hosts);
    expect(log.usdPerGiB).toBeCloseTo((0.0004 / 3e6) * 2 ** 30, 12);
    expect(log.usdPerGiBOf).toBe("log");
  });

  it("one host without a price leaves only core-seconds, naming that host and why (the price table's reason)", () => {
    const c = stackCost(series, summary, {
      loadgen: host("loadgen", priced(0.192)),
      collector: host(
        "collector",
        undefined,
        "Standard_D2s_v5 in westeurope has no price in infra/azure/prices.yaml",
      ),
      sink: host("sink", priced(0.192)),
    });
    expect(c.usdPerMillionRows).toBeUndefined();
    expect(c.usdPerHour).toBeUndefined();
    expect(c.noPrice).toBe(
      "no price for every host (collector: Standard_D2s_v5 in westeurope has no price in infra/azure/prices.yaml)",
    );
    expect(c.coreSecondsPerMillionRows).toBeCloseTo(175, 9);
  });

  it("no rows stored in the window: no figure per row (null), the core-seconds still per host", () => {
    const c = stackCost(series, { ...summary, rowsPerSecond: 0 }, { loadgen: host("loadgen", priced(1)) });
    expect(c.coreSecondsPerMillionRows).toBeNull();
    expect(c.hostsCoreSeconds.collector).toBeCloseTo(3, 9);
  });
});

describe("the azure price table (infra/azure/prices.yaml)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ingestbench-prices-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("lists every size azure stacks may use; no figure was published where it was written, so each says no price and why", () => {
    const table = loadPriceTable();
    expect(new Set(table.prices.map((p) => p.size))).toEqual(new Set(VM_SIZE_NAMES));
    expect(table.source).toBe("https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/");
    const r = azurePrice("Standard_D2s_v5", "westeurope");
    expect(r).toEqual({
      noPrice: expect.stringMatching(
        /^Standard_D2s_v5 in westeurope has no price in .*infra\/azure\/prices\.yaml: no published Azure pay-as-you-go figure/,
      ),
    });
    expect(azurePrice("Standard_D2s_v5", "eastus", PRICE_TABLE)).toEqual({
      noPrice: expect.stringMatching(/^Standard_D2s_v5 in eastus is not in /),
    });
  });

  it("a table with a figure gives it with its source and date; a bad figure is an error naming file, line and field", () => {
    const good = path.join(dir, "good.yaml");
    writeFileSync(
      good,
      [
        "source: https://example.com/prices",
        "date: 2026-11-30",
        "os: linux",
        "offer: pay-as-you-go",
        "currency: USD",
        "prices:",
        "  - { size: Standard_D4s_v5, region: westeurope, usd: 0.2 }",
        "",
      ].join("\n"),
    );
    const r = azurePrice("Standard_D4s_v5", "westeurope", good);
    expect(r).toEqual({
      price: {
        usdPerHour: 0.2,
        source: expect.stringContaining(
          "good.yaml (pay-as-you-go, linux, westeurope; https://example.com/prices)",
        ),
        date: "2026-11-30",
      },
    });
    const bad = path.join(dir, "bad.yaml");
    writeFileSync(
      bad,
      [
        "source: https://example.com/prices",
        "date: null",
        "os: linux",
        "offer: pay-as-you-go",
        "currency: USD",
        "prices:",
        "  - { size: Standard_D4s_v5, region: westeurope, usd: -0.2 }",
        "",
      ].join("\n"),
    );
    expect(() => loadPriceTable(bad)).toThrow(
      expect.objectContaining({
        code: "E_PRICE_TABLE",
        message: expect.stringMatching(/bad\.yaml:7:\d+: prices\.0\.usd: .*greater than 0/),
      }),
    );
  });
});
