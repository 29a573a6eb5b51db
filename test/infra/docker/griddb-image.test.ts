/**
 * images/griddb-webapi: GridDB 5.6.0 with the GridDB Web API, the image a GridDB sink runs on the docker and azure
 * platforms (infra/catalog.ts `griddb.build`, always built).
 *
 * No Docker engine, GridDB or Web API here, so the image is not built. What runs here, with real bash, jq, sed and
 * wget: the Dockerfile's pins (parsed from its ARG/FROM lines), start.sh's config rendering against a gs_cluster.json
 * RECONSTRUCTED FOR THIS TEST in the shape of the griddb package's default (MULTICAST) file, and start.sh's
 * supervision against STAND-INS for the GridDB tools (gs_startnode starts a process named gsserver that only sleeps)
 * and for java (a node HTTP server answering the Web API's checkConnection path).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { catalogEntry } from "../../../infra/catalog.ts";
import { griddbSinkSchema } from "../../../plugins/sinks/griddb/schema.ts";
import { gridDbTarget } from "../../../core/events/griddb-webapi.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const dir = path.join(root, "images/griddb-webapi");
const script = path.join(dir, "start.sh");
const work = mkdtempSync(path.join(tmpdir(), "ib-griddb-webapi-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const griddb = catalogEntry("griddb");

/** The griddb package's default gs_cluster.json as documented (MULTICAST): reconstructed for this test. */
const GS_CLUSTER_MULTICAST = {
  dataStore: { partitionNum: 128, storeBlockSize: "64KB" },
  cluster: {
    clusterName: "",
    replicationNum: 2,
    notificationAddress: "239.0.0.1",
    notificationPort: 20000,
    notificationInterval: "5s",
    heartbeatInterval: "5s",
    loadbalanceCheckInterval: "180s",
  },
  sync: { timeoutInterval: "30s" },
  transaction: {
    notificationAddress: "239.0.0.1",
    notificationPort: 31999,
    notificationInterval: "5s",
    replicationMode: 0,
    replicationTimeoutInterval: "10s",
  },
  sql: { notificationAddress: "239.0.0.1", notificationPort: 41999 },
};

let n = 0;
/** A fresh GS_HOME (conf/gs_cluster.json, optionally conf/gs_node.json) and GS_WEBAPI_HOME under the work dir. */
function homes(gsNode?: unknown): { gsHome: string; webapiHome: string } {
  const gsHome = path.join(work, `gs-${++n}`);
  mkdirSync(path.join(gsHome, "conf"), { recursive: true });
  writeFileSync(path.join(gsHome, "conf/gs_cluster.json"), JSON.stringify(GS_CLUSTER_MULTICAST, null, 2));
  if (gsNode !== undefined) writeFileSync(path.join(gsHome, "conf/gs_node.json"), JSON.stringify(gsNode));
  return { gsHome, webapiHome: path.join(gsHome, "webapi") };
}

/** The container's env as the platforms set it: the catalog entry's env, plus what a test adds. */
function envOf(
  h: { gsHome: string; webapiHome: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  // CGROUP_ROOT: an empty directory (no memory cap) unless a test gives one
  const cgroup = path.join(h.gsHome, "cgroup");
  mkdirSync(cgroup, { recursive: true });
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: work,
    GS_HOME: h.gsHome,
    GS_WEBAPI_HOME: h.webapiHome,
    CGROUP_ROOT: cgroup,
    GRIDDB_NODE_ADDRESS: "10.213.7.12",
    ...griddb.env,
    ...extra,
  };
}

