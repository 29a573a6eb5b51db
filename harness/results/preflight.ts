/**
 * Checks a results directory before anything is provisioned, so that a run never measures for minutes and then
 * cannot write, and creates it only once the stacks and scenarios were accepted (checkResultsDir first, then
 * prepareResultsDir). Walks up to the nearest existing ancestor without creating anything: Node's recursive mkdir
 * spins forever under /proc (it never returns for "/proc/x/y"), so pseudo filesystems are refused by type
 * (statfs f_type: PROC_SUPER_MAGIC 0x9fa0, SYSFS_MAGIC 0x62656572, CGROUP_SUPER_MAGIC 0x27e0eb, CGROUP2 0x63677270).
 */
import { accessSync, constants, mkdirSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigurationError } from "../../core/errors.ts";

const PSEUDO_FS = new Map<number, string>([
  [0x9fa0, "procfs"],
  [0x62656572, "sysfs"],
  [0x27e0eb, "cgroupfs"],
  [0x63677270, "cgroup2fs"],
  [0x64626720, "debugfs"],
]);

function failer(abs: string): (why: string) => never {
  return (why) => {
    throw new ConfigurationError("E_RESULTS_DIR", `results directory ${abs}: ${why}`, { field: "--results" });
  };
}

/**
 * `--results <dir>` as given (every command's option parser, and checkResultsDir): refused when empty or blank, since
 * path.resolve("") is the working directory and a run would write its results into wherever it was started (an unset
 * shell variable in `--results "$OUT"` does that). @returns `dir` unchanged. @throws ConfigurationError (E_RESULTS_DIR)
 */
export function resultsDirFlag(dir: string): string {
  if (dir.trim() === "") {
    throw new ConfigurationError(
      "E_RESULTS_DIR",
      `--results ${JSON.stringify(dir)}: an empty results directory would be the working directory (${process.cwd()}); give one, e.g. --results results`,
      { field: "--results" },
    );
  }
  return dir;
}

/**
 * Check a results directory without creating anything (the commands call this first, then validate their stacks and
 * scenarios; the driver creates it with prepareResultsDir once nothing is refused any more): it, or its nearest
 * existing ancestor, is a directory this process may write, on no pseudo filesystem.
 * @returns the absolute directory. @throws ConfigurationError (E_RESULTS_DIR), also for an empty or blank `dir`
 */
export function checkResultsDir(dir: string): string {
  const abs = path.resolve(resultsDirFlag(dir));
  const fail = failer(abs);
  let existing = abs;
  for (;;) {
    try {
      const st = statSync(existing);
      if (!st.isDirectory()) fail(`${existing} is not a directory`);
      break;
    } catch (e) {
      if (e instanceof ConfigurationError) throw e; // fail() above: already worded
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") fail((e as Error).message);
      const parent = path.dirname(existing);
      if (parent === existing) fail("no existing ancestor");
      existing = parent;
    }
  }
  const fsType = PSEUDO_FS.get(Number(statfsSync(existing).type));
  if (fsType) fail(`${existing} is on ${fsType}, where results cannot be written`);
  try {
    accessSync(existing, constants.W_OK);
  } catch (e) {
    fail(`not writable (${(e as Error).message})`);
  }
  return abs;
}

/**
 * checkResultsDir, then create the directory and prove it writable (a probe file written and removed).
 * @returns the absolute directory. @throws ConfigurationError (E_RESULTS_DIR)
 */
export function prepareResultsDir(dir: string): string {
  const abs = checkResultsDir(dir);
  const fail = failer(abs);
  try {
    mkdirSync(abs, { recursive: true });
    const probe = path.join(abs, `.write-probe-${process.pid}`);
    writeFileSync(probe, "");
    rmSync(probe);
  } catch (e) {
    fail(`not writable (${(e as Error).message})`);
  }
  return abs;
}
