/**
 * "A × B" has one meaning per table, said in its header. A matrix cell's id names its axes by their last path segment
 * (harness/scenario/schema.ts: "batch=200,requests=10"); when every cell of a table names the same two or more axes,
 * in the same order, the table names its cells by their values, "200 × 10", under a heading naming the axes,
 * "batch × requests". A query phase's cells (run.json `query.cells`: `concurrency`, `count`) are the other "A × B":
 * their heading is their own field names, "concurrency × count" (closed-loop workers × requests per worker).
 */

/** How a table names its cells: the heading over them and each cell's label. */
export interface CellAxes {
  /** the axes, as the cell ids name them ("batch", "requests") */
  axes: string[];
  /** the column heading: "batch × requests" */
  heading: string;
  /** a cell's label: "batch=200,requests=10" → "200 × 10"; an id of other axes unchanged */
  label: (id: string) => string;
}

/** The "key=value" pairs of a cell id, or null when it is not one ("default", a value with "," or "="). */
export function pairsOf(id: string): Array<[string, string]> | null {
  const parts = id.split(",").map((p) => p.split("="));
  return parts.every((p) => p.length === 2 && p[0] !== "" && p[1] !== "")
    ? parts.map((p) => [p[0]!, p[1]!])
    : null;
}

/** "a × b × c": the axes or values of a cell joined as the tables print them. */
export const times = (xs: readonly (string | number)[]): string => xs.join(" × ");

/**
 * The axes every cell id of `ids` names, when there are at least two and all cells name the same ones in the same
 * order; null otherwise (one axis, mixed axes, "default"): such a table keeps the ids as they are.
 */
export function cellAxes(ids: readonly string[]): CellAxes | null {
  const parsed = ids.map(pairsOf);
  const first = parsed[0];
  if (!first || first.length < 2) return null;
  const axes = first.map(([k]) => k);
  const same = (p: Array<[string, string]> | null): boolean =>
    p !== null && p.length === axes.length && p.every(([k], i) => k === axes[i]);
  if (!parsed.every(same)) return null;
  if (parsed.some((p) => p!.some(([, v]) => v.includes("×")))) return null;
  return {
    axes,
    heading: times(axes),
    label: (id) => {
      const p = pairsOf(id);
      return same(p) ? times(p!.map(([, v]) => v)) : id;
    },
  };
}

/** The axes of a query phase's cells (harness/scenario/schema.ts, `query.cells`) and what each number is. */
export const QUERY_AXES = { concurrency: "closed-loop workers", count: "requests per worker" } as const;

/** "concurrency × count (concurrency: closed-loop workers, count: requests per worker)". */
export const queryAxesHeading = (): string =>
  `${times(Object.keys(QUERY_AXES))} (${Object.entries(QUERY_AXES)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ")})`;

/** A query cell's label under QUERY_AXES: { concurrency: 100, count: 10 } → "100 × 10". */
export const queryCellLabel = (c: { concurrency: number; count: number }): string =>
  times([c.concurrency, c.count]);
