/**
 * Golden-file comparison for rendered collector configs: the text must equal
 * plugins/collectors/<collector>/golden/<case> (the golden files live with their plugin);
 * with UPDATE_GOLDEN=1 in the environment the file is (re)written instead, and the test says so by failing
 * nothing but printing the path (review the diff with git before committing).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

const collectorsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../plugins/collectors");

/** Compare `text` with the golden file `<collector>/<name>`, or rewrite it under UPDATE_GOLDEN=1. */
export function expectGolden(collector: string, name: string, text: string): void {
  const file = path.join(collectorsDir, collector, "golden", name);
  if (process.env.UPDATE_GOLDEN === "1") {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`golden file written: ${path.relative(process.cwd(), file)}`);
    return;
  }
  if (!existsSync(file))
    throw new Error(`no golden file ${file}: run with UPDATE_GOLDEN=1 once and review it`);
  expect(text).toBe(readFileSync(file, "utf8"));
}
