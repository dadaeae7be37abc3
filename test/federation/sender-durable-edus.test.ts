// EDUs that must arrive survive a restart of the sending server (SQLite and PostgreSQL): to-device
// messages for a remote user and a local user's device-list changes are queued in storage with the
// request (or the device-list sender's position) that produced them; while the destination is gone they
// wait, the Weft server restarts, and once the destination is back each arrives exactly once — also a
// change made after the restart. The recording peer (test/helpers/federation-peer.ts) plays the remote
// server. Synapse keeps device_federation_outbox and device_lists_outbound_pokes for the same reason.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually, joinFromPeer, startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { uploadDeviceKeys } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";

describe.each(backends())("durable federation EDUs on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;

  beforeAll(async () => {
    peer = await startRecordingPeer();
    a = await startFederatedServer({ backend, config: { federation: { destination_min_retry_interval: 100, destination_max_retry_interval: 400 } } });
    peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
    alice = await registerUser(a, "alice");
    const roomId = await createRoom(a, alice, { preset: "public_chat" });
    await joinFromPeer(a, peer, roomId, peer.user("pat"));
  });
  afterAll(async () => {
    await Promise.all([a?.close(), peer?.close()]);
  });

  const state = () => a.hs.services.federationSender.describe(peer.serverName);
  const toDevice = (marker: string) => peer.edus().filter((e) => e.edu_type === "m.direct_to_device" && e.content?.messages?.[peer.user("pat")]?.PATDEV?.marker === marker);
  const deviceUpdates = (deviceId: string) => peer.edus().filter((e) => e.edu_type === "m.device_list_update" && e.content?.user_id === alice.user_id && e.content?.device_id === deviceId);
  const sendToPat = async (txnId: string, marker: string) => {
    const res = await a.call("PUT", `${V3}/sendToDevice/m.test/${txnId}`, { token: alice.access_token, body: { messages: { [peer.user("pat")]: { PATDEV: { marker } } } } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };

  it("to-device messages and device-list updates queued while the destination is gone survive a restart and arrive once", async () => {
    // Up first: one of each arrives (the path works at all).
    await sendToPat("t0", "up");
    await eventually(() => toDevice("up").length === 1, "the first to-device message at the peer");

    await peer.stop();
    await sendToPat("t1", "while down");
    await sendToPat("t1", "while down"); // the same transaction again: nothing more is queued
    const phone = await loginUser(a, "alice");
    await uploadDeviceKeys(a, phone);
    const stored = () => a.hs.services.federationSender.store.nextEdus(peer.serverName, 100);
    await eventually(async () => {
      const edus = await stored();
      return edus.some((e) => e.edu_type === "m.device_list_update" && (e.content.keys as { device_id?: string } | undefined)?.device_id === phone.device_id);
    }, "the new device's keys queued");
    await eventually(async () => (await state())?.down, "the destination marked down");
    const beforeRestart = (await stored()).map((e) => e.id);
    expect((await stored()).filter((e) => e.edu_type === "m.direct_to_device")).toHaveLength(1);

    await a.restart();
    // Still queued after the restart: nothing was lost, nothing sent yet.
    expect((await stored()).map((e) => e.id)).toEqual(beforeRestart);
    expect(toDevice("while down")).toEqual([]);

    // A change after the restart, before the destination is back.
    await sendToPat("t2", "after restart");
    await peer.start();
    await eventually(() => toDevice("while down").length > 0 && toDevice("after restart").length > 0 && deviceUpdates(phone.device_id).length > 0, "everything at the peer");
    await eventually(async () => (await state())?.pendingEdus === 0, "nothing left queued");
    expect(toDevice("while down")).toHaveLength(1);
    expect(toDevice("after restart")).toHaveLength(1);
    expect(toDevice("up")).toHaveLength(1);
    // In the order they were sent: the message from before the restart first.
    const order = peer.edus().filter((e) => e.edu_type === "m.direct_to_device").map((e) => e.content.messages[peer.user("pat")].PATDEV.marker);
    expect(order).toEqual(["up", "while down", "after restart"]);
    expect(toDevice("while down")[0]!.content).toMatchObject({ sender: alice.user_id, type: "m.test" });
    // The new device's update: its keys, stream ids that follow on from each other, sent once per change.
    const updates = deviceUpdates(phone.device_id);
    expect(updates.some((u) => u.content.keys?.device_id === phone.device_id)).toBe(true);
    const ids = updates.map((u) => u.content.stream_id as number);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("a restart with nothing queued sends nothing again", async () => {
    const before = peer.edus().length;
    await a.restart();
    await sendToPat("t3", "marker");
    await eventually(() => toDevice("marker").length === 1, "the marker at the peer");
    const since = peer.edus().slice(before);
    expect(since.filter((e) => e.edu_type === "m.direct_to_device")).toHaveLength(1);
    expect(since.filter((e) => e.edu_type === "m.device_list_update")).toEqual([]);
  });
});
