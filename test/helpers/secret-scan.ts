/**
 * A scan of files for a known secret (test/e2e/secrets.test.ts): every regular file under the given paths is read
 * as bytes and searched for the secret as it is, in base64 (Basic auth headers, customData) and URL-encoded.
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** One file that holds the secret: its path, its mode (e.g. 0o600) and how the secret appears in it. */
export interface SecretHit {
  file: string;
  mode: number;
  as: "plain" | "base64" | "url-encoded";
}

/** The encodings a secret is looked for in (Basic auth is base64 of "user:password": its base64 alone is not a substring, so "user:secret" for the usual users is looked for too). */
function needles(secret: string): Array<[SecretHit["as"], Buffer]> {
  const out: Array<[SecretHit["as"], Buffer]> = [
    ["plain", Buffer.from(secret)],
    ["base64", Buffer.from(Buffer.from(secret).toString("base64"))],
  ];
  for (const user of ["admin", "postgres", "elastic", "default"])
    out.push(["base64", Buffer.from(Buffer.from(`${user}:${secret}`).toString("base64"))]);
  if (encodeURIComponent(secret) !== secret)
    out.push(["url-encoded", Buffer.from(encodeURIComponent(secret))]);
  return out;
}

/**
 * Every file under `roots` (files or directories, recursively; missing ones skipped, symlinks not followed) that holds
 * `secret`. Files that vanish while being scanned (a live run's temp files) are skipped.
 */
export function scanForSecret(roots: readonly string[], secret: string): SecretHit[] {
  const hits: SecretHit[] = [];
  const ns = needles(secret);
  const visit = (p: string): void => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      let names: string[] = [];
      try {
        names = readdirSync(p);
      } catch {
        return;
      }
      for (const n of names) visit(path.join(p, n));
      return;
    }
    if (!st.isFile()) return;
    let bytes: Buffer;
    try {
      bytes = readFileSync(p);
    } catch {
      return;
    }
    for (const [as, needle] of ns) {
      if (bytes.includes(needle)) {
        hits.push({ file: p, mode: st.mode & 0o777, as });
        break;
      }
    }
  };
  for (const r of roots) if (existsSync(r)) visit(r);
  return hits;
}
