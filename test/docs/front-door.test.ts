// README.md is the front door (at most 200 lines: what ingestbench answers, the two commands, a sample, where each
// platform and plugin stands, links); the rest lives in docs/ and CONTRIBUTING.md. Every relative link of README.md,
// CONTRIBUTING.md and docs/*.md (markdown links `[text](target)`) resolves to a file or folder of the repository.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The relative link targets of a markdown text (outside fenced blocks and code spans), with their line numbers. */
export function relativeLinks(md: string): Array<{ line: number; target: string }> {
  const prose = md
    .replace(/^```[\s\S]*?^```$/gm, (b) => b.replace(/[^\n]/g, " "))
    .replace(/`[^`\n]*`/g, (s) => " ".repeat(s.length));
  const out: Array<{ line: number; target: string }> = [];
  for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue; // http:, mailto:, in-page anchors
    out.push({ line: md.slice(0, m.index).split("\n").length, target });
  }
  return out;
}

/** The links of `page` (a path relative to ROOT) whose file or folder does not exist. */
function brokenLinks(page: string, md: string): string[] {
  return relativeLinks(md)
    .filter(({ target }) => {
      const file = decodeURIComponent(target.split("#")[0]!);
      return !existsSync(path.resolve(ROOT, path.dirname(page), file));
    })
    .map(({ line, target }) => `${page}:${line}: ${target}`);
}

describe("README.md is a front door", () => {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");

  it("is at most 200 lines, with the two commands, the sample's place, the platform and plugin tables and links", () => {
    expect(readme.split("\n").length - (readme.endsWith("\n") ? 1 : 0)).toBeLessThanOrEqual(200);
    expect(readme).toMatch(/^```sh\nnpm ci && npm run bench\s+#/m);
    expect(readme).toMatch(/^npm test\s+#/m);
    expect(readme).toContain("<!-- readme-sample:bench -->");
    expect(readme).toMatch(/<!-- readme-sample:bench -->[\s\S]*<!-- \/readme-sample:bench -->/);
    expect(readme).toMatch(/^\| platform \|/m);
    expect(readme).toMatch(/^\| plugin \| kind \| version \| platforms \| evidence \|$/m);
    for (const page of ["docs/output.md", "CONTRIBUTING.md", "docs/measurements.md"])
      expect(relativeLinks(readme).map((l) => l.target)).toContain(page);
  });

  it("every relative link of README.md, CONTRIBUTING.md and docs/*.md resolves to a file in the repository", () => {
    expect(PAGES.length).toBeGreaterThan(5);
    const links = PAGES.flatMap((p) => relativeLinks(readFileSync(path.join(ROOT, p), "utf8")));
    expect(links.length).toBeGreaterThan(10);
    expect(PAGES.flatMap((p) => brokenLinks(p, readFileSync(path.join(ROOT, p), "utf8")))).toEqual([]);
  });

  it("the link check can fail: a missing file, relative to the page; code spans, blocks and URLs are not links", () => {
    const md =
      "See [a](docs/nope.md) and [b](design.md#x), `[c](nope)`, [d](https://x.org/y).\n\n```\n[e](nope)\n```\n";
    expect(relativeLinks(md).map((l) => l.target)).toEqual(["docs/nope.md", "design.md#x"]);
    expect(brokenLinks("README.md", md)).toEqual(["README.md:1: docs/nope.md", "README.md:1: design.md#x"]);
    expect(brokenLinks("docs/output.md", md)).toEqual(["docs/output.md:1: docs/nope.md"]);
  });
});
