/**
 * The event model: fields a scenario declares, plus the columns every event always carries.
 */

export type FieldType = "timestamp" | "string" | "int" | "float" | "bool";

/** One declared field. `size` is the string length in bytes for generated strings. */
export interface EventField {
  name: string;
  type: FieldType;
  size?: number;
}

/** Columns always appended after the scenario's fields, in this order. */
export const TRACKING_FIELDS = [
  { name: "gen", type: "int" }, // generator id (0..n-1) within the run
  { name: "seq", type: "int" }, // unique per generator, 0,1,2,... in send order
  { name: "sent_at", type: "timestamp" }, // wall-clock time the batch was handed to the transport
] as const;
