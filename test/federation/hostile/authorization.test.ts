// Hostile servers, authorization and soft failure (issue 40): a joined hostile server (hostile-server.ts)
// sends correctly signed events the auth rules must refuse — power-level escalation, bans and kicks of
// higher-power users, join rules / server ACL / encryption / history visibility changed without power,
// joins to invite-only rooms, restricted joins authorised by a user who may not invite, state from
// non-members, wrong, missing, duplicated, superfluous and rejected auth_events — and events that pass at
// their prev_events but fail at current state (soft failure: current state unchanged, never sent live to
// clients nor pushed, never a prev_event of a local event). Each judged by what alice, a local member,
// sees afterwards. SQLite and PostgreSQL, one Weft server per backend, a fresh room per attack.
import { describe, expect, it } from "vitest";
import { backends } from "../../helpers/server.ts";
import { createRoom } from "../../helpers/rooms.ts";
import { hostileFixture, liveUntilSentinel, memberView, membershipOf, notifiedIds, powerOf, refusalLines } from "../../helpers/hostile-server.ts";
import { stateKeyOf } from "../../../src/domain/store/state-groups.ts";
import { prevEventIds, type Pdu } from "../../../src/domain/events/types.ts";
import type { EventDraft } from "../../../src/domain/rooms/build-event.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("authorization of a hostile server's events on %s", (backend) => {
  const f = hostileFixture(backend);
  const { log } = f;

  /** A room of alice's (power 100) that mallory of the hostile server joined (power 0). */
  async function room(body: Record<string, unknown> = {}): Promise<string> {
    const roomId = await createRoom(f.a, f.alice, { preset: "public_chat", room_version: "10", ...body });
    await f.h.join(roomId, "mallory");
    return roomId;
  }
  const view = (roomId: string) => memberView(f.a, f.alice.access_token, roomId);
  const stateEvent = async (roomId: string, type: string, content: unknown, stateKey = "") => {
    const res = await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}/${enc(stateKey)}`, { token: f.alice.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const stored = (id: string) => f.a.hs.services.rooms.events.get(id);

  /** Pushes a state event of mallory's; expects it refused; returns the room as alice sees it then. */
  async function refusedState(roomId: string, draft: EventDraft, rule = "auth_events"): Promise<Awaited<ReturnType<typeof view>>> {
    const e = await f.h.craft(roomId, draft);
    await f.h.send([e.pdu]);
    const v = await view(roomId);
    expect(v.timeline).not.toContain(e.eventId);
    expect(v.state.get(stateKeyOf(draft.type, draft.stateKey!))?.event_id).not.toBe(e.eventId);
    expect((await stored(e.eventId))?.rejectedReason ?? null, "rejected").not.toBeNull();
    expect(refusalLines(log.lines, e.eventId).map((l) => [l.origin, l.rule])).toEqual([[f.h.serverName, rule]]);
    return v;
  }

  describe("authorization", () => {
    it("power-level escalation by a user without power: rejected, mallory still at 0", async () => {
      const roomId = await room();
      const pl = (await view(roomId)).state.get(stateKeyOf("m.room.power_levels", ""))!.content;
      const v = await refusedState(roomId, { type: "m.room.power_levels", stateKey: "", sender: f.mallory, content: { ...pl, users: { ...pl.users, [f.mallory]: 100 } } });
      expect(powerOf(v, f.mallory)).toBe(0);
      expect(powerOf(v, f.alice.user_id)).toBe(100);
    });

    it("a moderator allowed to change power levels raising users_default above her own level, or demoting alice: rejected", async () => {
      const roomId = await room();
      await stateEvent(roomId, "m.room.power_levels", { users: { [f.alice.user_id]: 100, [f.mallory]: 50 }, events: { "m.room.power_levels": 50 } });
      const pl = (await view(roomId)).state.get(stateKeyOf("m.room.power_levels", ""))!.content;
      for (const content of [{ ...pl, users_default: 100 }, { ...pl, users: { ...pl.users, [f.alice.user_id]: 0 } }, { ...pl, ban: 100, kick: 100, users: { ...pl.users } }]) {
        const v = await refusedState(roomId, { type: "m.room.power_levels", stateKey: "", sender: f.mallory, content });
        expect(powerOf(v, f.alice.user_id)).toBe(100);
        expect(v.state.get(stateKeyOf("m.room.power_levels", ""))!.content.users_default ?? 0).toBe(0);
      }
    });

    it("banning a higher-power user: rejected, alice still joined", async () => {
      const roomId = await room();
      await stateEvent(roomId, "m.room.power_levels", { users: { [f.alice.user_id]: 100, [f.mallory]: 50 } });
      const v = await refusedState(roomId, { type: "m.room.member", stateKey: f.alice.user_id, sender: f.mallory, content: { membership: "ban" } });
      expect(membershipOf(v, f.alice.user_id)).toBe("join");
    });

    it("kicking a higher-power user: rejected, alice still joined", async () => {
      const roomId = await room();
      await stateEvent(roomId, "m.room.power_levels", { users: { [f.alice.user_id]: 100, [f.mallory]: 50 } });
      const v = await refusedState(roomId, { type: "m.room.member", stateKey: f.alice.user_id, sender: f.mallory, content: { membership: "leave" } });
      expect(membershipOf(v, f.alice.user_id)).toBe("join");
    });

    it("changing the join rules without power: rejected, still public", async () => {
      const roomId = await room();
      const v = await refusedState(roomId, { type: "m.room.join_rules", stateKey: "", sender: f.mallory, content: { join_rule: "invite" } });
      expect(v.state.get(stateKeyOf("m.room.join_rules", ""))!.content.join_rule).toBe("public");
    });

    it("a server ACL shutting out the local server, without power: rejected, no ACL", async () => {
      const roomId = await room();
      const v = await refusedState(roomId, { type: "m.room.server_acl", stateKey: "", sender: f.mallory, content: { allow: [f.h.serverName], deny: [f.a.serverName], allow_ip_literals: true } });
      expect(v.state.has(stateKeyOf("m.room.server_acl", ""))).toBe(false);
      // alice still speaks in her room.
      expect((await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/acl${Math.random()}`, { token: f.alice.access_token, body: { msgtype: "m.text", body: "still here" } })).status).toBe(200);
    });

    it("events of a server the room's ACL denies: refused, never shown, logged as server_acl", async () => {
      const roomId = await room();
      await stateEvent(roomId, "m.room.server_acl", { allow: ["*"], deny: [f.h.serverName.split(":")[0]!, f.h.serverName], allow_ip_literals: true });
      const m = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: `${f.alice.user_id} let me in` } });
      const res = await f.h.send([m.pdu]);
      expect(res.json.pdus[m.eventId]).toEqual({ error: "Server is banned from room" });
      expect(await stored(m.eventId)).toBeUndefined();
      expect((await view(roomId)).timeline).not.toContain(m.eventId);
      expect(refusalLines(log.lines, m.eventId).map((l) => [l.origin, l.rule])).toEqual([[f.h.serverName, "server_acl"]]);
    });

    it("a redaction of a local user's message by a user without power: the message keeps its content (v10 and v2)", async () => {
      for (const version of ["10", "2"]) {
        const roomId = await room({ room_version: version });
        const sent = await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/keep${Math.random()}`, { token: f.alice.access_token, body: { msgtype: "m.text", body: "alice's words" } });
        const target = sent.json.event_id as string;
        const r = await f.h.craft(roomId, { type: "m.room.redaction", sender: f.mallory, content: version === "2" ? {} : { redacts: target }, redacts: target });
        await f.h.send([r.pdu]);
        const shown = await f.a.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(target)}`, { token: f.alice.access_token });
        expect([shown.status, shown.json.content.body], version).toEqual([200, "alice's words"]);
        expect(shown.json.unsigned?.redacted_because, version).toBeUndefined();
      }
    });

    it("a membership event for a local user sent by mallory (alice made to leave): rejected, alice still joined", async () => {
      const roomId = await room();
      const v = await refusedState(roomId, { type: "m.room.member", stateKey: f.alice.user_id, sender: f.mallory, content: { membership: "join", displayname: "not alice" } });
      expect(membershipOf(v, f.alice.user_id)).toBe("join");
      expect(v.state.get(stateKeyOf("m.room.member", f.alice.user_id))!.content.displayname).not.toBe("not alice");
    });

    it("a second m.room.create: rejected, the room's create event unchanged", async () => {
      const roomId = await room();
      const before = (await view(roomId)).state.get(stateKeyOf("m.room.create", ""))!.event_id;
      // (Weft's builder refuses to make one: a topic turned into a create event before signing.)
      const e = await f.h.craft(roomId, { type: "m.room.topic", stateKey: "", sender: f.mallory, content: {} }, { edit: (p) => Object.assign(p, { type: "m.room.create", content: { room_version: "10", creator: f.mallory } }) });
      await f.h.send([e.pdu]);
      const v = await view(roomId);
      expect(v.state.get(stateKeyOf("m.room.create", ""))!.event_id).toBe(before);
      expect(v.timeline).not.toContain(e.eventId);
      expect((await stored(e.eventId))?.rejectedReason ?? null).not.toBeNull();
    });

    it("an event of the largest depth: accepted, and local sends still work, in order", async () => {
      const roomId = await room();
      const deep = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "deepest" } }, { depth: Number.MAX_SAFE_INTEGER });
      await f.h.send([deep.pdu]);
      const ids: string[] = [];
      for (const body of ["one", "two"]) {
        const res = await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${body}${Math.random()}`, { token: f.alice.access_token, body: { msgtype: "m.text", body } });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        ids.push(res.json.event_id);
      }
      const t = (await view(roomId)).timeline;
      expect(t.indexOf(ids[1]!)).toBeLessThan(t.indexOf(ids[0]!));
      expect(t.indexOf(ids[0]!)).toBeLessThan(t.indexOf(deep.eventId));
    });

    it("turning on encryption without power: rejected, the room not encrypted", async () => {
      const roomId = await room();
      const v = await refusedState(roomId, { type: "m.room.encryption", stateKey: "", sender: f.mallory, content: { algorithm: "m.megolm.v1.aes-sha2" } });
      expect(v.state.has(stateKeyOf("m.room.encryption", ""))).toBe(false);
    });

    it("changing history visibility without power: rejected, unchanged", async () => {
      const roomId = await room();
      const before = (await view(roomId)).state.get(stateKeyOf("m.room.history_visibility", ""))!.content.history_visibility;
      const v = await refusedState(roomId, { type: "m.room.history_visibility", stateKey: "", sender: f.mallory, content: { history_visibility: "world_readable" } });
      expect(v.state.get(stateKeyOf("m.room.history_visibility", ""))!.content.history_visibility).toBe(before);
    });

    it("a join to an invite-only room without an invite: make_join refused, a crafted join rejected, not a member", async () => {
      const roomId = await createRoom(f.a, f.alice, { preset: "private_chat", room_version: "10" });
      const mj = await f.h.call("GET", `/_matrix/federation/v1/make_join/${enc(roomId)}/${enc(f.mallory)}?ver=10`);
      expect([mj.status, mj.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const join = await f.h.craft(roomId, { type: "m.room.member", stateKey: f.mallory, sender: f.mallory, content: { membership: "join" } });
      const sj = await f.h.call("PUT", `/_matrix/federation/v2/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu);
      expect(sj.status).toBe(403);
      await f.h.send([join.pdu]);
      const v = await view(roomId);
      expect(membershipOf(v, f.mallory)).toBeUndefined();
      expect(v.timeline).not.toContain(join.eventId);
    });

    it("a restricted join authorised by a joined user who may not invite: rejected, not a member", async () => {
      const space = await createRoom(f.a, f.alice, { preset: "public_chat" });
      const roomId = await room({ room_version: "10", power_level_content_override: { invite: 50 } });
      await stateEvent(roomId, "m.room.join_rules", { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] });
      const eve = f.h.user("eve");
      const v = await refusedState(roomId, { type: "m.room.member", stateKey: eve, sender: eve, content: { membership: "join", join_authorised_via_users_server: f.mallory } });
      expect(membershipOf(v, eve)).toBeUndefined();
    });

    it("a restricted join naming a local authoriser the local server never signed: rejected", async () => {
      const space = await createRoom(f.a, f.alice, { preset: "public_chat" });
      const roomId = await room();
      await stateEvent(roomId, "m.room.join_rules", { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] });
      const eve = f.h.user("eve");
      const e = await f.h.craft(roomId, { type: "m.room.member", stateKey: eve, sender: eve, content: { membership: "join", join_authorised_via_users_server: f.alice.user_id } });
      const res = await f.h.send([e.pdu]);
      expect(res.json.pdus[e.eventId]?.error ?? (await stored(e.eventId))?.rejectedReason).toBeTruthy();
      const v = await view(roomId);
      expect(membershipOf(v, eve)).toBeUndefined();
      expect(v.timeline).not.toContain(e.eventId);
    });

    it("state from a non-member (a user of the hostile server who never joined): rejected", async () => {
      const roomId = await room();
      const eve = f.h.user("eve");
      const v = await refusedState(roomId, { type: "m.room.topic", stateKey: "", sender: eve, content: { topic: "eve was here" } });
      expect(v.state.get(stateKeyOf("m.room.topic", ""))?.content.topic).not.toBe("eve was here");
    });

    it("wrong auth_events (mallory's membership left out): rejected", async () => {
      const roomId = await room();
      const room0 = (await view(roomId)).state;
      const auth = [room0.get(stateKeyOf("m.room.create", ""))!.event_id, room0.get(stateKeyOf("m.room.power_levels", ""))!.event_id];
      const e = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: `no membership ${f.alice.user_id}` } }, { auth });
      await f.h.send([e.pdu]);
      expect((await view(roomId)).timeline).not.toContain(e.eventId);
      expect((await stored(e.eventId))!.rejectedReason).not.toBeNull();
      expect(await notifiedIds(f.a, f.alice.access_token)).not.toContain(e.eventId);
    });

    it("missing auth_events (an id nobody can give): refused, not stored", async () => {
      const roomId = await room();
      const ghost = `$${"g".repeat(43)}`;
      const e = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "ghost auth" } }, { edit: (p) => void (p.auth_events = [...(p.auth_events as string[]), ghost]) });
      const res = await f.h.send([e.pdu]);
      expect(res.json.pdus[e.eventId]?.error).toBeDefined();
      expect(await stored(e.eventId)).toBeUndefined();
      expect((await view(roomId)).timeline).not.toContain(e.eventId);
    });

    it("duplicated auth_events: rejected", async () => {
      const roomId = await room();
      const e = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "twice" } }, { edit: (p) => void (p.auth_events = [...(p.auth_events as string[]), (p.auth_events as string[])[0]!]) });
      await f.h.send([e.pdu]);
      const s = await stored(e.eventId);
      expect(s === undefined || s.rejectedReason !== null).toBe(true);
      expect((await view(roomId)).timeline).not.toContain(e.eventId);
    });

    it("superfluous auth_events (the topic among them): rejected", async () => {
      const roomId = await room();
      const topic = await stateEvent(roomId, "m.room.topic", { topic: "t" });
      const e = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "extra" } }, { edit: (p) => void (p.auth_events = [...(p.auth_events as string[]), topic]) });
      await f.h.send([e.pdu]);
      const s = await stored(e.eventId);
      expect(s === undefined || s.rejectedReason !== null).toBe(true);
      expect((await view(roomId)).timeline).not.toContain(e.eventId);
    });

    it("rejected auth_events: a topic citing mallory's own rejected power levels is rejected too", async () => {
      const roomId = await room();
      const pl = (await view(roomId)).state.get(stateKeyOf("m.room.power_levels", ""))!.content;
      const fake = await f.h.craft(roomId, { type: "m.room.power_levels", stateKey: "", sender: f.mallory, content: { ...pl, users: { ...pl.users, [f.mallory]: 100 } } });
      await f.h.send([fake.pdu]);
      const cur = (await view(roomId)).state;
      const auth = [stateKeyOf("m.room.create", ""), stateKeyOf("m.room.member", f.mallory)].map((k) => cur.get(k)!.event_id).concat(fake.eventId);
      const topic = await f.h.craft(roomId, { type: "m.room.topic", stateKey: "", sender: f.mallory, content: { topic: "by fake power" } }, { prev: [fake.eventId], auth });
      await f.h.send([topic.pdu]);
      const v = await view(roomId);
      expect(v.state.get(stateKeyOf("m.room.topic", ""))?.content.topic).not.toBe("by fake power");
      expect((await stored(topic.eventId))?.rejectedReason ?? "not stored").not.toBeNull();
      expect(powerOf(v, f.mallory)).toBe(0);
    });
  });

  describe("soft failure", () => {
    /** alice's next message: its prev_events (built on what?). */
    async function aliceBuildsOn(roomId: string): Promise<string[]> {
      const res = await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/next${Math.random()}`, { token: f.alice.access_token, body: { msgtype: "m.text", body: "next" } });
      expect(res.status).toBe(200);
      return prevEventIds((await stored(res.json.event_id))!.pdu as Pdu);
    }

    it("a banned user's message on the state before the ban: soft-failed — not live, not pushed, not built upon", async () => {
      const roomId = await room();
      const beforeBan = (await f.a.hs.services.rooms.events.extremities(roomId))[0]!;
      await stateEvent(roomId, "m.room.member", { membership: "ban" }, f.mallory);
      const m = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: `${f.alice.user_id}: you missed me` } }, { prev: [beforeBan] });
      expect((await f.h.send([m.pdu])).json).toEqual({ pdus: { [m.eventId]: {} } });
      expect((await stored(m.eventId))!.softFailed).toBe(true);
      expect(await liveUntilSentinel(f.a, f.alice.access_token, roomId)).not.toContain(m.eventId);
      expect(await notifiedIds(f.a, f.alice.access_token)).not.toContain(m.eventId);
      expect(await aliceBuildsOn(roomId)).not.toContain(m.eventId);
      const v = await view(roomId);
      expect(membershipOf(v, f.mallory)).toBe("ban");
      // Nor in the timeline read back (Synapse withholds soft-failed events from clients everywhere).
      expect(v.timeline).not.toContain(m.eventId);
      expect((await f.a.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(m.eventId)}`, { token: f.alice.access_token })).status).toBe(404);
      expect(refusalLines(log.lines, m.eventId).map((l) => [l.rule, l.outcome])).toEqual([["current_state", "soft_failed"]]);
    });

    it("a demoted moderator's topic on the state before the demotion: soft-failed, the topic unchanged", async () => {
      const roomId = await room();
      await stateEvent(roomId, "m.room.power_levels", { users: { [f.alice.user_id]: 100, [f.mallory]: 50 } });
      const whilePowerful = (await f.a.hs.services.rooms.events.extremities(roomId))[0]!;
      await stateEvent(roomId, "m.room.topic", { topic: "alice's topic" });
      await stateEvent(roomId, "m.room.power_levels", { users: { [f.alice.user_id]: 100 } });
      const t = await f.h.craft(roomId, { type: "m.room.topic", stateKey: "", sender: f.mallory, content: { topic: "mallory's topic" } }, { prev: [whilePowerful] });
      await f.h.send([t.pdu]);
      expect((await stored(t.eventId))!.softFailed).toBe(true);
      const v = await view(roomId);
      expect(v.state.get(stateKeyOf("m.room.topic", ""))!.content.topic).toBe("alice's topic");
      expect(v.timeline).not.toContain(t.eventId);
      expect(await liveUntilSentinel(f.a, f.alice.access_token, roomId)).not.toContain(t.eventId);
      expect(await aliceBuildsOn(roomId)).not.toContain(t.eventId);
    });

    it("a kicked user's re-join on the state before the kick, in an invite-only room: soft-failed, still out", async () => {
      const roomId = await room();
      const beforeKick = (await f.a.hs.services.rooms.events.extremities(roomId))[0]!;
      await stateEvent(roomId, "m.room.join_rules", { join_rule: "invite" });
      await stateEvent(roomId, "m.room.member", { membership: "leave" }, f.mallory);
      const back = await f.h.craft(roomId, { type: "m.room.member", stateKey: f.mallory, sender: f.mallory, content: { membership: "join", displayname: "back" } }, { prev: [beforeKick] });
      await f.h.send([back.pdu]);
      expect((await stored(back.eventId))!.softFailed).toBe(true);
      expect(membershipOf(await view(roomId), f.mallory)).toBe("leave");
      expect(await aliceBuildsOn(roomId)).not.toContain(back.eventId);
    });
  });
});
