/** Verifier registry: the sink-side half of each sink, by the sink's name in scenarios. */
import { clickhouseVerifier } from "./clickhouse.ts";
import { elasticsearchVerifier } from "./elasticsearch.ts";
import { griddbVerifier } from "./griddb.ts";
import { lokiVerifier } from "./loki.ts";
import { postgresVerifier } from "./postgres.ts";
import type { VerifierFactory } from "../../core/verifier.ts";

export const verifiers: Record<string, VerifierFactory> = {
  [postgresVerifier.name]: postgresVerifier,
  [clickhouseVerifier.name]: clickhouseVerifier,
  [elasticsearchVerifier.name]: elasticsearchVerifier,
  [lokiVerifier.name]: lokiVerifier,
  [griddbVerifier.name]: griddbVerifier,
};
