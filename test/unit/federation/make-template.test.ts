// The joining side of make_join / make_leave / make_knock (domain/federation/membership/handshake.ts): the
// event is completed from the resident server's template with our own timestamp, so a template without
// origin_server_ts (Complement's federation server sends none) still makes a valid, signed join; the
// template's depth, prev_events and auth_events are kept.
import { describe, expect, it } from "vitest";
import { makeAndSign } from "../../../src/domain/federation/membership/handshake.ts";
import { generateSigningKey } from "../../../src/domain/signing-key.ts";
import { eventIdOf } from "../../../src/domain/events/hashes.ts";
import type { Services } from "../../../src/domain/services.ts";

const ROOM = "!room:remote.example";
const USER = "@alice:weft.example";

function servicesAnswering(template: Record<string, unknown>, now: number): Services {
  return {
    config: { server_name: "weft.example" },
    signingKeys: [generateSigningKey()],
    clock: { now: () => now },
    federation: { getJson: async () => ({ room_version: "10", event: template }) },
  } as unknown as Services;
}

const template = (extra: Record<string, unknown> = {}) => ({
  room_id: ROOM,
  sender: USER,
  state_key: USER,
  type: "m.room.member",
  content: { membership: "join" },
  depth: 7,
  prev_events: ["$prev"],
  auth_events: ["$create", "$power", "$rules"],
  ...extra,
});

describe("completing a make_join template", () => {
  it("stamps the event with our clock when the template has no origin_server_ts", async () => {
    const { built } = await makeAndSign(servicesAnswering(template(), 1_700_000_123_456), "remote.example", ROOM, USER, "join", { displayname: "Alice" });
    expect(built.pdu.origin_server_ts).toBe(1_700_000_123_456);
    expect([built.pdu.depth, built.pdu.prev_events, built.pdu.auth_events]).toEqual([7, ["$prev"], ["$create", "$power", "$rules"]]);
    expect(built.pdu.content).toEqual({ displayname: "Alice", membership: "join" });
    expect(Object.keys(built.pdu.signatures)).toEqual(["weft.example"]);
    expect(built.eventId).toBe(eventIdOf(built.pdu, "10"));
  });

  it("uses our clock over the template's timestamp too", async () => {
    const { built } = await makeAndSign(servicesAnswering(template({ origin_server_ts: 5 }), 1_700_000_000_000), "remote.example", ROOM, USER, "join", {});
    expect(built.pdu.origin_server_ts).toBe(1_700_000_000_000);
  });

  it("still refuses a template without a depth", async () => {
    const { depth: _d, ...noDepth } = template();
    await expect(makeAndSign(servicesAnswering(noDepth, 1), "remote.example", ROOM, USER, "join", {})).rejects.toThrow(/depth is not an integer/);
  });
});
