// A MatrixRTC call member in a process of its own (run with plain Node, which strips the types): a
// matrix-js-sdk client that syncs, joins the room's call session with a delayed leave event, prints
// "joined" once its membership is sent, and stays until it is killed — so a test can make a member
// vanish without leaving, as a crashed Element Call tab does. Arguments come as one JSON in argv[2]:
// {baseUrl, userId, accessToken, deviceId, roomId, transport, delayedLeaveEventDelayMs, delayedLeaveEventRestartMs}.
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import { MatrixRTCSessionEvent } from "matrix-js-sdk/lib/matrixrtc/index.js";

// MatrixRTC logs through child loggers of the SDK's global one, which take its method factory.
const root = sdkGlobalLogger as unknown as { methodFactory: () => () => void; rebuild(): void };
root.methodFactory = () => () => {};
root.rebuild();
const a = JSON.parse(process.argv[2]!) as Record<string, any>;
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, getChild() { return quiet; } };
const client = sdk.createClient({ baseUrl: a.baseUrl, userId: a.userId, accessToken: a.accessToken, deviceId: a.deviceId, logger: quiet as any });

await new Promise<void>((resolve, reject) => {
  client.on(sdk.ClientEvent.Sync, (state) => {
    if (state === sdk.SyncState.Prepared) resolve();
    if (state === sdk.SyncState.Error) reject(new Error("sync error"));
  });
  void client.startClient({ initialSyncLimit: 5 });
});
const room = client.getRoom(a.roomId);
if (!room) throw new Error(`not in ${a.roomId}`);
const session = client.matrixRTC.getRoomSession(room);
session.on(MatrixRTCSessionEvent.MembershipsChanged, (_old, now) => {
  if (now.some((m) => m.sender === a.userId && m.deviceId === a.deviceId)) process.stdout.write("joined\n");
});
session.joinRoomSession([a.transport], undefined, {
  delayedLeaveEventDelayMs: a.delayedLeaveEventDelayMs,
  delayedLeaveEventRestartMs: a.delayedLeaveEventRestartMs,
});
setInterval(() => {}, 60_000);
