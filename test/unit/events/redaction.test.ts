// The redaction algorithm per room version: the spec's key lists for v1, v6, v8, v9 and v11 (v12 = v11).
import { describe, expect, it } from "vitest";
import { keptTopLevelKeys, redactContent, redactEvent, redactsOf } from "../../../src/domain/events/redaction.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";

const ALL = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"];
const upTo = (n: number) => ALL.filter((v) => Number(v) <= n);
const from = (n: number) => ALL.filter((v) => Number(v) >= n);

function pdu(type: string, content: Record<string, unknown>, extra: Record<string, unknown> = {}): Pdu {
  return {
    event_id: "$e:example.org",
    room_id: "!r:example.org",
    sender: "@u:example.org",
    type,
    state_key: "",
    content,
    origin_server_ts: 1,
    prev_events: [],
    auth_events: [],
    depth: 2,
    hashes: { sha256: "h" },
    signatures: { "example.org": { "ed25519:1": "s" } },
    unsigned: { age: 5, redacted_because: {} },
    origin: "example.org",
    membership: "join",
    prev_state: [],
    redacts: "$target:example.org",
    other_top_level: "dropped",
    ...extra,
  } as Pdu;
}

describe("top-level keys", () => {
  it.each(upTo(10))("v%s keeps origin, membership, prev_state; drops unsigned, redacts and unknown keys", (v) => {
    const r = redactEvent(pdu("m.room.message", { body: "x" }), v);
    expect(Object.keys(r).sort()).toEqual(
      [
        "auth_events",
        "content",
        "depth",
        "event_id",
        "hashes",
        "membership",
        "origin",
        "origin_server_ts",
        "prev_events",
        "prev_state",
        "room_id",
        "sender",
        "signatures",
        "state_key",
        "type",
      ].sort(),
    );
    expect(r.content).toEqual({});
  });

  it.each(from(11))("v%s no longer keeps origin, membership, prev_state", (v) => {
    const r = redactEvent(pdu("m.room.message", { body: "x" }), v);
    expect(r).not.toHaveProperty("origin");
    expect(r).not.toHaveProperty("membership");
    expect(r).not.toHaveProperty("prev_state");
    expect(r).not.toHaveProperty("unsigned");
    expect(r).not.toHaveProperty("redacts");
    expect(r).not.toHaveProperty("other_top_level");
    expect(r.hashes).toEqual({ sha256: "h" });
    expect(keptTopLevelKeys(v)).toHaveLength(12);
  });

  it("does not modify its input", () => {
    const e = pdu("m.room.power_levels", { users: { "@a:b": 1 }, ban: 50 });
    const copy = structuredClone(e);
    const r = redactEvent(e, "11");
    (r.content["users"] as Record<string, number>)["@a:b"] = 99;
    expect(e).toEqual(copy);
  });
});

describe("content kept per event type", () => {
  it.each(ALL)("v%s m.room.member", (v) => {
    const content = {
      membership: "join",
      displayname: "U",
      avatar_url: "mxc://x/y",
      join_authorised_via_users_server: "@a:example.org",
      third_party_invite: { display_name: "bob", signed: { mxid: "@u:example.org", token: "t", signatures: {} } },
    };
    const expected: Record<string, unknown> = { membership: "join" };
    if (Number(v) >= 9) expected["join_authorised_via_users_server"] = "@a:example.org";
    if (Number(v) >= 11) expected["third_party_invite"] = { signed: { mxid: "@u:example.org", token: "t", signatures: {} } };
    expect(redactContent("m.room.member", content, v)).toEqual(expected);
  });

  it("v11 keeps third_party_invite only with its signed key", () => {
    expect(redactContent("m.room.member", { membership: "invite", third_party_invite: { display_name: "x" } }, "11")).toEqual({
      membership: "invite",
    });
  });

  it.each(ALL)("v%s m.room.create", (v) => {
    const content = { creator: "@u:example.org", room_version: v, "m.federate": false, predecessor: { room_id: "!o:x" } };
    expect(redactContent("m.room.create", content, v)).toEqual(Number(v) >= 11 ? content : { creator: "@u:example.org" });
  });

  it.each(ALL)("v%s m.room.join_rules", (v) => {
    const content = { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: "!s:x" }], other: 1 };
    const expected: Record<string, unknown> = { join_rule: "restricted" };
    if (Number(v) >= 8) expected["allow"] = content.allow;
    expect(redactContent("m.room.join_rules", content, v)).toEqual(expected);
  });

  it.each(ALL)("v%s m.room.power_levels", (v) => {
    const content = {
      ban: 50,
      events: { "m.room.name": 50 },
      events_default: 0,
      invite: 0,
      kick: 50,
      redact: 50,
      state_default: 50,
      users: { "@u:example.org": 100 },
      users_default: 0,
      notifications: { room: 50 },
    };
    const { notifications: _n, invite: _i, ...withoutInvite } = content;
    const { notifications: _n2, ...withInvite } = content;
    expect(redactContent("m.room.power_levels", content, v)).toEqual(Number(v) >= 11 ? withInvite : withoutInvite);
  });

  it.each(ALL)("v%s m.room.history_visibility", (v) => {
    expect(redactContent("m.room.history_visibility", { history_visibility: "shared", x: 1 }, v)).toEqual({ history_visibility: "shared" });
  });

  it.each(ALL)("v%s m.room.aliases", (v) => {
    expect(redactContent("m.room.aliases", { aliases: ["#a:x"] }, v)).toEqual(Number(v) <= 5 ? { aliases: ["#a:x"] } : {});
  });

  it.each(ALL)("v%s m.room.redaction", (v) => {
    expect(redactContent("m.room.redaction", { redacts: "$x", reason: "spam" }, v)).toEqual(Number(v) >= 11 ? { redacts: "$x" } : {});
  });

  it.each(ALL)("v%s other types keep nothing", (v) => {
    expect(redactContent("m.room.topic", { topic: "x" }, v)).toEqual({});
    expect(redactContent("m.room.name", { name: "x" }, v)).toEqual({});
    expect(redactContent("m.room.encryption", { algorithm: "x" }, v)).toEqual({});
  });
});

describe("redactsOf", () => {
  it("reads the top-level field in v1–10 and content from v11", () => {
    const e = pdu("m.room.redaction", { redacts: "$in-content" }, { redacts: "$top-level" });
    for (const v of upTo(10)) expect(redactsOf(e, v)).toBe("$top-level");
    for (const v of from(11)) expect(redactsOf(e, v)).toBe("$in-content");
    expect(redactsOf(pdu("m.room.message", {}), "11")).toBeUndefined();
  });
});
