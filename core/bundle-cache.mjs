// @ts-check
/**
 * Programs of ours bundled by esbuild into one ESM file that plain `node` runs, and kept in a cache directory while
 * every file they were built from is unchanged. Two programs use it: the CLI (bin/ingestbench.js, bundled with its
 * npm packages left as imports, kept in the project's node_modules/.cache) and the generator child
 * (harness/generators/bundle.ts, bundled whole, kept in ingestbench's cache directory, core/cache.ts). Plain
 * JavaScript, so that bin/ingestbench.js can check and start the bundle before any TypeScript loader is loaded.
 *
 * Why bundle: loading ~230 TypeScript files through tsx's loader costs memory and time that a run's harness process
 * then carries throughout: the bundle starts in about half the time and memory
 * (docs/measurements.md, "Figures moved from code comments").
 *
 * Cache layout in `dir`: `<name>-<SHA-256 of the bundle, 12 hex>.mjs` (and `.mjs.map` beside it when built with a
 * source map), and `<name>-<SHA-256 of the project root's path, 12 hex>.json`, the manifest: the bundle's file name,
 * its SHA-256 (and its map's), and every input file's SHA-256 (esbuild's metafile inputs, relative to the root). A
 * bundle is reused while its files and every input hash as recorded (content, not times), else built again and
 * written through a rename, so several projects and processes share the directory and no reader sees half a file.
 * A .ts file of ours is recorded with the hash of the text the build read (the import.meta.url plugin reads it);
 * any other input is hashed after the build, so one saved while esbuild ran could be recorded with its new hash beside
 * a bundle of its old text: when such an input's mtime is not older than the build's start (less a second for coarse
 * clocks), the manifest is not written, and the next start builds again. `extraInputs` (the build's own settings, the
 * esbuild version) are recorded beside esbuild's inputs, so a change to them builds again too.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * @typedef {object} Bundle
 * @property {string} code ESM source
 * @property {string} sha256 hex SHA-256 of `code` as UTF-8
 * @property {number} bytes UTF-8 length of `code`, bytes
 * @property {string[]} inputs every file esbuild read for it, relative to the project root (esbuild's metafile inputs)
 * @property {string} [map] its source map (JSON), sources as absolute file: URLs, when built with one
 * @property {Map<string, string>} [read] hex SHA-256 of the text the build read, by input (relative to the root), for
 *   the files the import.meta.url plugin loaded
 */

/**
 * @typedef {object} BuildOptions
 * @property {string} root the project root: esbuild's working directory, so that the text and inputs do not depend on the cwd
 * @property {string} entry the entry file, absolute
 * @property {boolean} [packagesExternal] leave npm packages as imports (resolved at run time from the bundle's place)
 * @property {string[]} [external] further module names left as imports
 * @property {string} [banner] JavaScript put first in the bundle
 * @property {boolean} [keepImportMetaUrl] give each of our modules its own file's `import.meta.url` (as a string
 *   constant), so that paths computed from it point into the project wherever the bundle is kept
 * @property {boolean} [sourceMap] build a source map too (Bundle.map)
 */

/** @param {Buffer | string} data @returns {string} hex SHA-256 */
export const sha256 = (data) => createHash("sha256").update(data).digest("hex");

/**
 * An esbuild plugin that gives every TypeScript file outside node_modules its own `import.meta.url`: esbuild's
 * `define` in a transform of that file alone replaces the expression (not text in strings or comments), with an
 * inline source map that the bundle's map then follows back to the file (esbuild reads input files' source maps).
 * @param {typeof import("esbuild")} esbuild
 * @param {string} root the project root (`read`'s keys are relative to it)
 * @param {Map<string, string>} read filled with the SHA-256 of each file's text as read
 * @returns {import("esbuild").Plugin}
 */
