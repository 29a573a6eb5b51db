/**
 * images/fluentd-griddb: the Dockerfile and the check step that applies write-up 000's one-line fix to
 * fluent-plugin-griddb 1.0.2 and fails the build when it did not take.
 *
 * No Docker engine and no Ruby here, and the plugin's 1.0.2 source is not in the search tool's stored code (only an
 * earlier out_griddb.rb, griddb/fluent-plugin-griddb lib/fluent/plugin/out_griddb.rb @ d3b01388, whose write path
 * calls handle_record(tag, DateTime.now, arrays_2): the check refuses it, as it must). So apply-fix.sh runs here,
 * with real bash, sed and awk, against small Ruby files RECONSTRUCTED FOR THIS TEST from write-up 000's description
 * (the buffered write(chunk) calls handle_record(record_array); the unbuffered process path calls
 * handle_insert_type): not the plugin's code. `ruby -c` is skipped with RUBY_SYNTAX_CHECK=0 where named; the image
 * build always runs it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../images/fluentd-griddb");
const script = path.join(dir, "apply-fix.sh");
const work = mkdtempSync(path.join(tmpdir(), "ib-fluentd-griddb-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A Ruby file shaped like 1.0.2's out_griddb.rb as write-up 000 describes it (reconstructed, not the plugin's code). */
const SHAPE_102 = `# reconstructed for ingestbench's test from write-up 000's description; not fluent-plugin-griddb's source
class BufferedWriteShape
  def process(tag, es)
    record_array = es.to_a
    handle_insert_type(record_array)
  end

  def write(chunk)
    record_array = chunk.to_a
    handle_record(record_array)
  end
end
`;

function run(file: string, env: Record<string, string> = {}) {
  const r = spawnSync("bash", [script, file], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

function fixture(name: string, text: string): string {
  const f = path.join(work, name);
  writeFileSync(f, text);
  return f;
}

describe("fluentd-griddb image check step (no Docker engine, no Ruby here: reconstructed files, ruby -c skipped where named)", () => {
  it("apply-fix.sh parses as bash", () => {
    expect(() => execFileSync("bash", ["-n", script])).not.toThrow();
  });

  it("changes exactly the buffered write call to handle_insert_type(record_array) (RUBY_SYNTAX_CHECK=0)", () => {
    const f = fixture("shape-1.0.2.rb", SHAPE_102);
    const r = run(f, { RUBY_SYNTAX_CHECK: "0" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("buffered write path now calls handle_insert_type(record_array)");
    const before = SHAPE_102.split("\n");
    const after = readFileSync(f, "utf8").split("\n");
    const changed = before.map((l, i) => [l, after[i]] as const).filter(([a, b]) => a !== b);
    expect(changed).toEqual([["    handle_record(record_array)", "    handle_insert_type(record_array)"]]);
  });

  it("fails the build on an already patched file, on an earlier plugin layout, and when the call is not in write(chunk)", () => {
    const patched = fixture(
      "patched.rb",
      SHAPE_102.replace("handle_record(record_array)", "handle_insert_type(record_array)"),
    );
    expect(run(patched, { RUBY_SYNTAX_CHECK: "0" })).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/found 0: not the pinned plugin version, or already patched/),
    });

    // the layout of the stored earlier out_griddb.rb (d3b01388): handle_record exists and write passes three arguments
    const earlier = fixture(
      "earlier.rb",
      "def write(chunk)\n  handle_record(tag, DateTime.now, arrays_2)\nend\n",
    );
    expect(run(earlier, { RUBY_SYNTAX_CHECK: "0" })).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/found 0/),
    });

    const twice = fixture(
      "twice.rb",
      SHAPE_102.replace("handle_insert_type(record_array)", "handle_record(record_array)"),
    );
    expect(run(twice, { RUBY_SYNTAX_CHECK: "0" })).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/found 2/),
    });

    const elsewhere = fixture(
      "elsewhere.rb",
      "def write(chunk)\n  noop\nend\n\ndef flush\n  handle_record(record_array)\nend\n",
    );
    expect(run(elsewhere, { RUBY_SYNTAX_CHECK: "0" })).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/def write\(chunk\) .* does not call handle_insert_type/),
    });

    expect(run(path.join(work, "missing.rb"))).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/no such file/),
    });
  });

  it("does not skip the Ruby syntax check silently: without ruby on PATH and without RUBY_SYNTAX_CHECK=0 it fails", () => {
    const f = fixture("shape-ruby.rb", SHAPE_102);
    const r = run(f, { PATH: "/usr/bin:/bin" });
    if (spawnSync("sh", ["-c", "command -v ruby"], { env: { PATH: "/usr/bin:/bin" } }).status === 0) {
      expect(r.status).toBe(0); // a Ruby is installed: the reconstructed file is valid Ruby
    } else {
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/ruby: command not found[\s\S]*is not valid Ruby after the fix/);
    }
  });

  it("Dockerfile: Ruby 2.7.2, Fluentd 1.12.0, the plugin's 1.0.2 tag built into a gem, the check run on `gem which fluent/plugin/out_griddb`; its RUN step parses as bash", () => {
    const text = readFileSync(path.join(dir, "Dockerfile"), "utf8");
    expect(text).toMatch(/^ARG RUBY_IMAGE=ruby:2\.7\.2-slim-buster$/m);
    expect(text).toMatch(/^FROM \$\{RUBY_IMAGE\}$/m);
    expect(text).toMatch(/^ARG FLUENTD_VERSION=1\.12\.0$/m);
    expect(text).toMatch(/^ARG PLUGIN_VERSION=1\.0\.2$/m);
    expect(text).toContain(
      "https://github.com/griddb/fluent-plugin-griddb/archive/refs/tags/${PLUGIN_VERSION}.tar.gz",
    );
    expect(text).toMatch(/^COPY fix-buffered-write\.sed apply-fix\.sh \/opt\/ingestbench\/$/m);
    expect(text).toContain('/opt/ingestbench/apply-fix.sh "$(gem which fluent/plugin/out_griddb)"');
    expect(text).toContain(
      'gem list --exact fluent-plugin-griddb | grep -qx "fluent-plugin-griddb (${PLUGIN_VERSION})"',
    );
    expect(text).not.toMatch(/RUBY_SYNTAX_CHECK/);
    // the RUN instruction, continuation lines joined, with the build args set, parses as bash
    const run = /^RUN ([\s\S]*?[^\\])\n(?!\s)/m.exec(text)![1]!.replace(/\\\n/g, "\n");
    const args =
      "FLUENTD_VERSION=1.12.0 PLUGIN_VERSION=1.0.2 PLUGIN_SHA256= RUBYGEMS_VERSION=3.4.22 BUNDLER_VERSION=2.4.22\n";
    expect(() => execFileSync("bash", ["-n", "-c", args + run])).not.toThrow();
    expect(run).toContain("set -eux");
    expect(run).toContain("chown -R fluent:fluent /fluentd"); // the whole instruction was taken
    // the sed script holds exactly the substitution write-up 000 gives
    const sed = readFileSync(path.join(dir, "fix-buffered-write.sed"), "utf8")
      .split("\n")
      .filter((l) => l !== "" && !l.startsWith("#"));
    expect(sed).toEqual(["s/handle_record(record_array)/handle_insert_type(record_array)/"]);
  });
});
