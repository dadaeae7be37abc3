// A restricted join on B racing the power levels that let one of B's members authorise it (SQLite and
// PostgreSQL; Complement's TestRestrictedRoomsLocalJoinNoCreatorsUsesPowerLevels): A promotes bob of B to
// inviter, charlie of B joins the allowed room (locally on B) and then the restricted room before A's
// power levels reached B. B finds none of its members may authorise and asks A — which refuses (it has
// not heard of charlie's join to the allowed room yet), or answers a template naming alice whose
// prev_events B lacks; B gives the events on their way a moment, the power levels arrive, and B
// authorises the join itself, through bob.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

/** A gate that outbound federation requests to one destination wait on while it is shut. */
function gate() {
  let open: () => void = () => {};
  let opened: Promise<void> = Promise.resolve();
  return {
    shut() {
      opened = new Promise<void>((r) => (open = r));
    },
    open: () => open(),
    wait: () => opened,
  };
}

describe.each(backends())("a restricted join racing the power levels on %s", (backend) => {
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

  // How B's make_join to A goes: A refuses (it has not heard of charlie's join to the allowed room: B's
  // transactions to A are held), the power levels reaching B before the refusal does; or A answers a
  // template naming alice (it knows of charlie's join), the power levels reaching B before that answer,
  // or after it.
  type Mode = "refuses" | "answers" | "answers before the power levels arrive";
  const cases: { version: string; mode: Mode }[] = [];
  for (const version of ["11", "12"]) for (const mode of ["refuses", "answers", "answers before the power levels arrive"] as const) cases.push({ version, mode });
  cases.forEach(({ version, mode }, n) => {
    it(`v${version}: power levels on their way when A ${mode} let bob of B authorise charlie's join`, async () => {
      const aRefuses = mode === "refuses";
      const space = await createRoom(a, alice, { preset: "public_chat" });
      const roomId = await createRoom(a, alice, {
        room_version: version,
        initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] } }],
        power_level_content_override: { invite: 50 },
      });
      for (const room of [space, roomId]) expect((await b.call("POST", `${V3}/join/${enc(room)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} })).status).toBe(200);
      const charlie = await registerUser(b, `charlie${n}`);

      // A's transactions to B wait (the power levels are late); B's to A too when A is to refuse.
      const aToB = gate();
      const bToA = gate();
      const aPut = a.hs.services.federation.putJson.bind(a.hs.services.federation);
      const bPut = b.hs.services.federation.putJson.bind(b.hs.services.federation);
      const bGet = b.hs.services.federation.getJson.bind(b.hs.services.federation);
      a.hs.services.federation.putJson = (async (dest: string, ...rest: [string, unknown, object?]) => {
        if (dest === b.serverName) await aToB.wait();
        return aPut(dest, ...rest);
      }) as typeof aPut;
      b.hs.services.federation.putJson = (async (dest: string, ...rest: [string, unknown, object?]) => {
        if (dest === a.serverName) await bToA.wait();
        return bPut(dest, ...rest);
      }) as typeof bPut;
      let askedA = false;
      const powersOnB = async () => (await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels`, { token: bob.access_token })).json.users?.[bob.user_id] === 50 || undefined;
      b.hs.services.federation.getJson = (async (dest: string, path: string, ...rest: [unknown?, object?]) => {
        if (!path.includes("/make_join/") || !path.includes(enc(charlie.user_id))) return bGet(dest, path, ...(rest as [undefined]));
        askedA = true;
        if (mode !== "answers before the power levels arrive") {
          // The power levels reach B before A's answer (or refusal) does.
          aToB.open();
          await eventually(powersOnB, "A's power levels on B");
          const answer = await bGet(dest, path, ...(rest as [undefined]));
          if (!aRefuses) expect((answer as any).event.content.join_authorised_via_users_server).toBe(alice.user_id);
          return answer;
        }
        // A answers (naming alice) before its power levels reach B.
        const answer = await bGet(dest, path, ...(rest as [undefined]));
        expect((answer as any).event.content.join_authorised_via_users_server).toBe(alice.user_id);
        aToB.open();
        return answer;
      }) as typeof bGet;
      try {
        aToB.shut();
        if (aRefuses) bToA.shut();
        const users: Record<string, number> = { [bob.user_id]: 50 };
        if (version !== "12") users[alice.user_id] = 100;
        expect((await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: alice.access_token, body: { invite: 50, users } })).status).toBe(200);
        expect((await b.call("POST", `${V3}/join/${enc(space)}`, { token: charlie.access_token, body: {} })).status).toBe(200);
        const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(b.serverName)}`, { token: charlie.access_token, body: {} });
        expect(askedA).toBe(true);
        expect(joined.status, JSON.stringify(joined.json)).toBe(200);
        const join = await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(charlie.user_id)}?format=event`, { token: bob.access_token });
        expect(join.json.content).toMatchObject({ membership: "join", join_authorised_via_users_server: bob.user_id });
      } finally {
        aToB.open();
        bToA.open();
        a.hs.services.federation.putJson = aPut;
        b.hs.services.federation.putJson = bPut;
        b.hs.services.federation.getJson = bGet;
      }
      // A accepts the join B authorised.
      await eventually(async () => {
        const res = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(charlie.user_id)}?format=event`, { token: alice.access_token });
        return res.json.content?.join_authorised_via_users_server === bob.user_id || undefined;
      }, "charlie's join on A, authorised by bob");
    });
  });
});
