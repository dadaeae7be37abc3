// Send-to-device over HTTP on SQLite and PostgreSQL: messages to one device, to `*` (every device), idempotent
// per sending device and txnId, relayed unchanged with sender and type, read and acknowledged through the
// functions /sync will call (toDeviceFor / ackToDevice), notifier notices, positions surviving a
// restart after acknowledgement, other servers' users skipped, bad input, and one device's requests
// delivered in the order they arrived.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { V3, expectError } from "../helpers/e2ee.ts";
import { ackToDevice, sendToDevice, toDeviceFor, toDeviceFromBody } from "../../src/domain/e2ee/to-device.ts";
import { authenticate } from "../../src/domain/accounts/authenticate.ts";
import type { Json } from "../../src/domain/e2ee/json.ts";
import { currentToDevicePosition } from "../../src/domain/e2ee/sync-data.ts";
import type { StreamNotice } from "../../src/domain/rooms/notifier.ts";

describe.each(backends())("to-device on %s", (backend) => {
  const { t, users: { alice, bob, bob2 } } = withServer({ backend, users: ["alice", "bob"], logins: { bob2: "bob" } });
  let txn = 0;

  const send = (who: Session, type: string, messages: unknown, txnId = `t${++txn}`) =>
    t.call("PUT", `${V3}/sendToDevice/${encodeURIComponent(type)}/${txnId}`, { token: who.access_token, body: { messages } });
  const inbox = (who: Session, since = 0, limit = 100) => toDeviceFor(t.hs.services, who.user_id, who.device_id, since, limit);

  it("delivers to one device and to every device with `*`, content unchanged, with notices per recipient", async () => {
    const notices: StreamNotice[] = [];
    const off = t.hs.services.rooms.notifier.onStream((n) => { if (n.stream === "to_device") notices.push(n); });
    const encrypted = { algorithm: "m.olm.v1.curve25519-aes-sha2", sender_key: "abc", ciphertext: { k: { type: 0, body: "opaque" } } };
    const res = await send(alice, "m.room.encrypted", { [bob.user_id]: { [bob.device_id]: encrypted } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "PUT", `${V3}/sendToDevice/m.room.encrypted/x`);
    expect(res.json).toEqual({});
    const request = { action: "request", requesting_device_id: alice.device_id, request_id: "r1", body: { room_id: "!r:weft.test" } };
    await send(alice, "m.room_key_request", { [bob.user_id]: { "*": request } });
    off();

    const one = await inbox(bob);
    expect(one.messages).toEqual([
      { sender: alice.user_id, type: "m.room.encrypted", content: encrypted },
      { sender: alice.user_id, type: "m.room_key_request", content: request },
    ]);
    expect(one.limited).toBe(false);
    const two = await inbox(bob2);
    expect(two.messages).toEqual([{ sender: alice.user_id, type: "m.room_key_request", content: request }]);
    expect(notices.map((n) => n.userIds)).toEqual([[bob.user_id], [bob.user_id], [bob.user_id]]);
    expect(Math.max(...notices.map((n) => n.position))).toBe(await currentToDevicePosition(t.hs.services));
    expect(notices.map((n) => n.position)).toContain(one.position);
  });

  it("a device named explicitly gets its own message, not the one sent to `*`", async () => {
    const before = (await inbox(bob2)).position;
    await send(alice, "m.key.verification.request", { [bob.user_id]: { "*": { n: "all" }, [bob2.device_id]: { n: "mine" } } });
    const after = await inbox(bob2, before);
    expect(after.messages.map((m) => m.content)).toEqual([{ n: "mine" }]);
  });

  it("is idempotent per sending device and txnId", async () => {
    const carol = await registerUser(t, "carol");
    const first = await send(alice, "m.test", { [carol.user_id]: { [carol.device_id]: { a: 1 } } }, "same-txn");
    const again = await send(alice, "m.test", { [carol.user_id]: { [carol.device_id]: { a: 2 } } }, "same-txn");
    expect([first.status, again.status]).toEqual([200, 200]);
    expect((await inbox(carol)).messages.map((m) => m.content)).toEqual([{ a: 1 }]);
    // Another device of the sender may reuse the txnId.
    const alice2 = await loginUser(t, "alice");
    await send(alice2, "m.test", { [carol.user_id]: { [carol.device_id]: { a: 3 } } }, "same-txn");
    expect((await inbox(carol)).messages.map((m) => m.content)).toEqual([{ a: 1 }, { a: 3 }]);
  });

  it("pages with a limit and removes acknowledged messages; positions never go back, even after a restart", async () => {
    const dana = await registerUser(t, "dana");
    for (let i = 0; i < 3; i++) await send(alice, "m.test", { [dana.user_id]: { [dana.device_id]: { i } } });
    const page = await inbox(dana, 0, 2);
    expect(page.messages.map((m) => m.content)).toEqual([{ i: 0 }, { i: 1 }]);
    expect(page.limited).toBe(true);
    const rest = await inbox(dana, page.position, 2);
    expect(rest.messages.map((m) => m.content)).toEqual([{ i: 2 }]);
    expect(rest.limited).toBe(false);
    expect(await ackToDevice(t.hs.services, dana.user_id, dana.device_id, page.position)).toBe(2);
    expect((await inbox(dana)).messages.map((m) => m.content)).toEqual([{ i: 2 }]);
    expect(await ackToDevice(t.hs.services, dana.user_id, dana.device_id, rest.position)).toBe(1);
    expect((await inbox(dana)).messages).toEqual([]);
    const nothing = await inbox(dana, rest.position);
    expect(nothing).toEqual({ messages: [], position: rest.position, limited: false });

    // Every message everywhere acknowledged: after a restart, new positions continue past the old ones.
    const s = t.hs.services;
    const high = await currentToDevicePosition(s);
    expect(high).toBeGreaterThanOrEqual(rest.position);
    const waiting = await s.storage.sql.all<{ u: string; d: string }>(`SELECT DISTINCT recipient_user_id AS u, recipient_device_id AS d FROM to_device_inbox`);
    for (const w of waiting) await ackToDevice(s, w.u, w.d, high);
    expect(await s.storage.sql.all(`SELECT stream_id FROM to_device_inbox`)).toEqual([]);
    expect(await currentToDevicePosition(s)).toBe(high);
    await t.restart();
    await send(alice, "m.test", { [dana.user_id]: { [dana.device_id]: { after: "restart" } } });
    const next = await inbox(dana, rest.position);
    expect(next.messages.map((m) => m.content)).toEqual([{ after: "restart" }]);
    expect(next.position).toBeGreaterThan(high);
  });

  it("delivers one device's requests in the order they arrived, however long each takes", async () => {
    // Clients send several at once (matrix-js-sdk's Rust crypto sends a verification's mac and done in
    // parallel, and the other side's state machine stalls when done comes first). The requests are
    // handed to the domain in order, without waiting: a slow one (many recipients) before a quick one.
    const others = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => registerUser(t, `fanout${i}`)));
    const s = t.hs.services;
    const requester = await authenticate(s, alice.access_token);
    const before = (await inbox(bob)).position;
    const sends = Array.from({ length: 20 }, (_, n) => {
      const messages: Record<string, Record<string, unknown>> = { [bob.user_id]: { [bob.device_id]: { n } } };
      if (n % 2 === 0) for (const o of others) messages[o.user_id] = { "*": { n } };
      return sendToDevice(s, requester, "m.test.order", `order-${n}`, toDeviceFromBody({ messages } as Json));
    });
    await Promise.all(sends);
    const got = await inbox(bob, before);
    expect(got.messages.map((m) => (m.content as { n: number }).n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it("skips users of other servers and unknown devices, and refuses bad input", async () => {
    const ok = await send(alice, "m.test", { "@x:elsewhere.example": { D: { a: 1 } }, [bob.user_id]: { NOSUCHDEVICE: { a: 1 } } });
    expect(ok.status).toBe(200);
    expect(await t.hs.services.e2ee.toDeviceFor(bob.user_id, "NOSUCHDEVICE", 0, undefined, 10)).toEqual([]);
    expectError(await t.call("PUT", `${V3}/sendToDevice/m.test/bad1`, { token: alice.access_token, body: {} }), 400, "M_MISSING_PARAM");
    expectError(await send(alice, "m.test", "x"), 400, "M_BAD_JSON");
    expectError(await send(alice, "m.test", { [bob.user_id]: { D: "not an object" } }), 400, "M_BAD_JSON");
    expectError(await send(alice, "m.test", { "not-a-user": {} }), 400, "M_INVALID_PARAM");
    expectError(await t.call("PUT", `${V3}/sendToDevice/m.test/bad2`, { body: { messages: {} } }), 401, "M_MISSING_TOKEN");
  });
});
