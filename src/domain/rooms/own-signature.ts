// This server's signature on its own events, made when an event first leaves the server. A message sent
// into a room no other server is in is stored unsigned (persist.ts persistEach, the group commit of
// append.ts): until another server is in the room nobody can check the signature, and the Ed25519 signing
// it would cost is a fifth of a message's work (issue 17). Neither the content hash nor the event id
// covers `signatures`, and an Ed25519 signature is deterministic (RFC 8032, 5.1.6), so the signature made
// here when the event is served — to a server that joined later and backfills, asks for missing events or
// for the event itself — or sent, or shown to a client in the federation format, is byte for byte the one
// signing at creation would have made (with the server's current key). It is kept on the cached event,
// so each event is signed at most once while it stays in the cache. Every way a stored PDU leaves the
// server goes through signOwnEvents: today federation/server-visibility.ts pdusForServer (everything
// served), federation/sender/transaction.ts pdusOf (everything sent) and sync/providers/events.ts
// (event_format "federation"); a new one must too.
// Spec: Server-Server API "Signing events"; Appendices "Signing Details".
import type { Services } from "../services.ts";
import { domainOf } from "../events/types.ts";
import type { StoredEvent } from "../store/events.ts";
import { eventSignature } from "./build-event.ts";
import { resolveRoomVersion, type RoomVersion } from "./room-versions.ts";

/**
 * Signs those of `events` that are this server's own and still unsigned, in place (their PDU gains the
 * signature, the cached event with it). Rejected events are never served, and left as they are.
 */
export async function signOwnEvents(s: Services, events: readonly StoredEvent[], versionOf: (roomId: string) => Promise<string | RoomVersion> | string | RoomVersion): Promise<void> {
  const signer = { serverName: s.config.server_name, key: s.signingKeys[0]! };
  for (const e of events) {
    const { pdu } = e;
    if (e.rejectedReason !== null || domainOf(pdu.sender) !== signer.serverName || pdu.signatures?.[signer.serverName] !== undefined) continue;
    const signature = eventSignature(pdu, resolveRoomVersion(await versionOf(e.roomId)), signer);
    pdu.signatures = { ...pdu.signatures, [signer.serverName]: { [signer.key.keyId]: signature } };
  }
}
