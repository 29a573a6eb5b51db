/** Generator registry: every load generator, by the name scenarios use under `generator:`. */
import { clickhouseHttp } from "./clickhouse-http.ts";
import { httpJson } from "./http-json.ts";
import { pgCopy } from "./pg-copy.ts";
import { syslog } from "./syslog.ts";
import type { GeneratorFactory } from "./types.ts";

export const generators: Record<string, GeneratorFactory> = {
  [pgCopy.name]: pgCopy as GeneratorFactory,
  [syslog.name]: syslog as GeneratorFactory,
  [httpJson.name]: httpJson as GeneratorFactory,
  [clickhouseHttp.name]: clickhouseHttp as GeneratorFactory,
};
