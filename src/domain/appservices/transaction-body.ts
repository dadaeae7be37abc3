// The body of PUT /_matrix/app/v1/transactions/{txnId} for a formed transaction (spec: Application Service
// API "Pushing events"): `events` in the Client-Server format, and — as Synapse sends them — `ephemeral`
// (receive_ephemeral, spec v1.13) and/or `de.sorunome.msc2409.ephemeral` (MSC2409's push_ephemeral), with
// to-device messages under `de.sorunome.msc2409.to_device` (MSC4203 has no stable name yet) for either.
import type { Services } from "../services.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";
import type { QueuedRow } from "../store/appservice-queue.ts";
import type { StoredEvent } from "../store/events.ts";
import { roomVersionLookup, serializeEvents } from "../rooms/serialize.ts";

export function wantsEphemeral(as: AppServiceRegistration): boolean {
  return as.receive_ephemeral || as.push_ephemeral_unstable;
}

export async function transactionBody(s: Services, as: AppServiceRegistration, rows: readonly QueuedRow[]): Promise<Record<string, unknown>> {
  const eventIds = rows.filter((r) => r.kind === "event").map((r) => r.eventId!);
  const found = await s.rooms.events.getMany(eventIds);
  const events = eventIds.map((id) => found.get(id)).filter((e): e is StoredEvent => e !== undefined);
  const body: Record<string, unknown> = { events: await serializeEvents(s, undefined, roomVersionLookup(s), events) };
  if (!wantsEphemeral(as)) return body;
  const parse = (kind: string) => rows.filter((r) => r.kind === kind).map((r) => JSON.parse(r.content!) as unknown);
  const ephemeral = parse("ephemeral");
  if (as.receive_ephemeral) body.ephemeral = ephemeral;
  if (as.push_ephemeral_unstable) body["de.sorunome.msc2409.ephemeral"] = ephemeral;
  body["de.sorunome.msc2409.to_device"] = parse("to_device");
  return body;
}
