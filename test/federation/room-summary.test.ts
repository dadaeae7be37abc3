// Room summaries of rooms this server is not in (GET /_matrix/client/v1/room_summary with `via`, or a
// remote alias), between two Weft servers over TLS on SQLite and PostgreSQL: asked over federation
// (GET /hierarchy), shown when the requester may see the room, else a 404.
import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import type { Session } from "../helpers/users.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { createRoom } from "../helpers/rooms.ts";

const enc = encodeURIComponent;

describe.each(backends())("remote room summaries on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let pair: ServerPair;
  beforeAll(async () => {
    pair = await startServerPair(backend);
    ({ a, b, alice, bob } = pair);
  });
  afterAll(() => pair?.close());
  const summaryOnB = (idOrAlias: string, via: string[] = []) =>
    b.call("GET", `/_matrix/client/v1/room_summary/${enc(idOrAlias)}${via.length ? `?${via.map((v) => `via=${enc(v)}`).join("&")}` : ""}`, { token: bob.access_token });

  it("a public room of another server, through via or its alias; a private one is not found", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Over there", room_alias_name: "there" });
    const viaA = await summaryOnB(roomId, [a.serverName]);
    expect(viaA.status, JSON.stringify(viaA.json)).toBe(200);
    expect(viaA.json).toMatchObject({ room_id: roomId, name: "Over there", join_rule: "public", num_joined_members: 1, membership: "leave" });
    expect(viaA.json).not.toHaveProperty("children_state");
    const byAlias = await summaryOnB(`#there:${a.serverName}`);
    expect([byAlias.status, byAlias.json.room_id], JSON.stringify(byAlias.json)).toEqual([200, roomId]);
    const noVia = await summaryOnB(roomId);
    expect([noVia.status, noVia.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);

    const secret = await createRoom(a, alice, { preset: "private_chat", name: "Secret" });
    const hidden = await summaryOnB(secret, [a.serverName]);
    expect([hidden.status, hidden.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });
});
