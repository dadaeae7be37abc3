// Thread subscriptions (MSC4306) over HTTP on SQLite and PostgreSQL: subscribe, read, unsubscribe (also
// when not subscribed); automatic subscriptions caused by an event of the thread, overridden by manual
// ones, refused after an unsubscription that came later than their cause; 404 for roots the user may
// not see, 400 for bad ids; the routes exist only with msc4306_enabled.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("thread subscriptions on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let eve: Session;
  let roomId: string;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: { msc4306_enabled: true } } });
    alice = await registerUser(t, "alice");
    eve = await registerUser(t, "eve");
    roomId = await createRoom(t, alice);
  });
  afterAll(async () => {
    await t?.close();
  });

  const send = async (body: string, root?: string) => {
    const content: Record<string, unknown> = { msgtype: "m.text", body };
    if (root) content["m.relates_to"] = { rel_type: "m.thread", event_id: root };
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: content });
    return res.json.event_id as string;
  };
  const path = (root: string, room = roomId) => `/_matrix/client/unstable/io.element.msc4306/rooms/${enc(room)}/thread/${enc(root)}/subscription`;
  const get = (root: string, who = alice) => t.call("GET", path(root), { token: who.access_token });
  const put = (root: string, body: Record<string, unknown> = {}, who = alice) => t.call("PUT", path(root), { token: who.access_token, body });
  const del = (root: string, who = alice) => t.call("DELETE", path(root), { token: who.access_token });

  it("subscribes, reads and unsubscribes; unsubscribing twice is fine", async () => {
    const root = await send("root");
    expect((await get(root)).json.errcode).toBe("M_NOT_FOUND");
    expect((await put(root)).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: false });
    expect((await del(root)).status).toBe(200);
    expect((await del(root)).status).toBe(200);
    const gone = await get(root);
    expect([gone.status, gone.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("automatic subscriptions: caused by an event of the thread, replaced by a manual one, never replacing one", async () => {
    const root = await send("root");
    const reply = await send("reply", root);
    const other = await send("other root");
    const elsewhere = await send("elsewhere", other);
    for (const cause of [root, elsewhere]) {
      const res = await put(root, { automatic: cause });
      expect([res.status, res.json.errcode]).toEqual([400, "IO.ELEMENT.MSC4306.M_NOT_IN_THREAD"]);
    }
    expect((await put(root, { automatic: "$nowhere:weft.test" })).status).toBe(404);
    expect((await get(root)).status).toBe(404);
    expect((await put(root, { automatic: reply })).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: true });
    expect((await put(root)).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: false });
    expect((await put(root, { automatic: reply })).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: false });
  });

  it("after an unsubscription, an automatic subscription caused by an earlier event is a conflict; by a later one it holds", async () => {
    const root = await send("root");
    const r1 = await send("1", root);
    expect((await put(root, { automatic: r1 })).status).toBe(200);
    const r2 = await send("2", root);
    expect((await del(root)).status).toBe(200);
    const r3 = await send("3", root);
    for (const cause of [r1, r2]) {
      const res = await put(root, { automatic: cause });
      expect([res.status, res.json.errcode]).toEqual([409, "IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION"]);
      expect((await get(root)).status).toBe(404);
    }
    expect((await put(root, { automatic: r3 })).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: true });
    expect(await t.hs.services.threadSubscriptions.subscribers(roomId, root)).toEqual([alice.user_id]);
  });

  it("404 for roots that do not exist or the user may not see; 400 for bad ids and bodies", async () => {
    const root = await send("private root");
    for (const res of [await put("$notathread:example.org"), await get("$notathread:example.org"), await put(root, {}, eve), await get(root, eve), await del(root, eve)]) {
      expect(res.status).toBe(404);
    }
    expect((await put("notanevent")).json.errcode).toBe("M_INVALID_PARAM");
    expect((await t.call("GET", path(root, "notaroom"), { token: alice.access_token })).json.errcode).toBe("M_INVALID_PARAM");
    expect((await put(root, { automatic: 5 })).json.errcode).toBe("M_BAD_JSON");
    expect((await get(root)).status).toBe(404);
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc4306"]).toBe(true);
  });

  it("without msc4306_enabled the routes are not served", async () => {
    const plain = await startTestServer({ backend });
    try {
      const bob = await registerUser(plain, "bob");
      const res = await plain.call("GET", "/_matrix/client/unstable/io.element.msc4306/rooms/!r:weft.test/thread/$e/subscription", { token: bob.access_token });
      expect([res.status, res.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    } finally {
      await plain.close();
    }
  });
});
