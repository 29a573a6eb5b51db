/**
 * The dated price table of the azure VM sizes (infra/azure/prices.yaml): US dollars per hour of a size in a region,
 * with the source and the date the source states. An azure stack's hosts get their price from it when their stack
 * file sets none (infra/stack/schema.ts); a null figure is "no price", said with the table's note, and a run then
 * reports core-seconds per million rows instead of dollars (harness/runner/cost.ts).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { displayPath, loadYamlFile, validate } from "../../core/yaml.ts";
import type { HostPrice } from "../../core/limits.ts";
import { VM_SIZE_NAMES } from "./sizes.ts";

/** The table in the repository. */
export const PRICE_TABLE = path.join(path.dirname(fileURLToPath(import.meta.url)), "prices.yaml");

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date as YYYY-MM-DD");

const tableSchema = z
  .object({
    source: z.string().url(),
    date: isoDate.nullable(),
    os: z.literal("linux"),
    offer: z.literal("pay-as-you-go"),
    currency: z.literal("USD"),
    note: z.string().optional(),
    prices: z.array(
      z
        .object({
          size: z.enum(VM_SIZE_NAMES),
          region: z.string().regex(/^[a-z][a-z0-9]{2,39}$/, 'an Azure region name such as "westeurope"'),
          usd: z.number().positive().nullable(),
        })
        .strict(),
    ),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.date === null && t.prices.some((p) => p.usd !== null))
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["date"],
        message: "a table with prices needs the date its source states for them",
      });
  });

/** A validated price table. */
export type PriceTable = z.infer<typeof tableSchema>;

const cache = new Map<string, PriceTable>();

/**
 * The table at `file` (default PRICE_TABLE), validated once per file.
 * @throws ConfigurationError E_PRICE_TABLE with "file:line:col: field: problem" per issue
 */
export function loadPriceTable(file = PRICE_TABLE): PriceTable {
  let t = cache.get(file);
  if (!t) {
    t = validate(tableSchema, loadYamlFile(file), file, { code: "E_PRICE_TABLE" });
    cache.set(file, t);
  }
  return t;
}

/**
 * The price of one VM size in a region from the table: `{ price }`, or `{ noPrice }` saying why there is none (no
 * entry for the size and region, or a null figure, with the table's note).
 */
export function azurePrice(
  size: string,
  region: string,
  file = PRICE_TABLE,
): { price: HostPrice } | { noPrice: string } {
  const table = loadPriceTable(file);
  const entry = table.prices.find((p) => p.size === size && p.region === region);
  const where = displayPath(file);
  if (!entry) return { noPrice: `${size} in ${region} is not in ${where}` };
  if (entry.usd === null)
    return { noPrice: `${size} in ${region} has no price in ${where}${table.note ? `: ${table.note}` : ""}` };
  return {
    price: {
      usdPerHour: entry.usd,
      source: `${where} (${table.offer}, ${table.os}, ${region}; ${table.source})`,
      date: table.date!,
    },
  };
}
