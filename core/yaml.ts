/**
 * YAML loading with source positions, and zod validation whose errors name the file, the 1-based line and
 * column of the offending node and the dotted field path:
 *
 *   stacks/Pulumi.x.yaml:7:12: config.ingestbench:hosts.sink.cpu: "25 100" looks like a cgroup cpu.max ...
 *
 * Config is validated once, at the edge (docs/decisions/0001-configuration-validated-at-the-edge.md); every stack and scenario reader goes through here.
 */
import { readFileSync } from "node:fs";
import nodePath from "node:path";
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Document,
  type Node as YamlNode,
} from "yaml";
import { z } from "zod";
import { ConfigurationError } from "./errors.ts";

/** A parsed YAML file: the plain JS data plus the document and line counter needed to map paths to lines. */
export interface LoadedYaml {
  /** the path as given to loadYamlFile */
  path: string;
  text: string;
  doc: Document.Parsed;
  lineCounter: LineCounter;
  /** doc.toJS(): plain objects, arrays and scalars (null for an empty file) */
  data: unknown;
}

/** A zod field path: object keys and array indices. */
export type FieldPath = Array<string | number>;

/**
 * One problem, after flattening zod's issue tree. `at` says which node to point at: the value at `path`, the key
 * of the last path segment (unknown keys, bad names), or the parent of `path` (a missing key has no node).
 */
export interface FlatIssue {
  path: FieldPath;
  message: string;
  at: "value" | "key" | "parent";
}

/** 1-based line and column. */
export interface Position {
  line: number;
  col: number;
}

/** Show a path relative to the working directory when it is inside it, as given otherwise. */
export function displayPath(p: string): string {
  if (!nodePath.isAbsolute(p)) return p;
  const rel = nodePath.relative(process.cwd(), p);
  return rel && !rel.startsWith("..") && !nodePath.isAbsolute(rel) ? rel : p;
}

/**
 * Read and parse one YAML file (YAML 1.2, duplicate keys rejected, one document).
 * @throws ConfigurationError E_CONFIG_NOT_FOUND when the file cannot be read, E_YAML_SYNTAX (location "file:line")
 *         on a syntax error.
 */
export function loadYamlFile(path: string): LoadedYaml {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new ConfigurationError(
      "E_CONFIG_NOT_FOUND",
      `${displayPath(path)}: cannot read: ${err.code === "ENOENT" ? "no such file" : err.message}`,
      { cause: e, location: displayPath(path) },
    );
  }
  return parseYamlText(text, path);
}

/** Parse YAML text as if read from `path` (for tests and inline configs). Same errors as loadYamlFile. */
export function parseYamlText(text: string, path: string): LoadedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    keepSourceTokens: false,
    prettyErrors: true,
    uniqueKeys: true,
  });
  const file = displayPath(path);
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => {
      const pos = e.linePos?.[0] ?? lineCounter.linePos(e.pos[0]);
      let msg = (e.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
      // the library's advice to programmers (parseAllDocuments) says nothing to someone writing a config file
      if (e.code === "MULTIPLE_DOCS")
        msg =
          "a second YAML document starts here: a file holds one (remove the extra `---` line or split the file)";
      return `${file}:${pos.line}:${pos.col}: YAML syntax error: ${msg}`;
    });
    const first = doc.errors[0]!;
    const pos = first.linePos?.[0] ?? lineCounter.linePos(first.pos[0]);
    throw new ConfigurationError("E_YAML_SYNTAX", lines.join("\n"), {
      cause: first,
      location: `${file}:${pos.line}`,
    });
  }
  // a key that is a map or a list (`? [a, b]: 1`, `{ a: 1 }: 1`) has no JS object key: refuse it at its position,
  // rather than let toJS stringify it (with a process warning on stderr)
  const complexKey = collectionKeyPosition(doc, lineCounter);
  if (complexKey) {
    throw new ConfigurationError(
      "E_YAML_SYNTAX",
      `${file}:${complexKey.line}:${complexKey.col}: YAML syntax error: a key must be a scalar, not a map or a list`,
      { location: `${file}:${complexKey.line}` },
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 }) ?? null;
  } catch (e) {
    // the parser accepts an alias whose anchor is missing (or comes later) and an alias bomb; resolving them throws
    // a plain Error: report it like a syntax error, at the first alias that names no earlier anchor
    const pos = unresolvedAliasPosition(doc, lineCounter) ?? { line: 1, col: 1 };
    const msg = ((e as Error).message.split("\n")[0] ?? "").trim();
    throw new ConfigurationError(
      "E_YAML_SYNTAX",
      `${file}:${pos.line}:${pos.col}: YAML syntax error: ${msg}`,
      { cause: e, location: `${file}:${pos.line}` },
    );
  }
  return { path, text, doc, lineCounter, data };
}

