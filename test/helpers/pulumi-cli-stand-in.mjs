#!/usr/bin/env node
// RECORDING STAND-IN for the Pulumi CLI (`pulumi`), for tests only: installed as <dir>/bin/pulumi by
// test/helpers/pulumi-cli-stand-in.ts. It deploys nothing. It appends each invocation (argv, cwd, PULUMI_* env,
// stdin) to <dir>/calls.jsonl and answers from <dir>/state.json in the shapes the real CLI prints:
//   version                     "v3.248.0": the CLI prints its version with a "v"; the SDK semver-parses it and
//                               refuses anything below 3.2.0-alpha (automation/cmd.js, minimumVersion.js)
//   stack select --stack S      nothing; unknown stack: "error: no stack named 'S' found" on stderr, exit 255
//                               (the SDK's StackNotFoundError matches /no stack named.*found/, automation/errors.js)
//   stack init S                "Created stack 'S'"
//   config set-all ... --path   nothing (the real CLI rewrites stacks/Pulumi.S.yaml: a marker line is appended)
//   config --show-secrets --json  { "<ns:key>": { "value": "...", "secret": false } } (automation ConfigMap)
//   up --config-file F          as up, reading the stack's config from F instead of stacks/Pulumi.S.yaml (the real
//                               CLI's --config-file); F's text is recorded as the stack's `configFile` and the CLI
//                               "rewrites" F (a marker line appended), never the stack file
//   up / refresh / destroy      progress text (the SDK does not parse it); a locked stack fails with the DIY
//                               backend's "error: the stack is currently locked by 1 lock(s). Either wait ... with
//                               `pulumi cancel`." + the lock file line (as quoted in PierreBeucher/cloudypad#304;
//                               the SDK's ConcurrentUpdateError matches "the stack is currently locked by")
//   stack output --json [--show-secrets]  the outputs object ({} when nothing is deployed)
//   stack history --json ...    [{ version, kind, startTime, endTime, message, environment, config, result,
//                               resourceChanges }] (automation UpdateSummary)
//   stack ls --json             [{ name, current, lastUpdate?, updateInProgress, resourceCount? }]: stackSummaryJSON
//                               of pulumi/pulumi pkg/cmd/pulumi stack_ls.go (lastUpdate UTC "…T…Z", omitted if none)
//   cancel --yes --stack S      "The currently running update for 'S' has been canceled!" (Pulumi's troubleshooting
//                               docs); supported on DIY backends since pulumi/pulumi#9100
// Anything else: "stand-in: unsupported command" and exit 2, so an unexpected command line fails the test.
//
// ENGINE MODE (state.engine set): `up` and `destroy` deploy for real: they run test/helpers/pulumi-engine.ts, which
// runs the project's Pulumi program under Pulumi's mocks and creates (destroys) each docker resource on the engine
// DOCKER_HOST names; `stack output` then returns what the program exported. SIGINT is passed on to it.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const dir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const statePath = path.join(dir, "state.json");
const argv = process.argv.slice(2);
// like the real CLI, Ctrl-C is handled from the first instant: a SIGINT that arrives before a hanging command
// begins to wait (the harness aborts as soon as it sees the call recorded) must cancel it, not kill the process
let interrupted = false;
const onInterrupt = new Set();
process.on("SIGINT", () => {
  interrupted = true;
  for (const f of onInterrupt) f();
});

async function readStdin() {
  if (process.stdin.isTTY) return "";
  return new Promise((resolve) => {
    let text = "";
    const done = () => {
      process.stdin.pause();
      process.stdin.removeAllListeners("data");
      resolve(text);
    };
    process.stdin.on("data", (d) => {
      text += d;
    });
    process.stdin.on("end", done);
    process.stdin.on("error", done);
    setTimeout(done, 50).unref(); // the SDK never closes stdin: take what arrived
  });
}

const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k.startsWith("PULUMI_") || k.startsWith("IB_")),
);
const stdin = await readStdin();
const cf = argv.indexOf("--config-file");
const configFileText = cf >= 0 && existsSync(argv[cf + 1]) ? readFileSync(argv[cf + 1], "utf8") : undefined;
appendFileSync(
  path.join(dir, "calls.jsonl"),
  JSON.stringify({
    argv,
    cwd: process.cwd(),
    env,
    stdin,
    ...(configFileText !== undefined ? { configFileText } : {}),
  }) + "\n",
);

