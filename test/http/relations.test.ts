// Relations over HTTP on SQLite and PostgreSQL: GET /v1/rooms/{roomId}/relations in its three forms,
// paged both ways with tokens shared with /messages, recurse, history visibility and errors; a thread
// (root, replies from two users) aggregated in unsigned as /messages, /event and /context return it,
// /threads with both include filters; edits (latest valid edit by the original sender, the content
// kept), references, reactions not bundled, redacted relations dropping out.
import { beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import type { Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V1 = "/_matrix/client/v1";
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("relations on %s", (backend) => {
  const { t, users: { alice, bob, eve } } = withServer({ backend, users: ["alice", "bob", "eve"] });
  let txn = 0;

  async function send(who: Session, roomId: string, content: Record<string, unknown>, type = "m.room.message"): Promise<string> {
    const p = `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/t${++txn}`;
    const res = await t.call("PUT", p, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }
  const text = (body: string, rel?: Record<string, unknown>) => ({ msgtype: "m.text", body, ...(rel ? { "m.relates_to": rel } : {}) });
  const inThread = (root: string, body: string) => text(body, { rel_type: "m.thread", event_id: root, is_falling_back: true, "m.in_reply_to": { event_id: root } });

  async function join(who: Session, roomId: string) {
    const res = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }

  function relPath(roomId: string, eventId: string, relType?: string, eventType?: string, query = "") {
    let p = `${V1}/rooms/${enc(roomId)}/relations/${enc(eventId)}`;
    if (relType !== undefined) p += `/${enc(relType)}`;
    if (eventType !== undefined) p += `/${enc(eventType)}`;
    return p + query;
  }

  async function relations(who: Session, roomId: string, eventId: string, relType?: string, eventType?: string, query = "") {
    const p = relPath(roomId, eventId, relType, eventType, query);
    const res = await t.call("GET", p, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", p.split("?")[0]!);
    return res.json;
  }

  function expectError(res: { status: number; json: any }, status: number, errcode: string) {
    expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
  }

  describe("GET /relations", () => {
    let roomId: string;
    let parent: string;
    const refs: string[] = [];
    let reaction: string;
    let nested: string;

    beforeAll(async () => {
      roomId = await createRoom(t, alice, { preset: "public_chat" });
      await join(bob, roomId);
      parent = await send(alice, roomId, text("parent"));
      for (let i = 0; i < 7; i++) refs.push(await send(i % 2 ? bob : alice, roomId, text(`ref ${i}`, { rel_type: "m.reference", event_id: parent })));
      reaction = await send(bob, roomId, { "m.relates_to": { rel_type: "m.annotation", event_id: parent, key: "👍" } }, "m.reaction");
      nested = await send(bob, roomId, { "m.relates_to": { rel_type: "m.annotation", event_id: refs[0], key: "🎉" } }, "m.reaction");
      // A reply without rel_type is no relation; neither is a malformed m.relates_to.
      await send(bob, roomId, text("reply", { "m.in_reply_to": { event_id: parent } }));
      await send(bob, roomId, text("bad", { rel_type: 5, event_id: parent }));
    });

    it("lists direct relations newest first by default (limit 5), with next_batch", async () => {
      const res = await relations(alice, roomId, parent);
      expect(res.chunk.map((e: any) => e.event_id)).toEqual([reaction, ...refs.slice(-4).reverse()]);
      expect(typeof res.next_batch).toBe("string");
      expect(res.prev_batch).toBeUndefined();
      expect(res.recursion_depth).toBeUndefined();
      const rest = await relations(alice, roomId, parent, undefined, undefined, `?from=${enc(res.next_batch)}`);
      expect(rest.chunk.map((e: any) => e.event_id)).toEqual(refs.slice(0, 3).reverse());
      expect(rest.next_batch).toBeUndefined();
      expect(rest.prev_batch).toBe(res.next_batch);
    });

    it("filters by relation type and by event type, paging forwards and backwards", async () => {
      const all: string[] = [];
      let from: string | undefined;
      for (let i = 0; i < 10; i++) {
        const res = await relations(alice, roomId, parent, "m.reference", undefined, `?dir=f&limit=3${from ? `&from=${enc(from)}` : ""}`);
        all.push(...res.chunk.map((e: any) => e.event_id));
        for (const e of res.chunk) expect(e.content["m.relates_to"].rel_type).toBe("m.reference");
        from = res.next_batch;
        if (!from) break;
      }
      expect(all).toEqual(refs);
      const back: string[] = [];
      from = undefined;
      for (let i = 0; i < 10; i++) {
        const res = await relations(alice, roomId, parent, "m.reference", "m.room.message", `?limit=2${from ? `&from=${enc(from)}` : ""}`);
        back.push(...res.chunk.map((e: any) => e.event_id));
        from = res.next_batch;
        if (!from) break;
      }
      expect(back).toEqual([...refs].reverse());
      const reactions = await relations(alice, roomId, parent, "m.annotation", "m.reaction");
      expect(reactions.chunk.map((e: any) => e.event_id)).toEqual([reaction]);
      expect((await relations(alice, roomId, parent, "m.annotation", "m.room.message")).chunk).toEqual([]);
    });

    it("takes /messages tokens as from and to", async () => {
      const msgs = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=1`, { token: alice.access_token });
      expect(msgs.status).toBe(200);
      const res = await relations(alice, roomId, parent, "m.reference", undefined, `?from=${enc(msgs.json.start)}&limit=100`);
      expect(res.chunk).toHaveLength(7);
      // `to` stops the walk: from the newest down to (not including) the position of refs[2].
      const mid = await relations(alice, roomId, parent, "m.reference", undefined, `?dir=f&limit=2`);
      const bounded = await relations(alice, roomId, parent, "m.reference", undefined, `?dir=b&to=${enc(mid.next_batch)}&limit=100`);
      expect(bounded.chunk.map((e: any) => e.event_id)).toEqual(refs.slice(2).reverse());
    });

    it("recurse follows relations of relations and reports the depth", async () => {
      const direct = await relations(alice, roomId, parent, "m.annotation", undefined, "?recurse=false");
      expect(direct.chunk.map((e: any) => e.event_id)).toEqual([reaction]);
      expect(direct.recursion_depth).toBe(1);
      const deep = await relations(alice, roomId, parent, "m.annotation", undefined, "?recurse=true");
      expect(deep.chunk.map((e: any) => e.event_id)).toEqual([nested, reaction]);
      expect(deep.recursion_depth).toBe(3);
      const all = await relations(alice, roomId, parent, undefined, undefined, "?recurse=true&limit=100&dir=f");
      expect(all.chunk.map((e: any) => e.event_id)).toEqual([...refs, reaction, nested]);
    });

    it("drops redacted relations", async () => {
      const extra = await send(bob, roomId, text("to redact", { rel_type: "m.reference", event_id: parent }));
      expect((await relations(alice, roomId, parent, "m.reference", undefined, "?limit=1")).chunk[0].event_id).toBe(extra);
      const r = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(extra)}/t${++txn}`, { token: bob.access_token, body: {} });
      expect(r.status).toBe(200);
      expect((await relations(alice, roomId, parent, "m.reference", undefined, "?limit=1")).chunk[0].event_id).toBe(refs[6]);
    });

    it("is served under v1 only", async () => {
      const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/relations/${enc(parent)}`, { token: alice.access_token });
      expect(res.status).toBe(404);
      expect(res.json.errcode).toBe("M_UNRECOGNIZED");
    });

    it("refuses unknown or invisible parents and bad parameters", async () => {
      expectError(await t.call("GET", relPath(roomId, "$nope"), { token: alice.access_token }), 404, "M_NOT_FOUND");
      expectError(await t.call("GET", relPath("!nope:weft.test", parent), { token: alice.access_token }), 404, "M_NOT_FOUND");
      // eve is not in the room (shared history): the parent is not visible to her.
      expectError(await t.call("GET", relPath(roomId, parent), { token: eve.access_token }), 404, "M_NOT_FOUND");
      // An event of another room under this room's path.
      const other = await createRoom(t, alice);
      const elsewhere = await send(alice, other, text("elsewhere"));
      expectError(await t.call("GET", relPath(roomId, elsewhere), { token: alice.access_token }), 404, "M_NOT_FOUND");
      expectError(await t.call("GET", relPath(roomId, parent, undefined, undefined, "?dir=x"), { token: alice.access_token }), 400, "M_INVALID_PARAM");
      expectError(await t.call("GET", relPath(roomId, parent, undefined, undefined, "?from=garbage"), { token: alice.access_token }), 400, "M_INVALID_PARAM");
      expectError(await t.call("GET", relPath(roomId, parent, undefined, undefined, "?limit=abc"), { token: alice.access_token }), 400, "M_INVALID_PARAM");
      expectError(await t.call("GET", relPath(roomId, parent, undefined, undefined, "?recurse=maybe"), { token: alice.access_token }), 400, "M_INVALID_PARAM");
      expectError(await t.call("GET", relPath(roomId, parent)), 401, "M_MISSING_TOKEN");
    });

    it("applies history visibility to the parent for a later joiner (joined visibility)", async () => {
      const room = await createRoom(t, alice, { preset: "public_chat", initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "joined" } }] });
      const early = await send(alice, room, text("before eve"));
      await join(eve, room);
      const later = await send(alice, room, text("after eve"));
      await send(alice, room, text("ref", { rel_type: "m.reference", event_id: later }));
      expectError(await t.call("GET", relPath(room, early), { token: eve.access_token }), 404, "M_NOT_FOUND");
      expect((await relations(eve, room, later)).chunk).toHaveLength(1);
    });
  });

  describe("threads", () => {
    let roomId: string;
    let root: string;
    let other: string;
    let lastReply: string;

    beforeAll(async () => {
      roomId = await createRoom(t, alice, { preset: "public_chat" });
      await join(bob, roomId);
      await join(eve, roomId);
      root = await send(alice, roomId, text("root"));
      await send(alice, roomId, inThread(root, "first"));
      other = await send(eve, roomId, text("another root"));
      await send(eve, roomId, inThread(other, "eve's thread reply"));
      lastReply = await send(bob, roomId, inThread(root, "second"));
    });

    function expectThread(e: any, count: number, latest: string, participated: boolean) {
      const th = e.unsigned?.["m.relations"]?.["m.thread"];
      expect(th, JSON.stringify(e)).toBeDefined();
      expect(th.count).toBe(count);
      expect(th.current_user_participated).toBe(participated);
      expect(th.latest_event.event_id).toBe(latest);
      expect(th.latest_event.room_id).toBe(roomId);
      expect(th.latest_event.content.body).toBe("second");
      expect(th.latest_event.sender).toBe(bob.user_id);
      expect(typeof th.latest_event.origin_server_ts).toBe("number");
    }

    it("aggregates the thread in the root's unsigned: /event, /messages, /context", async () => {
      const p = `${V3}/rooms/${enc(roomId)}/event/${enc(root)}`;
      const ev = await t.call("GET", p, { token: alice.access_token });
      expect(ev.status).toBe(200);
      expectMatchesSpec(ev, "GET", p);
      expectThread(ev.json, 2, lastReply, true);
      expect(ev.json.content.body).toBe("root");

      const mp = `${V3}/rooms/${enc(roomId)}/messages`;
      const msgs = await t.call("GET", `${mp}?dir=b&limit=20`, { token: bob.access_token });
      expect(msgs.status).toBe(200);
      expectMatchesSpec(msgs, "GET", mp);
      const inMsgs = msgs.json.chunk.find((e: any) => e.event_id === root);
      expectThread(inMsgs, 2, lastReply, true);
      // A thread reply gets no thread summary of its own.
      expect(msgs.json.chunk.find((e: any) => e.event_id === lastReply).unsigned["m.relations"]).toBeUndefined();

      const cp = `${V3}/rooms/${enc(roomId)}/context/${enc(root)}`;
      const ctx = await t.call("GET", `${cp}?limit=2`, { token: eve.access_token });
      expect(ctx.status).toBe(200);
      expectMatchesSpec(ctx, "GET", cp);
      expectThread(ctx.json.event, 2, lastReply, false);
    });

    it("lists threads by latest activity, all and participated, with paging", async () => {
      const p = `${V1}/rooms/${enc(roomId)}/threads`;
      const all = await t.call("GET", p, { token: eve.access_token });
      expect(all.status, JSON.stringify(all.json)).toBe(200);
      expectMatchesSpec(all, "GET", p);
      expect(all.json.chunk.map((e: any) => e.event_id)).toEqual([root, other]);
      expectThread(all.json.chunk[0], 2, lastReply, false);
      expect(all.json.chunk[1].unsigned["m.relations"]["m.thread"].current_user_participated).toBe(true);
      expect(all.json.next_batch).toBeUndefined();

      const page1 = await t.call("GET", `${p}?limit=1`, { token: eve.access_token });
      expect(page1.json.chunk.map((e: any) => e.event_id)).toEqual([root]);
      const page2 = await t.call("GET", `${p}?limit=1&from=${enc(page1.json.next_batch)}`, { token: eve.access_token });
      expectMatchesSpec(page2, "GET", p);
      expect(page2.json.chunk.map((e: any) => e.event_id)).toEqual([other]);
      expect(page2.json.next_batch).toBeUndefined();

      const mine = async (who: Session) => (await t.call("GET", `${p}?include=participated`, { token: who.access_token })).json.chunk.map((e: any) => e.event_id);
      expect(await mine(eve)).toEqual([other]);
      expect(await mine(bob)).toEqual([root]); // replied in it
      expect(await mine(alice)).toEqual([root]); // started it

      // New activity moves a thread to the top.
      await send(eve, roomId, inThread(other, "bump"));
      expect((await t.call("GET", p, { token: alice.access_token })).json.chunk.map((e: any) => e.event_id)).toEqual([other, root]);
    });

    it("refuses bad parameters and outsiders", async () => {
      const p = `${V1}/rooms/${enc(roomId)}/threads`;
      expectError(await t.call("GET", `${p}?include=some`, { token: alice.access_token }), 400, "M_INVALID_PARAM");
      expectError(await t.call("GET", `${p}?limit=0`, { token: alice.access_token }), 400, "M_INVALID_PARAM");
      expectError(await t.call("GET", `${p}?from=xyz`, { token: alice.access_token }), 400, "M_INVALID_PARAM");
      const priv = await createRoom(t, alice);
      expectError(await t.call("GET", `${V1}/rooms/${enc(priv)}/threads`, { token: bob.access_token }), 403, "M_FORBIDDEN");
    });
  });

  describe("edits and references", () => {
    it("bundles the latest valid edit, keeping the original content; reactions are not bundled", async () => {
      const roomId = await createRoom(t, alice, { preset: "public_chat" });
      await join(bob, roomId);
      const original = await send(alice, roomId, text("original"));
      const edit = (body: string) => ({ msgtype: "m.text", body: `* ${body}`, "m.new_content": { msgtype: "m.text", body }, "m.relates_to": { rel_type: "m.replace", event_id: original } });
      await send(alice, roomId, edit("first edit"));
      const latest = await send(alice, roomId, edit("second edit"));
      await send(bob, roomId, edit("not bob's to edit")); // another sender: ignored
      await send(alice, roomId, edit("wrong type"), "m.custom.type"); // another type: ignored
      await send(bob, roomId, { "m.relates_to": { rel_type: "m.annotation", event_id: original, key: "👍" } }, "m.reaction");
      const ref = await send(bob, roomId, text("see above", { rel_type: "m.reference", event_id: original }));

      const p = `${V3}/rooms/${enc(roomId)}/event/${enc(original)}`;
      const res = await t.call("GET", p, { token: bob.access_token });
      expect(res.status).toBe(200);
      expectMatchesSpec(res, "GET", p);
      expect(res.json.content.body).toBe("original");
      const rels = res.json.unsigned["m.relations"];
      const latestEvent = (await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(latest)}`, { token: bob.access_token })).json;
      expect(rels["m.replace"]).toEqual({ event_id: latest, origin_server_ts: latestEvent.origin_server_ts, sender: alice.user_id });
      expect(rels["m.reference"]).toEqual({ chunk: [{ event_id: ref }] });
      expect(rels["m.annotation"]).toBeUndefined();
      // An edit itself carries no aggregations.
      expect(latestEvent.unsigned["m.relations"]).toBeUndefined();

      // Redacting the latest edit falls back to the one before; redacting the original drops the edit.
      const r = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(latest)}/t${++txn}`, { token: alice.access_token, body: {} });
      expect(r.status).toBe(200);
      const after = (await t.call("GET", p, { token: bob.access_token })).json;
      expect(after.unsigned["m.relations"]["m.replace"].event_id).not.toBe(latest);
      expect(after.unsigned["m.relations"]["m.replace"].sender).toBe(alice.user_id);
      const r2 = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(original)}/t${++txn}`, { token: alice.access_token, body: {} });
      expect(r2.status).toBe(200);
      const redacted = (await t.call("GET", p, { token: bob.access_token })).json;
      expect(redacted.unsigned.redacted_because).toBeDefined();
      expect(redacted.unsigned["m.relations"]?.["m.replace"]).toBeUndefined();
    });
  });
});