function render(env: Record<string, string>) {
  const r = spawnSync("bash", [script, "render"], { env, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `key=value` lines of a Java properties file (comments and blank lines left out). */
function properties(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): Array<{ op: string; args: string }> {
  const joined = text.replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => ({ op: l.split(/\s+/)[0]!.toUpperCase(), args: l.slice(l.split(/\s+/)[0]!.length).trim() }));
}

describe("images/griddb-webapi Dockerfile (parsed here, not built: no Docker engine)", () => {
  const ins = instructions(readFileSync(path.join(dir, "Dockerfile"), "utf8"));
  const args = new Map<string, string>();
  for (const i of ins.filter((x) => x.op === "ARG")) {
    const m = /^([A-Z_]+)(?:=(.*))?$/.exec(i.args);
    if (m && m[2] !== undefined) args.set(m[1]!, m[2]);
  }
  const resolve = (s: string) =>
    s.replace(/\$\{([A-Z_]+)\}/g, (_, k: string) => args.get(k) ?? `<unset ${k}>`);
  const froms = ins
    .filter((x) => x.op === "FROM")
    .map((x) => {
      const [image, as, stage] = x.args.split(/\s+/);
      return { image: resolve(image!), stage: as?.toUpperCase() === "AS" ? stage : undefined };
    });

  it("is multi-stage and pins every base image by tag: a Temurin JDK 8 and the same release's JRE, then the catalog's griddb/griddb:5.6.0", () => {
    expect(froms.map((f) => f.stage)).toEqual(["webapi", "jre", undefined]);
    const temurin = /^eclipse-temurin:(8u\d+-b\d+)-(jdk|jre)-jammy$/;
    const [jdk, jre, runtime] = froms;
    expect(jdk!.image).toMatch(temurin);
    expect(jre!.image).toMatch(temurin);
    expect(temurin.exec(jdk!.image)![1]).toBe(temurin.exec(jre!.image)![1]); // one Temurin release for build and run
    expect(temurin.exec(jdk!.image)![2]).toBe("jdk");
    expect(temurin.exec(jre!.image)![2]).toBe("jre");
    expect(runtime!.image).toBe(`${griddb.repository}:${griddb.tag}`);
    for (const f of froms) expect(f.image, f.image).not.toMatch(/:latest$|<unset|^[^:]+$/);
    expect(
      ins.filter((x) => x.op === "COPY" && x.args.startsWith("--from=")).map((x) => x.args.split(/\s+/)[0]),
    ).toEqual(["--from=jre", "--from=webapi"]);
  });

  it("builds the Web API from a pinned griddb/webapi tag with its gradle wrapper, and fails unless the tarball is that version", () => {
    expect(args.get("WEBAPI_TAG")).toMatch(/^v?\d+\.\d+\.\d+$|^[0-9a-f]{40}$/);
    expect(args.get("WEBAPI_VERSION")).toBe(griddb.version);
    expect(args.get("GRIDDB_VERSION")).toBe(griddb.version);
    const add = ins.find((x) => x.op === "ADD")!.args;
    expect(add).toBe(
      "https://github.com/griddb/webapi/archive/refs/tags/${WEBAPI_TAG}.tar.gz /tmp/webapi.tar.gz",
    );
    const buildRun = ins.filter((x) => x.op === "RUN")[0]!.args;
    expect(buildRun).toContain(`grep -Eq "^version *= *'\${WEBAPI_VERSION}'" build.gradle`);
    expect(buildRun).toContain("./gradlew --no-daemon build");
    expect(buildRun).toContain("sha256sum -c -"); // checked once WEBAPI_SHA256 is set
    // the catalog's tag names both pins
    expect(catalogEntry("griddb").build!.tag).toBe(
      `${args.get("GRIDDB_VERSION")}-webapi${args.get("WEBAPI_VERSION")}-1`,
    );
  });

  it("runs start.sh, exposes the catalog's ports, copies only files of the context, and checks the package version the catalog's versionCommand reads", () => {
    expect(ins.find((x) => x.op === "ENTRYPOINT")!.args).toBe('["/opt/ingestbench/start.sh"]');
    expect(ins.find((x) => x.op === "CMD")!.args).toBe('["run"]');
    expect(ins.find((x) => x.op === "HEALTHCHECK")!.args).toContain(
      'CMD ["/opt/ingestbench/start.sh", "check"]',
    );
    expect(
      ins
        .find((x) => x.op === "EXPOSE")!
        .args.split(/\s+/)
        .map(Number)
        .sort(),
    ).toEqual(griddb.ports.map((p) => p.port).sort());
    for (const c of ins.filter((x) => x.op === "COPY" && !x.args.startsWith("--from="))) {
      const sources = c.args.split(/\s+/).slice(0, -1);
      for (const s of sources) expect(existsSync(path.join(dir, s)), s).toBe(true);
    }
    const runtimeRun = ins.filter((x) => x.op === "RUN")[1]!.args;
    expect(griddb.versionCommand).toEqual(["dpkg-query", "-W", "-f=${Version}\\n", "griddb"]);
    expect(runtimeRun).toContain(`dpkg-query -W -f='\${Version}\\n' griddb | grep -q "^\${GRIDDB_VERSION}"`);
    expect(runtimeRun).toContain("/opt/ingestbench/start.sh render");
  });

  it("start.sh parses as bash (bash -n)", () => {
    expect(() => execFileSync("bash", ["-n", script])).not.toThrow();
  });
});

describe("start.sh render (real bash, jq, sed; a gs_cluster.json reconstructed from the griddb package's documented default)", () => {
  it("renders repository.json, griddb_webapi.properties and a FIXED_LIST gs_cluster.json from the catalog's env, naming the cluster the verifier uses", () => {
    const h = homes();
    const r = render(envOf(h));
    expect(r.status, r.stderr).toBe(0);
    const repository = JSON.parse(readFileSync(path.join(h.webapiHome, "conf/repository.json"), "utf8"));
    // the harness's default cluster: the sink schema's (plugins/sinks/griddb/schema.ts) and the generator's / verifier's
    const verifierCluster = gridDbTarget({}).cluster;
    expect(griddbSinkSchema.parse({}).cluster).toBe(verifierCluster);
    expect(repository).toEqual({
      clusters: [
        {
          name: verifierCluster,
          mode: "FIXED_LIST",
          transactionMember: "10.213.7.12:10001",
          sqlMember: "10.213.7.12:20001",
          providerUrl: null,
        },
      ],
    });
    const props = properties(readFileSync(path.join(h.webapiHome, "conf/griddb_webapi.properties"), "utf8"));
    expect(props).toEqual({
      port: String(griddb.ports.find((p) => p.role === "data")!.port),
      failoverTimeout: "5",
      transactionTimeout: "30",
      containerCacheSize: "100",
      maxResponseSize: "20",
      maxRequestSize: "20",
      loginTimeout: "5",
      maxQueryNum: "10",
      maxLimit: "1000000",
      timeZone: "Z",
    });
    const cluster = JSON.parse(readFileSync(path.join(h.gsHome, "conf/gs_cluster.json"), "utf8"));
    expect(cluster.cluster.clusterName).toBe(verifierCluster);
    expect(cluster.cluster.notificationMember).toEqual([
      {
        cluster: { address: "10.213.7.12", port: 10010 },
        sync: { address: "10.213.7.12", port: 10020 },
        system: { address: "10.213.7.12", port: 10040 },
        transaction: { address: "10.213.7.12", port: 10001 },
        sql: { address: "10.213.7.12", port: 20001 },
      },
    ]);
    for (const section of ["cluster", "transaction", "sql"]) {
      expect(cluster[section].notificationAddress, section).toBeUndefined();
      expect(cluster[section].notificationPort, section).toBeUndefined();
    }
    // the rest of the file is left as the package wrote it
    expect(cluster.dataStore).toEqual(GS_CLUSTER_MULTICAST.dataStore);
    expect(cluster.transaction.replicationMode).toBe(0);
    expect(r.stderr).toContain(
      `config: cluster ${verifierCluster}, node 10.213.7.12:10001 (FIXED_LIST), Web API port 8081, heap 1024m`,
    );
  });

  it("takes another cluster name, port, request cap and gs_node.json's service ports; rendering twice gives the same files", () => {
    const h = homes({
      cluster: { servicePort: 11010 },
      transaction: { servicePort: 11001 },
      sql: { servicePort: 21001 },
    });
    const env = envOf(h, {
      GRIDDB_CLUSTER_NAME: "fluentd_stress",
      GRIDDB_WEBAPI_PORT: "18081",
      GRIDDB_WEBAPI_MAX_REQUEST_MB: "256",
    });
    expect(render(env).status).toBe(0);
    const files = ["conf/repository.json", "conf/griddb_webapi.properties"].map((f) =>
      readFileSync(path.join(h.webapiHome, f), "utf8"),
    );
    const gsCluster = readFileSync(path.join(h.gsHome, "conf/gs_cluster.json"), "utf8");
    expect(JSON.parse(files[0]!).clusters[0]).toMatchObject({
      name: "fluentd_stress",
      transactionMember: "10.213.7.12:11001",
      sqlMember: "10.213.7.12:21001",
    });
    expect(properties(files[1]!)).toMatchObject({ port: "18081", maxRequestSize: "256" });
    const member = JSON.parse(gsCluster).cluster.notificationMember[0];
    expect([member.cluster.port, member.sync.port, member.transaction.port, member.sql.port]).toEqual([
      11010, 10020, 11001, 21001,
    ]);
    expect(render(env).status).toBe(0);
    expect(
      ["conf/repository.json", "conf/griddb_webapi.properties"].map((f) =>
        readFileSync(path.join(h.webapiHome, f), "utf8"),
      ),
    ).toEqual(files);
    expect(readFileSync(path.join(h.gsHome, "conf/gs_cluster.json"), "utf8")).toBe(gsCluster);
  });

  it("sizes the Web API heap from the container's memory cap (a quarter, 256m..1024m) unless GRIDDB_WEBAPI_HEAP is given", () => {
    const heapUnder = (files: Record<string, string>, extra: Record<string, string> = {}) => {
      const h = homes();
      const env = envOf(h, extra);
      for (const [f, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(env.CGROUP_ROOT!, f)), { recursive: true });
        writeFileSync(path.join(env.CGROUP_ROOT!, f), text);
      }
      const r = render(env);
      expect(r.status, r.stderr).toBe(0);
      return /, heap (\S+)\n/.exec(r.stderr)?.[1];
    };
    expect(heapUnder({ "memory.max": "2147483648\n" })).toBe("512m"); // docker-4c4g's sink: 2 GiB
    expect(heapUnder({ "memory.max": "4294967296\n" })).toBe("1024m");
    expect(heapUnder({ "memory.max": "max\n" })).toBe("1024m");
    expect(heapUnder({ "memory/memory.limit_in_bytes": "805306368\n" })).toBe("256m"); // cgroup v1, 768 MiB
    expect(heapUnder({ "memory/memory.limit_in_bytes": "9223372036854771712\n" })).toBe("1024m"); // v1 without a cap
    expect(heapUnder({ "memory.max": "2147483648\n" }, { GRIDDB_WEBAPI_HEAP: "1536m" })).toBe("1536m");
  });

  it("refuses bad env before writing anything, naming the variable", () => {
    for (const [extra, message] of [
      [{ GRIDDB_CLUSTER_NAME: "my-cluster" }, /GRIDDB_CLUSTER_NAME='my-cluster': only letters, digits and _/],
      [{ GRIDDB_WEBAPI_PORT: "70000" }, /GRIDDB_WEBAPI_PORT='70000': not a TCP port/],
      [{ GRIDDB_WEBAPI_PORT: "08081" }, /GRIDDB_WEBAPI_PORT='08081': not a TCP port/],
      [{ GRIDDB_WEBAPI_MAX_REQUEST_MB: "4096" }, /GRIDDB_WEBAPI_MAX_REQUEST_MB='4096': an integer 1\.\.2048/],
      [{ GRIDDB_NODE_ADDRESS: "sink.local" }, /GRIDDB_NODE_ADDRESS='sink\.local': not an IPv4 address/],
      [{ GRIDDB_PASSWORD: "" }, /GRIDDB_PASSWORD is empty/],
      [{ GRIDDB_WEBAPI_HEAP: "lots" }, /GRIDDB_WEBAPI_HEAP='lots'/],
    ] as const) {
      const h = homes();
      const r = render(envOf(h, extra));
      expect(r.status, JSON.stringify(extra)).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(existsSync(h.webapiHome)).toBe(false);
      expect(JSON.parse(readFileSync(path.join(h.gsHome, "conf/gs_cluster.json"), "utf8"))).toEqual(
        GS_CLUSTER_MULTICAST,
      );
    }
    const h = homes();
    rmSync(path.join(h.gsHome, "conf/gs_cluster.json"));
    expect(render(envOf(h)).stderr).toContain(`no ${h.gsHome}/conf/gs_cluster.json`);
  });
});

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Stand-ins on PATH for the GridDB tools start.sh calls and for java; every call is appended to calls.log. */
function standIns(): { bin: string; log: string } {
  const bin = path.join(work, `bin-${++n}`);
  mkdirSync(bin);
  const log = path.join(bin, "calls.log");
  // a process whose name (/proc/<pid>/comm) is gsserver, as the real node's
  copyFileSync(
    execFileSync("bash", ["-c", "command -v sleep"], { encoding: "utf8" }).trim(),
    path.join(bin, "gsserver"),
  );
  execFileSync("chmod", ["0755", path.join(bin, "gsserver")]);
  const tool = (name: string, body: string) =>
    writeFileSync(path.join(bin, name), `#!/bin/bash\necho "${name} $*" >> "${log}"\n${body}\n`, {
      mode: 0o755,
    });
  tool("gs_passwd", "");
  tool(
    "gs_startnode",
    `[ "\${IB_STARTNODE_RC:-0}" = 0 ] || exit "$IB_STARTNODE_RC"\nsetsid "${bin}/gsserver" 600 >/dev/null 2>&1 < /dev/null &\necho $! > "$GS_HOME/conf/gsserver.pid"`,
  );
  tool("gs_joincluster", "");
  tool("gs_stopcluster", "");
  tool("gs_stopnode", `kill "$(cat "$GS_HOME/conf/gsserver.pid")"`);
  // java: a node HTTP server on --server.port answering the Web API's checkConnection path with Basic auth
  writeFileSync(
    path.join(bin, "fake-webapi.mjs"),
    `import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
const log = (m) => appendFileSync(${JSON.stringify(log)}, m + "\\n");
const port = Number(process.argv.find((a) => a.startsWith("--server.port=")).split("=")[1]);
const auth = "Basic " + Buffer.from("admin:admin").toString("base64");
const server = createServer((req, res) => {
  const ok = req.method === "GET" && req.url === "/griddb/v2/myCluster/dbs/public/checkConnection" && req.headers.authorization === auth;
  res.writeHead(ok ? 200 : 401).end();
}).listen(port, "127.0.0.1");
process.on("SIGTERM", () => { log("webapi SIGTERM"); server.close(); process.exit(143); });
if (process.env.IB_JAVA_EXIT_AFTER_MS) setTimeout(() => { log("webapi crash"); process.exit(3); }, Number(process.env.IB_JAVA_EXIT_AFTER_MS));
`,
  );
  tool("java", `exec node "${bin}/fake-webapi.mjs" "$@"`);
  return { bin, log };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const started: ChildProcess[] = [];
const nodePids: number[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const pid of nodePids.splice(0)) if (pidAlive(pid)) process.kill(pid, "SIGKILL");
});