const state = JSON.parse(readFileSync(statePath, "utf8"));
const save = () => writeFileSync(statePath, JSON.stringify(state, null, 2));
const flag = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const has = (name) => argv.includes(name);
const positional = argv.filter(
  (a, i) =>
    !a.startsWith("-") &&
    !(
      i > 0 &&
      [
        "--stack",
        "--exec-kind",
        "--page-size",
        "--page",
        "--plaintext",
        "--secret",
        "--client",
        "--event-log",
        "--config-file",
      ].includes(argv[i - 1])
    ),
);
const out = (s) => process.stdout.write(s.endsWith("\n") ? s : `${s}\n`);
const fail = (msg, code = 255) => {
  process.stderr.write(`${msg}\n`);
  process.exit(code);
};
const stackName = () => flag("--stack") ?? state.current;
const stackOf = (name) => state.stacks[name] ?? fail(`error: no stack named '${name}' found`);
const cmd = positional.slice(0, 2).join(" ");
const injected = state.fail?.[positional[0]];
if (injected) fail(injected.stderr, injected.exitCode ?? 255);

const lockedMessage = (name) =>
  `error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with \`pulumi cancel\`.\n` +
  `  file://~/.pulumi/locks/organization/ingestbench/${name}/6f1c2a3e-0d7b-4c59-9a8e-2b1f0c9d4e11.json: created by root@stand-in (pid 4242) at 2026-11-29T23:00:00Z`;

async function hangUntilInterrupted(name) {
  // like the real CLI: SIGINT cancels the update gracefully; the stack stays locked when `lockOnInterrupt` is set
  await new Promise((resolve) => {
    if (interrupted) return resolve();
    onInterrupt.add(resolve);
    setTimeout(resolve, 60_000);
  });
  if (state.lockOnInterrupt) {
    state.stacks[name].locked = true;
    save();
  }
  fail("^C received; cancelling the current operation.\nerror: update canceled");
}

