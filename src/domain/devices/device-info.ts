// Reading a user's devices for the device management API: the stored rows merged with last-seen data
// not yet flushed by DeviceActivity. Spec: Client-Server API "Device management" (GET /devices[/{deviceId}]).
import { notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { DeviceRow } from "../store/sessions.ts";

/** The spec's `Device` object; unset fields are omitted, never null. */
export interface ClientDevice {
  device_id: string;
  display_name?: string;
  last_seen_ip?: string;
  last_seen_ts?: number;
}

function toClientDevice(s: Services, d: DeviceRow): ClientDevice {
  let ts = d.lastSeenTs;
  let ip = d.lastSeenIp;
  const pending = s.deviceActivity.peek(d.userId, d.deviceId);
  if (pending && (ts === null || pending.ts >= ts)) {
    ts = pending.ts;
    ip = pending.ip;
  }
  const out: ClientDevice = { device_id: d.deviceId };
  if (d.displayName !== null) out.display_name = d.displayName;
  if (ip !== null) out.last_seen_ip = ip;
  if (ts !== null) out.last_seen_ts = ts;
  return out;
}

/** GET /devices: every device of the requester, oldest first. */
export async function listDevices(s: Services, r: Requester): Promise<ClientDevice[]> {
  const rows = await s.sessions.listDevices(r.userId);
  return rows.map((d) => toClientDevice(s, d));
}

/** GET /devices/{deviceId}: one of the requester's devices; M_NOT_FOUND for any other id. */
export async function getDevice(s: Services, r: Requester, deviceId: string): Promise<ClientDevice> {
  const row = await s.sessions.getDevice(r.userId, deviceId);
  if (!row) throw notFound("No device found");
  return toClientDevice(s, row);
}
