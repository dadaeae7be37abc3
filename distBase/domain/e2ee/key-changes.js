import { deviceListChanges } from "./sync-data.js";
import { parseSyncToken } from "../sync/token.js";
/**
 * Reads the device-list and room-event positions of a token: a plain integer is a device-list stream
 * position alone (no membership window); "s<events>_..." is a sync token, read by the sync token module.
 */
export function parseDeviceListToken(token, name) {
    if (/^\d+$/.test(token) && Number.isSafeInteger(Number(token)))
        return { deviceLists: Number(token) };
    const t = parseSyncToken(token, name);
    return { deviceLists: t.device_lists, events: t.events };
}
export async function keyChanges(s, r, fromToken, toToken) {
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