switch (positional[0]) {
  case "version":
    out(`v${state.version}`);
    break;
  case "stack": {
    const sub = positional[1];
    if (sub === "select") {
      const name = stackName();
      stackOf(name);
      state.current = name;
      save();
    } else if (sub === "init") {
      const name = positional[2];
      if (state.stacks[name]) fail(`error: stack '${name}' already exists`);
      state.stacks[name] = { config: {}, outputs: {}, resourceCount: 0, deploy: state.deploy?.[name] ?? {} };
      state.current = name;
      save();
      out(`Created stack '${name}'`);
    } else if (sub === "output" && has("--json")) {
      const st = stackOf(stackName());
      const outputs = st.outputs ?? {};
      out(
        JSON.stringify(
          has("--show-secrets")
            ? outputs
            : Object.fromEntries(
                Object.entries(outputs).map(([k, v]) => [k, (st.secrets ?? []).includes(k) ? "[secret]" : v]),
              ),
          null,
          2,
        ),
      );
    } else if (sub === "history" && has("--json")) {
      const st = stackOf(stackName());
      out(JSON.stringify((st.history ?? []).slice(0, Number(flag("--page-size") ?? 10)), null, 2));
    } else if (sub === "ls" && has("--json")) {
      out(
        JSON.stringify(
          Object.entries(state.stacks).map(([name, st]) => ({
            name,
            current: name === state.current,
            ...(st.lastUpdate ? { lastUpdate: st.lastUpdate } : {}),
            updateInProgress: Boolean(st.updateInProgress),
            ...(st.resourceCount === undefined ? {} : { resourceCount: st.resourceCount }),
          })),
          null,
          2,
        ),
      );
    } else {
      fail(`stand-in: unsupported command: ${argv.join(" ")}`, 2);
    }
    break;
  }
  case "config": {
    const name = stackName();
    const st = stackOf(name);
    if (positional[1] === "set-all") {
      for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--plaintext" || argv[i] === "--secret") {
          const kv = argv[i + 1];
          const eq = kv.indexOf("=");
          st.config[kv.slice(0, eq)] = kv.slice(eq + 1);
        }
      }
      const file = path.join(process.cwd(), "stacks", `Pulumi.${name}.yaml`);
      if (existsSync(file)) appendFileSync(file, "# rewritten by the pulumi CLI stand-in (config set-all)\n");
      save();
    } else if (positional.length === 1 && has("--json")) {
      out(
        JSON.stringify(
          Object.fromEntries(Object.entries(st.config).map(([k, v]) => [k, { value: v, secret: false }])),
          null,
          2,
        ),
      );
    } else {
      fail(`stand-in: unsupported command: ${argv.join(" ")}`, 2);
    }
    break;
  }
  case "up":
  case "refresh":
  case "destroy": {
    const verb = positional[0];
    const name = stackName();
    const st = stackOf(name);
    if (st.locked) fail(lockedMessage(name));
    const configFile = flag("--config-file");
    if (configFile) {
      st.configFile = { path: configFile, text: readFileSync(configFile, "utf8") };
      appendFileSync(configFile, "# rewritten by the pulumi CLI stand-in (--config-file)\n");
      save();
    }
    out(`${verb === "up" ? "Updating" : verb === "destroy" ? "Destroying" : "Refreshing"} (${name})`);
    if ((state.hang ?? []).includes(verb)) await hangUntilInterrupted(name);
    const now = new Date().toISOString();
    if (state.engine && verb !== "refresh") {
      const existed = (st.created ?? []).length;
      save(); // the engine reads and writes the state file itself
      const engine = path.join(path.dirname(fileURLToPath(import.meta.url)), "pulumi-engine.ts");
      const child = spawn(
        process.execPath,
        ["--import", "tsx", state.engine.script ?? engine, verb, statePath, name],
        { cwd: state.engine.projectDir, stdio: ["ignore", "inherit", "inherit"], env: process.env },
      );
      process.on("SIGINT", () => child.kill("SIGINT"));
      process.on("SIGTERM", () => child.kill("SIGTERM"));
      const code = await new Promise((resolve) =>
        child.on("exit", (c, sig) => resolve(c ?? (sig ? 255 : 0))),
      );
      const after = JSON.parse(readFileSync(statePath, "utf8"));
      Object.assign(state, after);
      const stAfter = state.stacks[name];
      stAfter.lastUpdate = now;
      stAfter.history = [
        {
          version: (stAfter.history?.length ?? 0) + 1,
          kind: verb === "up" ? "update" : verb,
          startTime: now,
          endTime: new Date().toISOString(),
          message: "",
          environment: { exec_kind: flag("--exec-kind") ?? "cli" },
          config: {},
          result: code === 0 ? "succeeded" : "failed",
          resourceChanges: {
            [verb === "destroy" ? "delete" : "create"]:
              verb === "destroy" ? existed : (stAfter.resourceCount ?? 0),
          },
        },
        ...(stAfter.history ?? []),
      ];
      save();
      if (code !== 0) fail(`error: ${verb} failed (engine mode, exit ${code})`);
      out(
        `Resources:\n    ${verb === "destroy" ? existed : (stAfter.resourceCount ?? 0)} ${verb === "destroy" ? "deleted" : "created"}\n\nDuration: ${Math.round((Date.now() - Date.parse(now)) / 1000)}s`,
      );
      break;
    }
    if (verb === "up") {
      st.outputs = st.deploy?.outputs ?? {};
      st.resourceCount = st.deploy?.resourceCount ?? 1;
    } else if (verb === "destroy") {
      st.outputs = {};
      st.resourceCount = 0;
    }
    st.lastUpdate = now;
    st.history = [
      {
        version: (st.history?.length ?? 0) + 1,
        kind: verb === "up" ? "update" : verb,
        startTime: now,
        endTime: now,
        message: "",
        environment: { exec_kind: flag("--exec-kind") ?? "cli" },
        config: {},
        result: "succeeded",
        resourceChanges: {
          [verb === "destroy" ? "delete" : verb === "up" ? "create" : "same"]: st.deploy?.resourceCount ?? 1,
        },
      },
      ...(st.history ?? []),
    ];
    save();
    out(`Resources:\n    ${st.resourceCount} ${verb === "destroy" ? "deleted" : "created"}\n\nDuration: 1s`);
    break;
  }
  case "cancel": {
    const name = stackName();
    const st = stackOf(name);
    st.locked = false;
    save();
    out(`The currently running update for '${name}' has been canceled!`);
    break;
  }
  default:
    fail(`stand-in: unsupported command: ${argv.join(" ")}`, 2);
}