function importMetaUrlPlugin(esbuild, root, read) {
  return {
    name: "ingestbench-import-meta-url",
    setup(build) {
      build.onLoad({ filter: /\.(ts|mts)$/ }, async (args) => {
        if (args.path.split(path.sep).includes("node_modules")) return undefined;
        const bytes = await readFile(args.path);
        read.set(path.relative(root, args.path).split(path.sep).join("/"), sha256(bytes));
        const source = bytes.toString("utf8");
        /** @type {import("esbuild").TransformResult} */
        let out;
        try {
          out = await esbuild.transform(source, {
            loader: "ts",
            format: "esm",
            target: "node20",
            sourcefile: args.path,
            sourcemap: "inline",
            sourcesContent: false,
            define: { "import.meta.url": JSON.stringify(pathToFileURL(args.path).href) },
          });
        } catch (err) {
          // a syntax error: esbuild's own message and location in the file, not the importer's "Transform failed"
          const errors = /** @type {{ errors?: import("esbuild").PartialMessage[] }} */ (err).errors;
          if (errors) return { errors };
          throw err;
        }
        return { contents: out.code, loader: "js", resolveDir: path.dirname(args.path) };
      });
    },
  };
}

/**
 * Build `options.entry` and everything of ours it imports into one ESM file for node20, in memory.
 * @param {BuildOptions} options
 * @returns {Promise<Bundle>}
 * @throws Error with esbuild's messages when the build fails (esbuild missing included)
 */
export async function buildBundle(options) {
  const esbuild = await import("esbuild");
  /** @type {Map<string, string>} */
  const read = new Map();
  const result = await esbuild.build({
    entryPoints: [options.entry],
    absWorkingDir: options.root,
    // only where the source map's paths are computed from: the file is never written here (write: false)
    outfile: path.join(options.root, "bundle.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    metafile: true,
    packages: options.packagesExternal ? "external" : undefined,
    external: options.external ?? [],
    banner: options.banner ? { js: options.banner } : undefined,
    plugins: options.keepImportMetaUrl ? [importMetaUrlPlugin(esbuild, options.root, read)] : [],
    sourcemap: options.sourceMap ? "external" : false,
    sourcesContent: false,
    legalComments: "none",
    logLevel: "silent",
  });
  const out = result.outputFiles.find((f) => f.path.endsWith(".mjs"));
  if (!out) throw new Error("esbuild produced no output file");
  const mapFile = result.outputFiles.find((f) => f.path.endsWith(".map"));
  /** @type {string | undefined} */
  let map;
  if (mapFile) {
    const m = /** @type {{ sources: string[] }} */ (JSON.parse(mapFile.text));
    m.sources = m.sources.map((s) => pathToFileURL(path.resolve(options.root, s)).href);
    map = JSON.stringify(m);
  }
  const code = out.text;
  const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith("<"));
  return {
    code,
    sha256: sha256(code),
    bytes: Buffer.byteLength(code),
    inputs,
    ...(map === undefined ? {} : { map }),
    ...(read.size > 0 ? { read } : {}),
  };
}

/**
 * @typedef {object} BundleManifest
 * @property {string} file the bundle's file name in the directory
 * @property {string} sha256 hex SHA-256 of that file
 * @property {string} [mapSha256] hex SHA-256 of its source map (`<file>.map`), when it has one
 * @property {Array<[string, string]>} inputs each input (relative to the root) with its hex SHA-256
 */

/** @param {string} dir @param {string} name @param {string} root @returns {string} the manifest's path */
const manifestPath = (dir, name, root) => path.join(dir, `${name}-${sha256(root).slice(0, 12)}.json`);

/**
 * The cached bundle `name` in `dir` when its file and every input still hash as its manifest records, else undefined.
 * Never throws.
 * @param {string} dir
 * @param {string} name
 * @param {string} root
 * @returns {Promise<string | undefined>} the bundle's absolute path
 */