/** Run `start.sh` (run mode) with the stand-ins first on PATH; resolves its exit code. */
async function supervised(extra: Record<string, string> = {}) {
  const h = homes();
  const { bin, log } = standIns();
  const port = await freePort();
  const env = envOf(h, {
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    GRIDDB_WEBAPI_PORT: String(port),
    GRIDDB_NODE_ADDRESS: "127.0.0.1",
    ...extra,
  });
  const child = spawn("bash", [script], { env, stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
  const nodePid = () => {
    const f = path.join(h.gsHome, "conf/gsserver.pid");
    const pid = existsSync(f) ? Number(readFileSync(f, "utf8")) : 0;
    if (pid > 0 && !nodePids.includes(pid)) nodePids.push(pid);
    return pid;
  };
  return { child, exited, stderr: () => stderr, calls, nodePid, port, webapiHome: h.webapiHome };
}

describe("start.sh supervision (stand-ins for gs_startnode/gsserver and for java: no GridDB or Web API here)", () => {
  it("starts the node, forms the cluster, starts the Web API, says ready once checkConnection answers 200; SIGTERM stops the Web API, then the cluster and node, exit 0", async () => {
    const s = await supervised();
    await vi.waitFor(
      () => expect(s.stderr()).toContain(`ready: http://127.0.0.1:${s.port}/griddb/v2/myCluster/dbs/public`),
      { timeout: 30_000, interval: 200 },
    );
    const pid = s.nodePid();
    expect(pidAlive(pid)).toBe(true);
    expect(s.calls()).toEqual([
      "gs_passwd admin -p admin",
      "gs_startnode -u admin/admin -w 120",
      "gs_joincluster -c myCluster -u admin/admin -w 120",
      `java -Xmx1024m -jar ${s.webapiHome}/griddb-webapi.jar --server.port=${s.port}`,
    ]);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    expect(s.calls().slice(4)).toEqual([
      "webapi SIGTERM",
      "gs_stopcluster -u admin/admin -w 60",
      "gs_stopnode -u admin/admin -w 60",
    ]);
    await vi.waitFor(() => expect(pidAlive(pid)).toBe(false), { timeout: 5_000 });
  });

  it("ends the container (exit 1) and stops the node when the Web API dies", async () => {
    const s = await supervised({ IB_JAVA_EXIT_AFTER_MS: "1500" });
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toContain("the Web API exited (3): stopping GridDB");
    expect(s.calls().slice(-3)).toEqual([
      "webapi crash",
      "gs_stopcluster -u admin/admin -w 60",
      "gs_stopnode -u admin/admin -w 60",
    ]);
    const pid = s.nodePid();
    await vi.waitFor(() => expect(pidAlive(pid)).toBe(false), { timeout: 5_000 });
  });

  it("ends the container (exit 1) and stops the Web API when the GridDB node dies", async () => {
    const s = await supervised();
    await vi.waitFor(() => expect(s.stderr()).toContain("ready:"), { timeout: 30_000, interval: 200 });
    process.kill(s.nodePid(), "SIGKILL");
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toContain("the GridDB node exited: stopping the Web API");
    expect(s.calls().at(-1)).toBe("webapi SIGTERM");
    expect(s.calls().some((c) => c.startsWith("gs_stopnode"))).toBe(false);
  });

  it("fails without starting the Web API when gs_startnode fails", async () => {
    const s = await supervised({ IB_STARTNODE_RC: "2" });
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toContain("gs_startnode failed");
    expect(s.calls().some((c) => c.startsWith("java"))).toBe(false);
  });
});
