// Installs the relations capability into the event pipeline (the index, inside each commit) and into
// serialization (bundled aggregations). Called once at start-up by src/main.ts; idempotent.
import { persistHooks } from "../rooms/persist.ts";
import { unsignedHooks } from "../rooms/serialize.ts";
import { indexRelations } from "./index-hook.ts";
import { bundleAggregations } from "./aggregations.ts";

export function installRelations(): void {
  if (!persistHooks.includes(indexRelations)) persistHooks.push(indexRelations);
  if (!unsignedHooks.includes(bundleAggregations)) unsignedHooks.push(bundleAggregations);
}
