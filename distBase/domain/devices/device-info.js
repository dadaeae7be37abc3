// Reading a user's devices for the device management API: the stored rows merged with last-seen data
// not yet flushed by DeviceActivity. Spec: Client-Server API "Device management" (GET /devices[/{deviceId}]).
import { notFound } from "../errors.js";
function toClientDevice(s, d) {
    let ts = d.lastSeenTs;
    let ip = d.lastSeenIp;
    const pending = s.deviceActivity.peek(d.userId, d.deviceId);
    if (pending && (ts === null || pending.ts >= ts)) {
        ts = pending.ts;
        ip = pending.ip;
    }
    const out = { device_id: d.deviceId };
    if (d.displayName !== null)
        out.display_name = d.displayName;
    if (ip !== null)
        out.last_seen_ip = ip;
    if (ts !== null)
        out.last_seen_ts = ts;
    return out;
}
/** GET /devices: every device of the requester, oldest first. */
export async function listDevices(s, r) {
    const rows = await s.sessions.listDevices(r.userId);
    return rows.map((d) => toClientDevice(s, d));
}
/** GET /devices/{deviceId}: one of the requester's devices; M_NOT_FOUND for any other id. */
export async function getDevice(s, r, deviceId) {
    const row = await s.sessions.getDevice(r.userId, deviceId);
    if (!row)
        throw notFound("No device found");
    return toClientDevice(s, row);
}
