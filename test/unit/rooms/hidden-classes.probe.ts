// Run by hidden-classes.test.ts in a node started with --allow-natives-syntax: builds objects of the send
// path several times over and prints, per kind, how many share the first one's hidden class (V8 Map).
import { buildEvent } from "../../../src/domain/rooms/build-event.ts";
import { movedRoom, newRoomSnapshot, type RoomSnapshot } from "../../../src/domain/rooms/room-cache.ts";
import { resolveRoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { toClientEvent } from "../../../src/domain/events/format.ts";
import { generateSigningKey } from "../../../src/domain/signing-key.ts";
import type { Services } from "../../../src/domain/services.ts";

// `%HaveSameMap` is V8 syntax: reached through Function so that TypeScript and the transpiler leave it alone.
const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
const sharing = (objects: object[]) => objects.filter((o) => haveSameMap(o, objects[0]!)).length - 1;

const N = 40;
const key = generateSigningKey();
let clock = 1_764_000_000_000;
const s = { config: { server_name: "weft.test" }, signingKeys: [key], clock: { now: () => ++clock } } as unknown as Services;
const out: Record<string, number> = {};
for (const versionId of ["10", "11", "12"]) {
  const version = resolveRoomVersion(versionId);
  const ctx = { roomId: "!room:weft.test", version, state: new Map<string, string>(), extremities: ["$prev"], maxDepth: 5 };
  const pdus = [];
  for (let i = 0; i < N; i++) pdus.push((await buildEvent(s, ctx, { type: "m.room.message", sender: "@a:weft.test", content: { msgtype: "m.text", body: `message ${i}` } })).pdu);
  out[`pdu v${versionId}`] = sharing(pdus);
  const clientEvents = pdus.map((pdu) => toClientEvent(pdu, { roomVersion: version, now: clock, transactionId: "t" }));
  out[`client event v${versionId}`] = sharing(clientEvents);
  out[`client unsigned v${versionId}`] = sharing(clientEvents.map((e) => e.unsigned!));
}
// A new room's snapshot, then the ones each commit moves it to.
let room: RoomSnapshot = newRoomSnapshot("!room:weft.test", resolveRoomVersion("11"), { type: "m.room.create" } as RoomSnapshot["createEvent"], "$create");
const rooms = [room];
for (let i = 1; i < N; i++) rooms.push((room = movedRoom(room, { extremities: [`$e${i}`], maxDepth: room.maxDepth + 1, position: i })));
out["room snapshot"] = sharing(rooms);
console.log(JSON.stringify({ n: N - 1, sharing: out }));
