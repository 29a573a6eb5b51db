/** The scenario schema of the griddb sink (`sink.griddb`), its plugin's one schema (./index.ts). */
import { z } from "zod";

/**
 * `sink.griddb`: GridDB behind its Web API (the fluent-plugin-griddb target), with the param names
 * ./verifier.ts reads. `containerType` COLLECTION (no row key) as 000 chose: a TIME_SERIES container
 * upserts on its timestamp key, so equal timestamps would be overwrites, not rows.
 */
export const griddbSinkSchema = z
  .object({
    version: z
      .string()
      .regex(/^\d+\.\d+(\.\d+)?$/)
      .default("5.6.0"),
    cluster: z
      .string()
      .regex(/^[A-Za-z0-9_]+$/)
      .default("myCluster"),
    database: z
      .string()
      .regex(/^[A-Za-z0-9_]+$/)
      .default("public"),
    container: z
      .string()
      .regex(/^[A-Za-z0-9_]+$/)
      .default("ib_events"),
    containerType: z.enum(["COLLECTION", "TIME_SERIES"]).default("COLLECTION"),
  })
  .strict();

export type GriddbSinkConfig = z.infer<typeof griddbSinkSchema>;
