// The string fields of a room's summary as clients are shown them — /publicRooms chunks and /hierarchy
// rooms, this server's and another server's alike (spec: Client-Server API "Listing rooms" PublicRoomsChunk,
// "Spaces" RoomSummary): a value that breaks its field's format is left out and the room is still listed.
// Room state may hold anything (another server's events skip our send checks) and other servers' answers
// are untrusted, so every summary goes through this one table.
import { isValidRoomAlias } from "../ids.ts";
import { isMxcUri } from "../media/ids.ts";

/** Fields with a format of their own; other string fields are shown as they are. */
const FORMATS: Readonly<Record<string, (v: string) => boolean>> = {
  canonical_alias: isValidRoomAlias,
  avatar_url: isMxcUri,
  encryption: (v) => v === "m.megolm.v1.aes-sha2",
};

/** A summary's `field` when `v` is a string of the field's format, else undefined. */
export function shownSummaryField(field: string, v: unknown): string | undefined {
  if (typeof v !== "string") return undefined;
  const format = Object.hasOwn(FORMATS, field) ? FORMATS[field] : undefined;
  return format === undefined || format(v) ? v : undefined;
}