/** Where the first map or list used as a mapping key stands, or undefined. */
function collectionKeyPosition(doc: Document, lineCounter: LineCounter): Position | undefined {
  let found: Position | undefined;
  visit(doc, {
    Pair(_key, pair) {
      const k = pair.key as YamlNode | null;
      if (k && (isMap(k) || isSeq(k))) {
        found = lineCounter.linePos(k.range?.[0] ?? 0);
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/** Where the first alias stands whose anchor is not defined before it (YAML 1.2 §3.2.2.2), or undefined. */
function unresolvedAliasPosition(doc: Document, lineCounter: LineCounter): Position | undefined {
  const anchors = new Set<string>();
  let found: Position | undefined;
  visit(doc, {
    Node(_key, node) {
      if (found) return visit.BREAK;
      if (isAlias(node)) {
        if (!anchors.has(node.source)) found = lineCounter.linePos(node.range?.[0] ?? 0);
      } else if ((node as { anchor?: string }).anchor) anchors.add((node as { anchor: string }).anchor);
      return undefined;
    },
  });
  return found;
}

function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

function posOf(
  loaded: LoadedYaml,
  node: { range?: [number, number, number] | null } | null | undefined,
): Position | undefined {
  const offset = node?.range?.[0];
  if (offset === undefined) return undefined;
  return loaded.lineCounter.linePos(offset);
}

/**
 * Find the source position for a field path: walk the document by keys and indices; point at the key of the last
 * segment when `at` is "key", at the parent when "parent"; when the path leaves the document, fall back to the
 * nearest existing parent (the key that introduced it, so a block map is reported at its key's line).
 */
export function locate(loaded: LoadedYaml, path: FieldPath, at: FlatIssue["at"] = "value"): Position {
  const target = at === "parent" ? path.slice(0, -1) : path;
  let node: unknown = loaded.doc.contents;
  let fallback: Position = posOf(loaded, node as YamlNode) ?? { line: 1, col: 1 };
  for (let i = 0; i < target.length; i++) {
    if (isAlias(node)) node = node.resolve(loaded.doc);
    const seg = target[i]!;
    const last = i === target.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(seg));
      if (!pair) return fallback;
      const keyPos = posOf(loaded, pair.key as YamlNode) ?? fallback;
      if (last && at === "key") return keyPos;
      if (pair.value === null || pair.value === undefined) return keyPos;
      fallback = keyPos;
      node = pair.value;
      if (last) return posOf(loaded, node as YamlNode) ?? keyPos;
    } else if (isSeq(node)) {
      const idx = typeof seg === "number" ? seg : /^\d+$/.test(seg) ? Number(seg) : -1;
      const item = idx >= 0 ? node.items[idx] : undefined;
      if (item === undefined || item === null) return fallback;
      node = item;
      const itemPos = posOf(loaded, item as YamlNode) ?? fallback;
      if (last) return itemPos;
      fallback = itemPos;
    } else {
      return fallback;
    }
  }
  return posOf(loaded, node as YamlNode) ?? fallback;
}

/**
 * "file:line:col: field" of a field in a file already validated, for errors found later that pair two files (a
 * scenario's collector and sink, a scenario and a stack's hosts): the file is read again and the path located as
 * `locate` does. When the file cannot be read or parsed any more, "file: field".
 */
export function fieldLocation(file: string, path: FieldPath, at: FlatIssue["at"] = "value"): string {
  const shown = displayPath(file);
  const field = fieldText(path);
  try {
    const pos = locate(loadYamlFile(file), path, at);
    return `${shown}:${pos.line}:${pos.col}: ${field}`;
  } catch {
    return `${shown}: ${field}`;
  }
}

/** Unwrap effects, optional, nullable, default, lazy, pipeline, branded and catch wrappers. */
function unwrap(schema: z.ZodTypeAny): z.ZodTypeAny {
  let s = schema;
  for (let guard = 0; guard < 50; guard++) {
    if (s instanceof z.ZodEffects) s = s.innerType();
    else if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
    else if (s instanceof z.ZodDefault) s = s.removeDefault();
    else if (s instanceof z.ZodLazy) s = s.schema;
    else if (s instanceof z.ZodPipeline) s = s._def.in;
    else if (s instanceof z.ZodBranded) s = s.unwrap();
    else if (s instanceof z.ZodCatch) s = s.removeCatch();
    else if (s instanceof z.ZodReadonly) s = s._def.innerType;
    else return s;
  }
  return s;
}

/** The keys an object schema at `path` allows (best effort; undefined when the schema there is not an object). */
export function keysAt(schema: z.ZodTypeAny | undefined, path: FieldPath): string[] | undefined {
  let s: z.ZodTypeAny | undefined = schema;
  for (const seg of path) {
    if (!s) return undefined;
    const u = unwrap(s);
    if (u instanceof z.ZodObject) s = (u.shape as Record<string, z.ZodTypeAny>)[String(seg)];
    else if (u instanceof z.ZodRecord) s = u.valueSchema as z.ZodTypeAny;
    else if (u instanceof z.ZodArray) s = u.element as z.ZodTypeAny;
    else if (u instanceof z.ZodTuple) s = (u.items as z.ZodTypeAny[])[Number(seg)];
    else return undefined;
  }
  if (!s) return undefined;
  const u = unwrap(s);
  return u instanceof z.ZodObject ? Object.keys(u.shape as Record<string, unknown>) : undefined;
}

function sentence(msg: string): string {
  return /^[A-Z][a-z]/.test(msg) ? msg.charAt(0).toLowerCase() + msg.slice(1) : msg;
}

function unknownKeyMessage(key: string, allowed: string[] | undefined): string {
  const near = allowed ? closestKey(key, allowed) : undefined;
  return (
    `unknown key "${key}"` +
    (allowed && allowed.length > 0 ? `; allowed keys: ${allowed.join(", ")}` : "") +
    (near ? `; did you mean "${near}"?` : "")
  );
}

/**
 * The allowed key a misspelt `key` most likely meant: the one at the smallest edit distance (Levenshtein: insertions,
 * deletions, substitutions), when that distance is at most 2 and less than half the key's length; undefined
 * otherwise, or when two keys tie.
 */
export function closestKey(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  let tie = false;
  for (const k of allowed) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      best = k;
      bestD = d;
      tie = false;
    } else if (d === bestD) tie = true;
  }
  return best !== undefined && !tie && bestD <= 2 && bestD < key.length / 2 ? best : undefined;
}

/** Levenshtein distance of two strings (one row of the dynamic-programming table at a time). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** Marker carried in `params` of custom issues that were already flattened (e.g. forwarded from a nested schema). */
interface FlatParams {
  ingestbenchFlat: { at: FlatIssue["at"] };
}

function isFlatParams(p: unknown): p is FlatParams {
  return typeof p === "object" && p !== null && "ingestbenchFlat" in p;
}

/**
 * Turn zod issues into one FlatIssue per problem: unknown keys become one issue per key pointing at the key (with
 * the allowed keys from `rootSchema` when it can be walked), missing keys point at the parent, unions report the
 * branch that got furthest.
 */
export function flattenIssues(issues: readonly z.ZodIssue[], rootSchema?: z.ZodTypeAny): FlatIssue[] {
  const out: FlatIssue[] = [];
  for (const issue of issues) {
    const path = issue.path as FieldPath;
    if (issue.code === z.ZodIssueCode.custom && isFlatParams(issue.params)) {
      out.push({ path, message: issue.message, at: issue.params.ingestbenchFlat.at });
    } else if (issue.code === z.ZodIssueCode.unrecognized_keys) {
      const allowed = keysAt(rootSchema, path);
      for (const key of issue.keys)
        out.push({ path: [...path, key], message: unknownKeyMessage(key, allowed), at: "key" });
    } else if (issue.code === z.ZodIssueCode.invalid_type && issue.received === "undefined") {
      out.push({ path, message: "required, but missing", at: "parent" });
    } else if (issue.code === z.ZodIssueCode.invalid_union) {
      out.push(...flattenUnion(issue, rootSchema));
    } else {
      out.push({ path, message: sentence(issue.message), at: "value" });
    }
  }
  return out;
}

function flattenUnion(issue: z.ZodInvalidUnionIssue, rootSchema?: z.ZodTypeAny): FlatIssue[] {
  const branches = issue.unionErrors.map((e) => e.issues);
  if (branches.length === 0)
    return [{ path: issue.path, message: sentence(issue.message ?? "invalid input"), at: "value" }];
  const depth = (is: z.ZodIssue[]) => Math.max(0, ...is.map((i) => i.path.length));
  const maxDepth = Math.max(...branches.map(depth));
  // Every branch failed right at the union's own node: say what each alternative expected.
  if (maxDepth <= issue.path.length && branches.every((b) => b.length === 1)) {
    const msgs = [...new Set(branches.map((b) => sentence(b[0]!.message)))];
    return [{ path: issue.path, message: msgs.join(", or "), at: "value" }];
  }
  const best = branches.filter((b) => depth(b) === maxDepth).sort((a, b) => a.length - b.length)[0]!;
  return flattenIssues(best, rootSchema);
}

/**
 * Re-add the issues of a nested parse (e.g. a plugin's own schema) to the current zod context under `prefix`,
 * already flattened so unknown keys keep their allowed-key lists and their positions.
 */
export function addNestedIssues(
  ctx: z.RefinementCtx,
  error: z.ZodError,
  prefix: FieldPath,
  schema?: z.ZodTypeAny,
): void {
  for (const f of flattenIssues(error.issues, schema))
    addFlatIssue(ctx, { ...f, path: [...prefix, ...f.path] });
}

/** Add one already-flattened issue to a zod context (path relative to the context's node). */
export function addFlatIssue(ctx: z.RefinementCtx, f: FlatIssue): void {
  const params: FlatParams = { ingestbenchFlat: { at: f.at } };
  ctx.addIssue({ code: z.ZodIssueCode.custom, path: f.path, message: f.message, params });
}

/**
 * A field path as messages show it: segments joined by "."; a segment that is empty, holds other characters than
 * letters, digits and `_$@=-`, or a "." or ":" that does not join two such runs (a mistyped key such as "", "a b",
 * "loadgen:" or "ledger.:lost") is shown JSON-quoted, so the path stays one
 * token (harness/cli/diagnostics.ts reads it back).
 */
export function fieldText(path: FieldPath): string {
  return path
    .map((seg) =>
      typeof seg === "number" || /^[\w$@=-]+(?:[.:][\w$@=-]+)*$/.test(seg)
        ? String(seg)
        : JSON.stringify(seg),
    )
    .join(".");
}

/** Format one issue as "file:line:col: field: message" (field omitted at the top level). */
export function formatIssue(loaded: LoadedYaml, f: FlatIssue, file = displayPath(loaded.path)): string {
  const pos = locate(loaded, f.path, f.at);
  const field = fieldText(f.path);
  return `${file}:${pos.line}:${pos.col}: ${field ? `${field}: ` : ""}${f.message}`;
}

/**
 * Throw a ConfigurationError listing every issue, one per line in file order (duplicates dropped); the first gives
 * `location` ("file:line") and `field`.
 * @throws ConfigurationError always.
 */
export function throwIssues(
  loaded: LoadedYaml,
  issues: FlatIssue[],
  options: { path?: string; code?: string; cause?: unknown } = {},
): never {
  const file = displayPath(options.path ?? loaded.path);
  const first = issues[0];
  if (!first)
    throw new ConfigurationError(options.code ?? "E_CONFIG_INVALID", `${file}: invalid`, { location: file });
  // Report in file order (zod reports nested problems before an object's own unknown keys).
  const sorted = issues
    .map((f, i) => ({ f, i, pos: locate(loaded, f.path, f.at) }))
    .sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col || a.i - b.i);
  const lines = [...new Set(sorted.map(({ f }) => formatIssue(loaded, f, file)))];
  const top = sorted[0]!;
  const pos = top.pos;
  throw new ConfigurationError(options.code ?? "E_CONFIG_INVALID", lines.join("\n"), {
    cause: options.cause,
    location: `${file}:${pos.line}`,
    field: top.f.path.length > 0 ? fieldText(top.f.path) : undefined,
  });
}

