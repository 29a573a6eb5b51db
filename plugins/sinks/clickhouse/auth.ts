/**
 * How the harness's clients (the verifier, the component's probes, the clickhouse-http generator, the query load)
 * authenticate to ClickHouse's HTTP interface. ClickHouse takes the credentials "using HTTP Basic Authentication" or
 * in the `user` and `password` URL parameters (ClickHouse docs, "HTTP Interface"; both in 18.16 and 25.8); newer
 * servers refuse the two together. So: with INGESTBENCH_CLICKHOUSE_PASSWORD set, `Authorization: Basic
 * base64(<user>:<password>)` (RFC 7617; user params.user, default `default`) and no `user` parameter; without it,
 * `?user=<params.user>` when the params name one, as before. The password never goes into a URL (URLs are echoed in
 * errors and logs).
 */
import { authRefusal, sinkAuthHeaders, sinkLogin } from "../../../core/secrets.ts";

/** The headers and URL parameters of one ClickHouse HTTP request's authentication (see the file comment). */
export function clickhouseHttpAuth(
  params: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv = process.env,
): { headers: Record<string, string>; query: Record<string, string> } {
  const headers = sinkAuthHeaders("clickhouse", params, env);
  if (headers.Authorization !== undefined) return { headers, query: {} };
  return { headers: {}, query: params.user ? { user: params.user } : {} };
}

/**
 * ClickHouse's answer to a refused login, as a message naming the user and INGESTBENCH_CLICKHOUSE_PASSWORD, or
 * undefined for any other answer: HTTP 401/403 (newer servers), or an exception with code 192 UNKNOWN_USER, 193
 * WRONG_PASSWORD, 194 REQUIRED_PASSWORD or 516 AUTHENTICATION_FAILED (ClickHouse's src/Common/ErrorCodes.cpp; 18.16
 * answers them with HTTP 500, "Code: 193, e.displayText() = DB::Exception: Wrong password for user default").
 */
export function clickhouseAuthRefusal(
  status: number,
  body: string,
  params: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (status !== 401 && status !== 403 && !/\bCode: (?:192|193|194|516)\b/.test(body)) return undefined;
  return authRefusal(sinkLogin("clickhouse", params, env));
}
