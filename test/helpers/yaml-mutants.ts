/**
 * Mutations of YAML files for the property-based validation tests (test/harness/validate-fuzz.test.ts): a fast-check
 * arbitrary of edits, each applied to a file's text, covering what a user's editor and typing do to a stack,
 * scenario or nightly plan file: values, keys, indentation, and YAML features (anchors, aliases with and without
 * their anchor, tags, merge keys, several documents).
 *
 * An edit is chosen by indices into the file's lines (taken modulo their count), so the same seed gives the same
 * mutant of the same file.
 */
import fc from "fast-check";

/** Values a mistyped or hostile field may hold (YAML source text). */
export const ODD_VALUES = [
  "0",
  "-1",
  "1e309",
  "-0",
  "0.0000001",
  "99999999999999999999",
  "0x10",
  "1_000",
  ".nan",
  ".inf",
  "-.inf",
  "~",
  "null",
  "true",
  "no",
  '""',
  "''",
  "[]",
  "{}",
  "[1, 2]",
  "{ a: 1 }",
  "1KiB",
  "0KiB",
  "8",
  '"8"',
  "0.001",
  "1B",
  "10TiB",
  "25 100",
  "-5s",
  "0s",
  "1ms",
  "1h",
  "999999h",
  "abc",
  '"x\\u0000y"',
  '"\\t"',
  "é✓",
  "x".repeat(300),
  "2026-12-01",
  "!!binary aGVsbG8=",
  "!!timestamp 2001-12-14",
  "!custom x",
  "!!str 1",
  '!!int "x"',
  "!!float abc",
  "!!map {}",
  "!!seq []",
  "!!set { a, b }",
  "!!omap [ a: 1 ]",
  "&v 1",
  "*nope",
  "*v",
  "<<: *nope",
  "| \n  text",
  ">-\n  folded",
  "'unterminated",
  '"unterminated',
  "[unclosed",
  "{unclosed",
  "?",
  ":",
  "- x",
  "#",
  "@x",
  "`x`",
] as const;

/** Keys a mistyped field may have. */
export const ODD_KEYS = [
  "",
  '""',
  "x",
  "name ",
  "Name",
  "<<",
  "? complex",
  "[a, b]",
  "{ a: 1 }",
  "1",
  "null",
  "~",
  "a.b",
  "config",
  "!!str k",
  "&k k",
  "*k",
  "ingestbench:nope",
  "é",
] as const;

/** One edit of a file; indices are taken modulo the number of lines (or of candidates). */
export type Edit =
  | { kind: "value"; line: number; value: number }
  | { kind: "key"; line: number; key: number }
  | { kind: "deleteLine"; line: number }
  | { kind: "duplicateLine"; line: number }
  | { kind: "swapLines"; line: number; other: number }
  | { kind: "indent"; line: number; delta: number }
  | { kind: "tab"; line: number }
  | { kind: "anchorAlias"; line: number; other: number }
  | { kind: "aliasWithoutAnchor"; line: number }
  | { kind: "tag"; line: number; tag: number }
  | { kind: "mergeKey"; line: number; other: number }
  | { kind: "multiDocument"; line: number }
  | { kind: "truncate"; at: number }
  | { kind: "insertChar"; at: number; char: number }
  | { kind: "plugin"; line: number; plugin: number };

/** Plugin names of every kind: a generator, collector or sink block renamed to another plugin pairs them anew. */
const PLUGINS = [
  "pg-copy",
  "syslog",
  "http-json",
  "clickhouse-http",
  "fluent-forward",
  "es-bulk",
  "loki-push",
  "griddb-webapi",
  "syslog-ng",
  "rsyslog",
  "fluent-bit",
  "fluentd",
  "vector",
  "otelcol",
  "postgres",
  "clickhouse",
  "elasticsearch",
  "opensearch",
  "loki",
  "griddb",
  "none",
];

