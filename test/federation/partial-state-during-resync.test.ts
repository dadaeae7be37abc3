// A room joined with partial state while its resync is held back, Weft↔Weft over TLS with a stand-in
// server F whose users fill A's room (SQLite and PostgreSQL), as Synapse behaves: B's resync asks A for the
// state after its join's prev_event (/state_ids), never for /state at its own join; B does not send its
// join back to the room (A did); typing and receipts of F's users (one naming an event id B does not know)
// reach B's lazy-loading /sync; a message from an F user brings that user's member event into the
// lazy-loaded state; bob's device-list update reaches F (named by A's send_join answer) and his new display
// name reaches A; a second user of B joining goes through A with omit_members; once complete, the
// directory stats count every member, the user directory finds F's users, and bob's last leave is made
// on B.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { fillRoomWithMembers } from "../helpers/big-room.ts";
import { sendTransaction, signedCall } from "../helpers/by-hand.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { destinationsOfEvents } from "../../src/domain/federation/room-servers.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { buildEvent } from "../../src/domain/rooms/build-event.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const MEMBERS = 6;
const LAZY = enc(JSON.stringify({ room: { state: { lazy_load_members: true }, timeline: { lazy_load_members: true } } }));

describe.each(backends())("a room joined with partial state, during its resync, on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let f: FakeOrigin;
  let alice: Session;
  let bob: Session;
  /** What B asked of other servers: method, path and query. */
  const asked: { method: string; path: string; query?: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    f = await startFakeOrigin((req) => (req.path.startsWith("/_matrix/federation/v1/send/") ? { status: 200, json: { pdus: {} } } : undefined));
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), f?.close()]);
  });

  /** Records what B asks of other servers from now on (outermost: held requests are seen as they leave). */
  const recordRequests = () => {
    const fed = b.hs.services.federation;
    for (const method of ["getJson", "putJson", "postJson"] as const) {
      const original = (fed[method] as (...x: unknown[]) => Promise<unknown>).bind(fed);
      (fed as unknown as Record<string, unknown>)[method] = (dest: string, path: string, ...rest: unknown[]) => {
        // getJson(dest, path, query, opts); putJson / postJson(dest, path, body, opts), opts.query.
        const query = method === "getJson" ? rest[0] : (rest[1] as { query?: unknown } | undefined)?.query;
        asked.push({ method, path: decodeURIComponent(path), query: query as Record<string, unknown> | undefined });
        return original(dest, path, ...rest);
      };
    }
  };

  const lazySync = async (token: string, since?: string) => {
    const res = await b.call("GET", `${V3}/sync?timeout=0&filter=${LAZY}${since ? `&since=${enc(since)}` : ""}`, { token });
    expect(res.status).toBe(200);
    return res.json;
  };

  it("resyncs through /state_ids at the join's prev_event; EDUs, lazy members and device lists flow meanwhile", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Resyncing", room_version: "10" });
    const members = await fillRoomWithMembers(a.hs.services, roomId, f, MEMBERS);
    // F answers /event_auth for its events as A has their auth chains.
    const fEdus: { edu_type: string; content: any }[] = [];
    f.handler = async (req) => {
      if (req.path.startsWith("/_matrix/federation/v1/send/")) {
        fEdus.push(...(((req.body as { edus?: unknown[] }).edus ?? []) as { edu_type: string; content: any }[]));
        return { status: 200, json: { pdus: {} } };
      }
      // F's events cite its users' joins: their auth chains are the joins' own, and the joins.
      if (req.path.startsWith("/_matrix/federation/v1/event_auth/")) {
        const joins = await a.hs.services.rooms.events.getMany((await loadRoom(a.hs.services, roomId))!.state.values());
        const chain = [...joins.values()].filter((e) => e.pdu.type === "m.room.member" && members.includes(e.pdu.state_key!));
        const rest = await signedCall(f, a, "GET", `/_matrix/federation/v1/event_auth/${enc(roomId)}/${enc(chain[0]!.eventId)}`);
        return { status: 200, json: { auth_chain: [...chain.map((e) => e.pdu), ...rest.json.auth_chain] } };
      }
      return undefined;
    };

    const hold = holdStateFetches(b.hs.services);
    recordRequests();
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);
    await eventually(() => hold.held() > 0, "B's resync asking A for the state");

    // The state after the join's prev_event, as Synapse asks for it; never /state at our own join.
    const joinId = (await loadRoom(b.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", bob.user_id))!;
    const join = (await b.hs.services.rooms.events.get(joinId))!;
    const [prev] = join.pdu.prev_events as string[];
    expect(asked).toContainEqual({ method: "getJson", path: `/_matrix/federation/v1/state_ids/${roomId}`, query: { event_id: prev } });
    expect(asked.some((r) => r.path.startsWith("/_matrix/federation/v1/state/") && r.query?.event_id === joinId)).toBe(false);
    // A completed our join and sends it to the room: B does not send it again.
    expect(await destinationsOfEvents(b.hs.services, [join])).toEqual(new Map());

    // Typing and a receipt of one of F's users (a server A's answer named) reach bob's lazy-loading sync.
    const since = (await lazySync(bob.access_token)).next_batch as string;
    const typist = members[0]!;
    const edus = [
      { edu_type: "m.typing", content: { room_id: roomId, user_id: typist, typing: true } },
      // A receipt naming an event id B does not know (of any form) is taken as given, as Synapse does.
      { edu_type: "m.receipt", content: { [roomId]: { "m.read": { [typist]: { event_ids: [joinId], data: { ts: 1234 } }, [members[1]!]: { event_ids: ["mytesteventid"], data: { ts: 5678 } } } } } },
    ];
    expect((await sendTransaction(f, b, [], edus)).status).toBe(200);
    const ephemeral = await eventually(async () => {
      const events = ((await lazySync(bob.access_token, since)).rooms?.join?.[roomId]?.ephemeral?.events ?? []) as { type: string; content: any }[];
      const typing = events.find((e) => e.type === "m.typing")?.content.user_ids;
      const receipts = events.find((e) => e.type === "m.receipt")?.content;
      const receipt = receipts?.[joinId]?.["m.read"]?.[typist];
      const odd = receipts?.mytesteventid?.["m.read"]?.[members[1]!];
      return typing?.includes(typist) && receipt && odd ? { typing, receipt, odd } : undefined;
    }, "F's typing and receipts on B");
    expect([ephemeral.receipt.ts, ephemeral.odd.ts]).toEqual([1234, 5678]);

    // A message of another F user, whose membership B's partial state lacks: the lazy-loading sync gives
    // the member event the message cites as auth event.
    const speaker = members[3]!;
    const room = (await loadRoom(b.hs.services, roomId))!;
    const speakerJoin = (await loadRoom(a.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", speaker))!;
    expect(room.state.has(stateKeyOf("m.room.member", speaker))).toBe(false);
    const lookup = async (id: string) => (await b.hs.services.rooms.events.get(id))?.pdu ?? (await a.hs.services.rooms.events.get(id))?.pdu;
    const ctx = { roomId, version: room.version, state: new Map(room.state).set(stateKeyOf("m.room.member", speaker), speakerJoin), extremities: room.extremities, maxDepth: room.maxDepth, lookup };
    const msg = await buildEvent(b.hs.services, ctx, { type: "m.room.message", sender: speaker, content: { msgtype: "m.text", body: "hi" } }, Date.now(), f);
    const sent = await sendTransaction(f, b, [msg.pdu]);
    expect([sent.status, sent.json.pdus?.[msg.eventId]], JSON.stringify(sent.json)).toEqual([200, {}]);
    const shown = (await lazySync(bob.access_token)).rooms.join[roomId];
    expect(shown.timeline.events.map((e: { event_id: string }) => e.event_id)).toContain(msg.eventId);
    expect(shown.state.events.find((e: { type: string; state_key: string }) => e.type === "m.room.member" && e.state_key === speaker)?.event_id).toBe(speakerJoin);

    // Bob renames his device: F, in the room by A's answer, hears of it.
    const devices = await b.call("GET", `${V3}/devices`, { token: bob.access_token });
    const deviceId = devices.json.devices[0].device_id as string;
    expect((await b.call("PUT", `${V3}/devices/${enc(deviceId)}`, { token: bob.access_token, body: { display_name: "renamed" } })).status).toBe(200);
    await eventually(() => fEdus.some((e) => e.edu_type === "m.device_list_update" && e.content.user_id === bob.user_id) || undefined, "bob's device-list update reaching F");

    // Bob changes his display name: his new member event (a join replacing his join) is B's to send, and
    // reaches A at once (as Synapse; only bob's first join went out through A's send_join).
    expect((await b.call("PUT", `${V3}/profile/${enc(bob.user_id)}/displayname`, { token: bob.access_token, body: { displayname: "Bob Two" } })).status).toBe(200);
    await eventually(async () => {
      const room = await loadRoom(a.hs.services, roomId);
      const id = room?.state.get(stateKeyOf("m.room.member", bob.user_id));
      const e = id ? await a.hs.services.rooms.events.get(id) : undefined;
      return (e?.pdu.content as { displayname?: string } | undefined)?.displayname === "Bob Two" || undefined;
    }, "bob's new display name on A");
    const renamed = (await loadRoom(b.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", bob.user_id))!;
    expect(renamed).not.toBe(joinId);

    // A second user of B joins while partial: through A, asking for partial state again (as Synapse).
    const carol = await registerUser(b, "carol");
    asked.length = 0;
    const second = await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: carol.access_token, body: {} });
    expect(second.status, JSON.stringify(second.json)).toBe(200);
    expect(asked.find((r) => r.path.startsWith("/_matrix/federation/v2/send_join/"))?.query).toEqual({ omit_members: "true" });
    await eventually(async () => (await a.hs.services.rooms.store.membership(roomId, carol.user_id))?.membership === "join" || undefined, "carol's join on A");
    // Carol's join keeps the members B knew (bob's among them).
    const carolJoin = (await loadRoom(b.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", carol.user_id))!;
    const atCarol = await b.hs.services.rooms.stateGroups.get((await b.hs.services.rooms.events.get(carolJoin))!.stateGroup!);
    expect(atCarol.get(stateKeyOf("m.room.member", bob.user_id))).toBe(renamed);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);

    // The user directory: an F user B does not know is in the room yet is not found; once complete, is.
    const bState = (await loadRoom(b.hs.services, roomId))!.state;
    const hidden = members.find((u) => !bState.has(stateKeyOf("m.room.member", u)))!;
    const search = async () => {
      const res = await b.call("POST", `${V3}/user_directory/search`, { token: bob.access_token, body: { search_term: hidden.slice(1, hidden.indexOf(":")) } });
      expect(res.status).toBe(200);
      return (res.json.results as { user_id: string }[]).map((r) => r.user_id);
    };
    expect(await search()).toEqual([]);

    hold.release();
    await eventually(async () => !(await isPartialState(b.hs.services, roomId)) || undefined, "B completing the room's state", 60_000);
    expect(await search()).toEqual([hidden]);
    // The directory's count of joined members follows the completed state.
    const stats = await b.hs.services.storage.sql.get<{ n: number | bigint }>(`SELECT joined_members AS n FROM room_directory_stats WHERE room_id = ?`, [roomId]);
    expect(Number(stats?.n)).toBe(MEMBERS + 3);

    // Bob, then carol, leave: leaves made on B (no make_leave), which A receives.
    asked.length = 0;
    for (const who of [bob, carol]) expect((await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: who.access_token, body: {} })).status).toBe(200);
    expect(asked.filter((r) => r.path.includes("make_leave"))).toEqual([]);
    await eventually(async () => (await a.hs.services.rooms.store.membership(roomId, carol.user_id))?.membership === "leave" || undefined, "carol's leave on A");
  }, 180_000);
});
