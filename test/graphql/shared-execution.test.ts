// Which subscription operations may share one execution among subscribers (src/graphql/shared-execution.ts):
// the same text, operation name and variables share; an operation selecting a field whose resolver reads
// the viewer (Event.relations, found in type-graphql's metadata) never does. The delivery side — every
// subscriber still gets its own transaction id and visibility — is tested over graphql-ws in sync.test.ts.
import { buildSchema, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { buildWeftSchema } from "../../src/graphql/schema.ts";
import { operationKey, viewerDependentFields } from "../../src/graphql/shared-execution.ts";

const PLAIN = `subscription ($roomId: String!, $since: String, $withBody: Boolean!) {
  roomTimeline(roomId: $roomId, since: $since) { cursor event { eventId body @include(if: $withBody) transactionId thread { count } } }
}`;
const WITH_RELATIONS = `subscription ($roomId: String!) { roomTimeline(roomId: $roomId) { cursor event { eventId ...R } } }
fragment R on Event { relations(first: 5) { edges { node { eventId } } } }`;

describe("shared subscription execution", () => {
  it("finds the viewer-dependent fields in the resolvers' metadata", async () => {
    await buildWeftSchema();
    const fields = viewerDependentFields();
    expect(fields.has("Event.relations")).toBe(true);
    expect(fields.has("Viewer.rooms")).toBe(true);
    // Fields read from the payload alone are not among them.
    for (const f of ["Event.body", "Event.transactionId", "Event.thread", "TimelineUpdate.cursor"]) expect(fields.has(f)).toBe(false);
  });

  it("keys operations by text, name and variables; none for one selecting a viewer-dependent field", async () => {
    const schema = await buildWeftSchema();
    const key = (text: string, variableValues: Record<string, unknown>) => operationKey({ schema, document: parse(text), variableValues });
    const a = key(PLAIN, { roomId: "!a:x", since: "s1", withBody: true });
    expect(a).toBeDefined();
    // The root field's arguments choose the stream, not the shape of a payload: not part of the key.
    expect(key(PLAIN, { roomId: "!b:x", since: "s2", withBody: true })).toBe(a);
    // A variable used in the selection is.
    expect(key(PLAIN, { roomId: "!a:x", since: "s1", withBody: false })).not.toBe(a);
    expect(key(PLAIN.replace("transactionId ", ""), { roomId: "!a:x", since: "s1", withBody: true })).not.toBe(a);
    // A directive's argument on the root field is not the root field's own: it stays in the key.
    const ROOT_DIRECTIVE = `subscription ($roomId: String!, $on: Boolean!) { roomTimeline(roomId: $roomId) @include(if: $on) { cursor } }`;
    expect(key(ROOT_DIRECTIVE, { roomId: "!a:x", on: true })).not.toBe(key(ROOT_DIRECTIVE, { roomId: "!a:x", on: false }));
    expect(key(WITH_RELATIONS, { roomId: "!a:x" })).toBeUndefined();
  });

  it("a field resolver declared on an interface counts for every type implementing it", () => {
    const schema = buildSchema(`interface Named { name: String }\ntype Thing implements Named { name: String, size: Int }\ntype Query { q: Int }\ntype Subscription { things: Thing }`);
    const dependent = new Set(["Named.name"]);
    expect(operationKey({ schema, document: parse(`subscription { things { size } }`) }, dependent)).toBeDefined();
    expect(operationKey({ schema, document: parse(`subscription { things { size name } }`) }, dependent)).toBeUndefined();
  });
});