const TAGS = [
  "!!str",
  "!!int",
  "!!float",
  "!!bool",
  "!!null",
  "!!map",
  "!!seq",
  "!!binary",
  "!!timestamp",
  "!!set",
  "!custom",
  "!<tag:yaml.org,2002:str>",
  "!",
];
const CHARS = [
  ":",
  "-",
  "{",
  "}",
  "[",
  "]",
  ",",
  "#",
  "&",
  "*",
  "!",
  "|",
  ">",
  "'",
  '"',
  "%",
  "@",
  "`",
  "\t",
  " ",
  "\n",
  "?",
  "\u0000",
  "\ufeff",
];

const idx = fc.nat({ max: 10_000 });

/** The arbitrary of one edit. */
export const editArb: fc.Arbitrary<Edit> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("value" as const),
      line: idx,
      value: fc.nat({ max: ODD_VALUES.length - 1 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("key" as const),
      line: idx,
      key: fc.nat({ max: ODD_KEYS.length - 1 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("deleteLine" as const), line: idx }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("duplicateLine" as const), line: idx }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("swapLines" as const), line: idx, other: idx }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("indent" as const),
      line: idx,
      delta: fc.integer({ min: -4, max: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tab" as const), line: idx }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("anchorAlias" as const), line: idx, other: idx }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("aliasWithoutAnchor" as const), line: idx }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("tag" as const),
      line: idx,
      tag: fc.nat({ max: TAGS.length - 1 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("mergeKey" as const), line: idx, other: idx }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("multiDocument" as const), line: idx }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: idx }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("insertChar" as const),
      at: idx,
      char: fc.nat({ max: CHARS.length - 1 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("plugin" as const),
      line: idx,
      plugin: fc.nat({ max: PLUGINS.length - 1 }),
    }),
  },
);

