// The state resolution entry point: identical sets need no events at all, the room version picks the
// algorithm, rejected events are dropped on every path, and the auth rules' signature checks have
// working defaults (third-party invites verified against the invite's public keys).
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { base64Unpadded } from "../../../src/domain/canonical-json.ts";
import { privateKeyFromSeed, rawPublicKey, signJson } from "../../../src/domain/signing.ts";
import { resolveState } from "../../../src/domain/state/resolve.ts";
import { getRoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { ALICE, EVELYN, EventSet, baseAuth, baseRoom } from "./fixtures.ts";

describe("resolveState", () => {
  it("returns agreeing sets without loading anything, and an empty state for no sets", async () => {
    const set = new EventSet("11");
    const base = baseRoom(set);
    const state = set.state(...base);
    const resolved = await set.resolve([state, new Map(state), state]);
    expect(resolved).toEqual(state);
    expect(set.calls).toEqual([]);
    expect(await resolveState({ version: getRoomVersion("11")!, stateSets: [], loadEvents: set.loader() })).toEqual(new Map());
  });

  it("drops rejected events even when every set agrees", async () => {
    const set = new EventSet("11");
    const base = baseRoom(set);
    set.add({ name: "T", sender: ALICE, type: "m.room.topic", stateKey: "", content: {}, auth: baseAuth(ALICE) });
    const state = set.state(...base, "T");
    const resolved = await set.resolve([state, state], { isRejected: (id) => id === set.id("T") });
    expect(resolved.has("m.room.topic\u0000")).toBe(false);
    expect(resolved.size).toBe(state.size - 1);
  });

  it.each(["1", "2", "11", "12"])("v%s: a third-party invite is checked against the invite's public key by default", async (version) => {
    const set = new EventSet(version);
    const base = baseRoom(set);
    const key = { keyId: "ed25519:0", privateKey: privateKeyFromSeed(randomBytes(32)) };
    const other = { keyId: "ed25519:0", privateKey: privateKeyFromSeed(randomBytes(32)) };
    set.add({
      name: "TPI",
      sender: ALICE,
      type: "m.room.third_party_invite",
      stateKey: "tok",
      content: { display_name: "e…", key_validity_url: "https://id.example/check", public_key: base64Unpadded(rawPublicKey(key.privateKey)) },
      auth: baseAuth(ALICE),
    });
    const invite = (name: string, signer: typeof key) =>
      set.add({
        name,
        sender: ALICE,
        type: "m.room.member",
        stateKey: EVELYN,
        content: { membership: "invite", third_party_invite: { display_name: "e…", signed: signJson({ mxid: EVELYN, token: "tok" }, "id.example", signer) } },
        auth: [...baseAuth(ALICE), "IJR", "TPI"],
      });
    invite("GOOD", key);
    invite("FORGED", other);
    const without = set.state(...base, "TPI");
    const good = await set.resolve([without, set.state(...base, "TPI", "GOOD")]);
    const forged = await set.resolve([without, set.state(...base, "TPI", "FORGED")]);
    if (set.v.stateResolution === "v1") {
      // v1: a key only one set has is not in conflict and is not checked again.
      expect(set.nameOf(forged.get(`m.room.member\u0000${EVELYN}`)!)).toBe("FORGED");
    } else {
      expect(forged.has(`m.room.member\u0000${EVELYN}`)).toBe(false);
    }
    expect(set.nameOf(good.get(`m.room.member\u0000${EVELYN}`)!)).toBe("GOOD");
    // Conflicting with each other, only the validly signed invite can win (both versions check it).
    const both = await set.resolve([set.state(...base, "TPI", "GOOD"), set.state(...base, "TPI", "FORGED")]);
    expect(set.nameOf(both.get(`m.room.member\u0000${EVELYN}`)!)).toBe("GOOD");
  });
});
