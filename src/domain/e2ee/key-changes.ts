// GET /keys/changes: users whose device lists changed between two sync tokens and who share a room
// with the requester, and users who no longer share any. Reads positions from a sync token
// (src/domain/sync/token.ts) or from a plain device-list stream position ("12").
// Spec: Client-Server API "GET /keys/changes".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { deviceListChanges, type DeviceListPositions } from "./sync-data.ts";
import { parseSyncToken } from "../sync/token.ts";

/**
 * Reads the device-list and room-event positions of a token: a plain integer is a device-list stream
 * position alone (no membership window); "s<events>_..." is a sync token, read by the sync token module.
 */
export function parseDeviceListToken(token: string, name: string): DeviceListPositions {
  if (/^\d+$/.test(token) && Number.isSafeInteger(Number(token))) return { deviceLists: Number(token) };
  const t = parseSyncToken(token, name);
  return { deviceLists: t.device_lists, events: t.events };
}

export async function keyChanges(s: Services, r: Requester, fromToken: string, toToken: string): Promise<{ changed: string[]; left: string[] }> {
  const from = parseDeviceListToken(fromToken, "from");
  const to = parseDeviceListToken(toToken, "to");
  // A plain position on one end only: the other end's event position is unknown, so membership
  // changes are skipped rather than guessed.
  if (from.events === undefined || to.events === undefined) {
    delete from.events;
    delete to.events;
  }
  return deviceListChanges(s, r.userId, from, to);
}
