/** Component catalog: every deployable sink and collector, by the name scenarios use. */
import { postgres } from "./postgres.ts";
import type { ComponentFactory } from "./types.ts";

export const components: Record<string, ComponentFactory<any>> = {
  [postgres.name]: postgres,
};
