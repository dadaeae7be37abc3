// What a guest account may not do, in one table of domain operations (spec: Client-Server API "Guest
// access" lists what guests may use; where it is silent, as Synapse; the contract lets guests send any room
// event and state event). Each operation in it refuses guests itself (`requireNotGuest`), whichever face
// calls it; the REST face reads the same table to refuse before it reads a request body.
import { MatrixError } from "../errors.ts";
import type { Requester } from "./requester.ts";

/** The domain operations guests may not use (everything else an authenticated guest reaches is theirs). */
export const GUEST_REFUSED_OPERATIONS = [
  "createRoom",
  "upgradeRoom",
  "knockRoom",
  /** Membership of others: invite, kick, ban, unban — through their routes or the state API. */
  "inviteUser",
  "kickUser",
  "banUser",
  "unbanUser",
  "createAlias",
  "deleteAlias",
  "localAliases",
  "setDirectoryVisibility",
  "setAvatarUrl",
  /** Extended profile fields (m.tz, custom keys): a guest may change its display name only (as Synapse). */
  "setProfileField",
  "deleteDevices",
  /** Third-party identifiers of the account, and OpenID tokens (Synapse refuses guests both). */
  "threePids",
  "requestOpenIdToken",
  "keyBackup",
  "uploadCrossSigningKeys",
  "uploadSignatures",
  "reportEvent",
  "reportRoom",
  "reportUser",
  "searchRoomEvents",
  "searchUserDirectory",
  /** Push rules, pushers and the notifications list (Synapse refuses guests there). */
  "pushRules",
  "pushers",
  "notifications",
  /** Uploads (and reserving an mxc URI) and URL previews; downloads are open to guests (Synapse). */
  "uploadMedia",
  "previewUrl",
  /** MatrixRTC transports (MSC4143; Synapse asks for a non-guest token). */
  "rtcTransports",
  /** The admin API (its operations also need a server admin). */
  "admin",
] as const;

export type GuestRefusedOperation = (typeof GUEST_REFUSED_OPERATIONS)[number];

/** 403 M_GUEST_ACCESS_FORBIDDEN for a guest. `operation` names the table's entry the caller implements. */
export function requireNotGuest(r: Pick<Requester, "isGuest">, operation: GuestRefusedOperation): void {
  if (r.isGuest) throw new MatrixError("M_GUEST_ACCESS_FORBIDDEN", "Guest access not allowed", 403);
}