export async function currentBundleFile(dir, name, root) {
  /** @type {BundleManifest | undefined} */
  const m = await readFile(manifestPath(dir, name, root), "utf8").then(
    (t) => JSON.parse(t),
    () => undefined,
  );
  if (!m || typeof m.file !== "string" || !Array.isArray(m.inputs)) return undefined;
  const file = path.join(dir, path.basename(m.file));
  /** @param {string} f @returns {Promise<string>} */
  const hashOf = (f) => readFile(f).then(sha256, () => "");
  const [own, map, ...inputs] = await Promise.all([
    hashOf(file),
    m.mapSha256 === undefined ? undefined : hashOf(`${file}.map`),
    ...m.inputs.map(([f]) => hashOf(path.resolve(root, f))),
  ]);
  return own === m.sha256 && map === m.mapSha256 && m.inputs.every(([, h], i) => inputs[i] === h)
    ? file
    : undefined;
}

/** Write `data` to `file` through a temporary file and a rename. @param {string} file @param {string} data */
async function writeAtomic(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, data, { mode: 0o644 });
    await rename(tmp, file);
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * The bundle `name` of project `root` in cache directory `dir` (see the file comment): the cached one while current,
 * else `build()` written there (with its source map, linked by a sourceMappingURL comment, when it has one).
 * `removeReplaced`: remove every other `<name>-<hash>.mjs` (and map) in `dir` once the new one is written — only for a
 * program that reads its file once at start and whose directory is its project's alone (the CLI); the generator's is
 * started again by every cell of a long invocation, which must still find it. `extraInputs`: files (relative to the
 * root) recorded and checked beside esbuild's inputs.
 * @param {{ dir: string, name: string, root: string, build: () => Promise<Bundle>, removeReplaced?: boolean, extraInputs?: string[] }} options
 * @returns {Promise<string>} the bundle's absolute path
 * @throws what `build` throws, or a file system error when the directory cannot be written
 */
export async function cachedBundleFile({ dir, name, root, build, removeReplaced = false, extraInputs = [] }) {
  const current = await currentBundleFile(dir, name, root);
  if (current) return current;
  const manifest = manifestPath(dir, name, root);
  const started = Date.now();
  const bundle = await build();
  const file = path.join(dir, `${name}-${bundle.sha256.slice(0, 12)}.mjs`);
  const text =
    bundle.map === undefined
      ? bundle.code
      : `${bundle.code}//# sourceMappingURL=${path.basename(file)}.map\n`;
  const read = await Promise.all(
    [...bundle.inputs, ...extraInputs.filter((f) => !bundle.inputs.includes(f))].map(async (f) => {
      const asRead = bundle.read?.get(f);
      if (asRead !== undefined)
        return { entry: /** @type {[string, string]} */ ([f, asRead]), changedDuringBuild: false };
      const at = path.resolve(root, f);
      const [data, st] = await Promise.all([readFile(at), stat(at)]);
      return {
        entry: /** @type {[string, string]} */ ([f, sha256(data)]),
        changedDuringBuild: st.mtimeMs >= started - 1000,
      };
    }),
  );
  await mkdir(dir, { recursive: true });
  if (bundle.map !== undefined) await writeAtomic(`${file}.map`, bundle.map);
  await writeAtomic(file, text);
  if (removeReplaced) {
    const other = new RegExp(`^${name}-[0-9a-f]{12}\\.mjs(\\.map)?$`);
    const keep = path.basename(file);
    const names = await readdir(dir).catch(() => /** @type {string[]} */ ([]));
    await Promise.all(
      names
        .filter((f) => other.test(f) && f !== keep && f !== `${keep}.map`)
        .map((f) => rm(path.join(dir, f), { force: true })),
    );
  }
  if (read.some((r) => r.changedDuringBuild)) return file; // no manifest: built again next time (see the file comment)
  const m = {
    file: path.basename(file),
    sha256: sha256(text),
    ...(bundle.map === undefined ? {} : { mapSha256: sha256(bundle.map) }),
    inputs: read.map((r) => r.entry),
  };
  await writeAtomic(manifest, `${JSON.stringify(m)}\n`);
  return file;
}
