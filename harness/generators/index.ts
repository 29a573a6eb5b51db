/** Generator registry: every load generator, by the name scenarios use under `generator:`. */
import { clickhouseHttp } from "./clickhouse-http.ts";
import { esBulk } from "./es-bulk.ts";
import { fluentForward } from "./fluent-forward.ts";
import { griddbWebapi } from "./griddb-webapi.ts";
import { httpJson } from "./http-json.ts";
import { lokiPush } from "./loki-push.ts";
import { pgCopy } from "./pg-copy.ts";
import { syslog } from "./syslog.ts";
import type { GeneratorFactory } from "./types.ts";

export const generators: Record<string, GeneratorFactory> = {
  [pgCopy.name]: pgCopy as GeneratorFactory,
  [syslog.name]: syslog as GeneratorFactory,
  [httpJson.name]: httpJson as GeneratorFactory,
  [clickhouseHttp.name]: clickhouseHttp as GeneratorFactory,
  [fluentForward.name]: fluentForward as GeneratorFactory,
  [esBulk.name]: esBulk as GeneratorFactory,
  [lokiPush.name]: lokiPush as GeneratorFactory,
  [griddbWebapi.name]: griddbWebapi as GeneratorFactory,
};