/**
 * Validate loaded YAML against a zod schema and return the parsed output.
 * `path` is the file name shown in messages (default: loaded.path); `options.code` the error code (default
 * "E_CONFIG_INVALID").
 * @throws ConfigurationError whose message has one "file:line:col: field.path: problem" line per issue; `location`
 *         is "file:line" and `field` the dotted path of the first; for an empty file (nothing but comments and blank
 *         lines) one "file:1:1: the file is empty ..." line.
 */
export function validate<T>(
  schema: z.ZodType<T, z.ZodTypeDef, unknown>,
  loaded: LoadedYaml,
  path?: string,
  options: { code?: string } = {},
): T {
  // an empty file, or one of comments, blank lines and a `---` only, has no document node (or an empty scalar): zod
  // would say "expected object, received null", which does not say what is wrong
  const top = loaded.doc.contents;
  if (top === null || (isScalar(top) && top.value === null && top.range?.[0] === top.range?.[1])) {
    const file = displayPath(path ?? loaded.path);
    throw new ConfigurationError(
      options.code ?? "E_CONFIG_INVALID",
      `${file}:1:1: the file is empty (no YAML content, only comments or blank lines)`,
      { location: `${file}:1` },
    );
  }
  const result = schema.safeParse(loaded.data);
  if (result.success) return result.data;
  return throwIssues(loaded, flattenIssues(result.error.issues, schema as z.ZodTypeAny), {
    path: path ?? loaded.path,
    code: options.code,
    cause: result.error,
  });
}
