// GET /keys/changes: users whose device lists changed between two sync tokens and who share a room
// with the requester, and users who no longer share any. Reads positions from a plain device-list
// stream position ("12") or from a sync token ("s12_3_..."), whose parts are named by `syncTokenLayout`.
// Spec: Client-Server API "GET /keys/changes".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { deviceListChanges, type DeviceListPositions } from "./sync-data.ts";

/**
 * The names of a sync token's `_`-separated parts after its leading "s", in order. The default is
 * Synapse's layout; the sync module sets the real one at start-up (only `events` and `device_lists`
 * are read here).
 */
export const syncTokenLayout: string[] = ["events", "presence", "typing", "receipts", "account_data", "push_rules", "to_device", "device_lists"];

/**
 * Reads the device-list and room-event positions of a token: a plain integer is a device-list stream
 * position alone (no membership window); "s<part>_<part>..." is read by `syncTokenLayout`. A part may
 * carry extra detail after a non-digit (e.g. "12~worker"): its leading integer is the position.
 */
export function parseDeviceListToken(token: string, name: string): DeviceListPositions {
  if (/^\d+$/.test(token)) return { deviceLists: Number(token) };
  const m = /^s(.+)$/.exec(token);
  if (m) {
    const parts = m[1]!.split("_");
    const read = (part: string): number | undefined => {
      const i = syncTokenLayout.indexOf(part);
      const v = i < 0 ? undefined : /^\d+/.exec(parts[i] ?? "")?.[0];
      return v === undefined ? undefined : Number(v);
    };
    const deviceLists = read("device_lists");
    const events = read("events");
    if (deviceLists !== undefined) return { deviceLists, events };
  }
  throw new MatrixError("M_INVALID_PARAM", `${name} is not a valid sync token`, 400);
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
