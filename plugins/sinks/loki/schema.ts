/** The scenario schema of the loki sink (`sink.loki`), its plugin's one schema (./index.ts). */
import { z } from "zod";

/** `sink.loki`: Grafana Loki, push API. */
export const lokiSinkSchema = z
  .object({
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/)
      .default("3.5.0"),
    /** the `job` stream label every line carries */
    job: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default("ingestbench"),
  })
  .strict();

export type LokiSinkConfig = z.infer<typeof lokiSinkSchema>;
