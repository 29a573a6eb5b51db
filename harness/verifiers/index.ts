/** Verifier registry: the sink-side half of each sink, by the sink's name in scenarios. */
import { clickhouseVerifier } from "./clickhouse.ts";
import { postgresVerifier } from "./postgres.ts";
import type { VerifierFactory } from "./types.ts";

export const verifiers: Record<string, VerifierFactory> = {
  [postgresVerifier.name]: postgresVerifier,
  [clickhouseVerifier.name]: clickhouseVerifier,
};
