// Where the federation sender's tests start: a Weft server (federating, over TLS) with a public room of
// alice's that a recording peer's user joined, and a way to send alice's messages into it. Each test file
// gives the server the federation options (retry intervals, metrics, a logger) it reads.
import { expect } from "vitest";
import { startFederatedServer, type FederatedServer } from "./federation.ts";
import { joinFromPeer, startRecordingPeer, type RecordingPeer } from "./federation-peer.ts";
import type { TestServerOptions } from "./server.ts";
import { registerUser, type Session } from "./users.ts";
import { createRoom } from "./rooms.ts";

export interface SenderRoom {
  a: FederatedServer;
  peer: RecordingPeer;
  alice: Session;
  roomId: string;
  /** Sends alice's m.text `body` into `room` (the peer's room by default); returns the event id. */
  send(body: string, room?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startSenderRoom(opts: Omit<TestServerOptions, "serverName" | "port">): Promise<SenderRoom> {
  const peer = await startRecordingPeer();
  const a = await startFederatedServer(opts);
  peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
  const alice = await registerUser(a, "alice");
  const roomId = await createRoom(a, alice, { preset: "public_chat" });
  await joinFromPeer(a, peer, roomId, peer.user("pat"));
  let txn = 0;
  return {
    a, peer, alice, roomId,
    async send(body, room = roomId) {
      const res = await a.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/m.room.message/m${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json.event_id as string;
    },
    close: async () => {
      await Promise.all([a.close(), peer.close()]);
    },
  };
}
