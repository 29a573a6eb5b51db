/** Generator registry: every load generator, by the name scenarios use under `generator:`. */
import { pgCopy } from "./pg-copy.ts";
import type { GeneratorFactory } from "./types.ts";

export const generators: Record<string, GeneratorFactory> = {
  [pgCopy.name]: pgCopy as GeneratorFactory,
};