/** A line "  key: value  # comment" split into indent, key, value (comments dropped); null when it is no `key:` line. */
function keyLine(line: string): { indent: string; dash: string; key: string; value: string } | null {
  const m = /^(\s*)(- )?([^\s#:][^:#]*?|"[^"]*"):(?:\s+(.*?))?\s*(?:#.*)?$/.exec(line);
  if (!m) return null;
  return { indent: m[1]!, dash: m[2] ?? "", key: m[3]!, value: m[4] ?? "" };
}

/** Lines that hold `key: value` (or `key:` opening a block), by index. */
function keyLines(lines: string[]): number[] {
  return lines.flatMap((l, i) => (keyLine(l) ? [i] : []));
}

/** Replace the value of an inline flow mapping `{ a: 1, b: 2 }` on a line, or the line's own value. */
function replaceValue(line: string, value: string, pick: number): string {
  const flow = [...line.matchAll(/([\w.-]+):\s+([^,{}[\]#]+?)(?=\s*[,}])/g)];
  if (flow.length > 0) {
    const m = flow[pick % flow.length]!;
    const start = m.index! + m[0].length - m[2]!.length;
    return line.slice(0, start) + value + line.slice(start + m[2]!.length);
  }
  const k = keyLine(line);
  return k ? `${k.indent}${k.dash}${k.key}: ${value}` : line;
}

/** Apply one edit to a file's text. */
export function applyEdit(text: string, e: Edit): string {
  const lines = text.split("\n");
  const n = lines.length;
  const kl = keyLines(lines);
  const pickKey = (i: number): number | undefined => (kl.length ? kl[i % kl.length] : undefined);
  switch (e.kind) {
    case "value": {
      const i = pickKey(e.line);
      if (i === undefined) return text;
      const v = ODD_VALUES[e.value]!;
      // multi-line values are written as a block under the key
      lines[i] = v.includes("\n")
        ? `${keyLine(lines[i]!)!.indent}${keyLine(lines[i]!)!.key}: ${v.replace(/\n/g, `\n${keyLine(lines[i]!)!.indent}`)}`
        : replaceValue(lines[i]!, v, e.line);
      break;
    }
    case "key": {
      const i = pickKey(e.line);
      if (i === undefined) return text;
      const k = keyLine(lines[i]!)!;
      const flow = [...lines[i]!.matchAll(/([\w.-]+):\s/g)];
      if (flow.length > 1) {
        const m = flow[e.line % flow.length]!;
        lines[i] = lines[i]!.slice(0, m.index!) + ODD_KEYS[e.key]! + lines[i]!.slice(m.index! + m[1]!.length);
      } else {
        lines[i] = `${k.indent}${k.dash}${ODD_KEYS[e.key]!}:${k.value ? ` ${k.value}` : ""}`;
      }
      break;
    }
    case "deleteLine":
      lines.splice(e.line % n, 1);
      break;
    case "duplicateLine":
      lines.splice(e.line % n, 0, lines[e.line % n]!);
      break;
    case "swapLines": {
      const a = e.line % n,
        b = e.other % n;
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      break;
    }
    case "indent": {
      const i = e.line % n;
      lines[i] =
        e.delta >= 0
          ? " ".repeat(e.delta) + lines[i]!
          : lines[i]!.replace(new RegExp(`^ {0,${-e.delta}}`), "");
      break;
    }
    case "tab":
      lines[e.line % n] = `\t${lines[e.line % n]!}`;
      break;
    case "anchorAlias": {
      // anchor one key's value and use it as another key's value (before or after it: an alias before its anchor)
      const a = pickKey(e.line),
        b = pickKey(e.other);
      if (a === undefined || b === undefined) return text;
      const ka = keyLine(lines[a]!)!;
      lines[a] = `${ka.indent}${ka.dash}${ka.key}: &fz ${ka.value}`;
      const kb = keyLine(lines[b]!)!;
      if (a !== b) lines[b] = `${kb.indent}${kb.dash}${kb.key}: *fz`;
      break;
    }
    case "aliasWithoutAnchor": {
      const i = pickKey(e.line);
      if (i === undefined) return text;
      lines[i] = replaceValue(lines[i]!, "*missing", e.line);
      break;
    }
    case "tag": {
      const i = pickKey(e.line);
      if (i === undefined) return text;
      const k = keyLine(lines[i]!)!;
      lines[i] = `${k.indent}${k.dash}${k.key}: ${TAGS[e.tag]!} ${k.value}`;
      break;
    }
    case "mergeKey": {
      // a merge key under some key's block, of an anchored map elsewhere (or of none)
      const a = pickKey(e.line),
        b = pickKey(e.other);
      if (a === undefined || b === undefined) return text;
      const kb = keyLine(lines[b]!)!;
      lines.splice(a + 1, 0, `${keyLine(lines[a]!)!.indent}  <<: *${e.other % 3 === 0 ? "nomerge" : "mm"}`);
      if (e.other % 3 !== 0) lines.push("__merge__: &mm { " + `${kb.key.replace(/[{}[\],]/g, "")}: 1 }`);
      break;
    }
    case "multiDocument":
      lines.splice(e.line % n, 0, e.line % 2 === 0 ? "---" : "...");
      break;
    case "truncate":
      return text.slice(0, e.at % (text.length + 1));
    case "plugin": {
      // the first key inside a generator, collector or sink block (flow or block style) becomes another plugin's name
      const blocks = lines.flatMap((l, i) => (/^(generator|collector|sink):/.test(l) ? [i] : []));
      if (blocks.length === 0) return text;
      const i = blocks[e.line % blocks.length]!;
      const flow = /^(\w+):\s*\{\s*([\w-]+)/.exec(lines[i]!);
      if (flow) lines[i] = lines[i]!.replace(/^(\w+:\s*\{\s*)[\w-]+/, `$1${PLUGINS[e.plugin]!}`);
      else if (i + 1 < n) lines[i + 1] = lines[i + 1]!.replace(/^(\s+)[\w-]+:/, `$1${PLUGINS[e.plugin]!}:`);
      break;
    }
    case "insertChar": {
      const at = e.at % (text.length + 1);
      return text.slice(0, at) + CHARS[e.char]! + text.slice(at);
    }
  }
  return lines.join("\n");
}

/** Apply edits in order. */
export function mutate(text: string, edits: readonly Edit[]): string {
  return edits.reduce(applyEdit, text);
}
