/**
 * `ingestbench results query SQL [--json]`: SQL with DuckDB over the results' JSON files (harness/results/query.ts).
 */
import path from "node:path";
import { resultsDirFlag } from "../../results/preflight.ts";
import type { CommandModule } from "../context.ts";

export const registerResults: CommandModule = (program, ctx) => {
  const results = program
    .command("results")
    .summary("Query results on disk with SQL (DuckDB)")
    .description("Work with results on disk (results/<stack>/<scenario>/<run-id>/).");
  results
    .command("query")
    .description(
      "Run SQL with DuckDB over the results: view `runs` (one row per run.json) and view `series` (one row per series.jsonl line). Their columns: docs/results.md.",
    )
    .argument("<sql>", 'e.g. "SELECT stack, summary.rowsPerSecond FROM runs ORDER BY 2"')
    .option("-r, --results <dir>", "results directory", resultsDirFlag, ctx.resultsDir)
    .option("--json", "print the rows as a JSON array (only that on stdout)")
    .action(
      ctx.action(async (sql: string, flags: { results: string; json?: boolean }) => {
        // loaded on use: the DuckDB native binding is not needed by the other commands
        const { queryResults } = await import("../../results/query.ts");
        const { renderQueryResult } = await import("../../../ui/results-query.ts");
        const result = await queryResults(path.resolve(flags.results), sql);
        for (const f of result.skipped) ctx.stderr.write(`ingestbench: skipped unreadable ${f}\n`);
        if (flags.json) ctx.printJson(result.rows);
        else ctx.print(renderQueryResult(result));
      }),
    );
};
