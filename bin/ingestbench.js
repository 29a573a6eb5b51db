#!/usr/bin/env node
// Entry point: loads the TypeScript CLI through tsx so that no build step is needed after `npm ci`.
import { register } from "tsx/esm/api";
register();
const { main } = await import("../harness/cli/index.ts");
await main(process.argv);
