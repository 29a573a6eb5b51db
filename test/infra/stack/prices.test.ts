import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadStack } from "../../../infra/stack/schema.ts";

const stacksDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../stacks");
const tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-price-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function stackFile(name: string, lines: string[]): string {
  const file = path.join(tmp, `Pulumi.${name}.yaml`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

const azure = (sinkPrice: string[]) => [
  "config:",
  "  ingestbench:platform: azure",
  "  ingestbench:hosts:",
  "    loadgen:",
  "    sink:",
  ...sinkPrice,
  "  ingestbench:azure:",
  "    location: westeurope",
  "    allowFrom: 198.51.100.7/32",
  "    vmSizes: { loadgen: Standard_D2s_v5, sink: Standard_D4s_v5 }",
];

describe("a host's price per hour in the stack file (pricePerHour)", () => {
  it("any platform may set one: US dollars per hour, with the source and date it gives, or the file's field as source", () => {
    const s = loadStack(
      stackFile("local-priced", [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        "    loadgen:",
        "      pricePerHour: { usd: 0.05 }",
        "    sink:",
        "      cpu: '1'",
        "      pricePerHour: { usd: 0.096, source: my invoice, date: 2026-12-01 }",
      ]),
    );
    expect(s.hosts.loadgen?.price).toEqual({
      usdPerHour: 0.05,
      source: expect.stringMatching(/Pulumi\.local-priced\.yaml ingestbench:hosts\.loadgen\.pricePerHour$/),
      date: "not given",
    });
    expect(s.hosts.sink?.price).toEqual({
      usdPerHour: 0.096,
      source: expect.stringMatching(/ingestbench:hosts\.sink\.pricePerHour \(my invoice\)$/),
      date: "2026-12-01",
    });
    // the price is no limit
    expect(s.hosts.sink?.limits).toEqual({ cpu: { quotaUs: 100000, periodUs: 100000 } });
  });

  it("a bad price is an error naming the file, line and field", () => {
    const bad = (name: string, price: string) =>
      stackFile(name, [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        "    sink:",
        `      pricePerHour: ${price}`,
      ]);
    for (const [name, price, problem] of [
      [
        "negative",
        "{ usd: -1 }",
        /:5:\d+: config\.ingestbench:hosts\.sink\.pricePerHour\.usd: .*greater than or equal to 0/,
      ],
      [
        "text",
        '{ usd: "cheap" }',
        /:5:\d+: config\.ingestbench:hosts\.sink\.pricePerHour\.usd: a price in US dollars per hour/,
      ],
      ["eur", "{ eur: 0.09 }", /:5:\d+: config\.ingestbench:hosts\.sink\.pricePerHour.*unknown key "eur"/],
      [
        "date",
        "{ usd: 0.1, date: last week }",
        /:5:\d+: config\.ingestbench:hosts\.sink\.pricePerHour\.date: a date as YYYY-MM-DD/,
      ],
    ] as const) {
      const file = bad(name, price);
      expect(() => loadStack(file), name).toThrow(
        expect.objectContaining({
          code: "E_STACK_FIELD",
          message: expect.stringMatching(new RegExp(`Pulumi\\.${name}\\.yaml${problem.source}`)),
        }),
      );
    }
  });

  it("an azure host takes its VM size's price from infra/azure/prices.yaml (none published yet: says so); the stack's own wins", () => {
    const table = loadStack(stackFile("azure-table", azure([])));
    for (const h of ["loadgen", "sink"]) expect(table.hosts[h]?.price, h).toBeUndefined();
    expect(table.hosts.sink?.noPrice).toMatch(
      /^Standard_D4s_v5 in westeurope has no price in .*prices\.yaml: /,
    );
    const own = loadStack(stackFile("azure-own", azure(["      pricePerHour: { usd: 0.2 }"])));
    expect(own.hosts.sink?.price?.usdPerHour).toBe(0.2);
    expect(own.hosts.sink?.noPrice).toBeUndefined();
    expect(own.hosts.loadgen?.noPrice).toMatch(/^Standard_D2s_v5 in westeurope has no price/);
  });

  it("the azure stacks in stacks/ load with their hosts' price or the reason they have none", () => {
    for (const name of [
      "azure-d2s-v5",
      "azure-d4s-v5",
      "azure-quarter-core",
      "azure-d4s-v5-two-collectors",
    ]) {
      const s = loadStack(name, stacksDir);
      for (const h of Object.values(s.hosts))
        expect(h.price !== undefined || h.noPrice !== undefined, `${name} ${h.name}`).toBe(true);
    }
  });
});
