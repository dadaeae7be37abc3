// The example's script: logs in to a Weft server over GraphQL only (graphql-ws), creates a room, follows
// its timeline live, sends a message and waits for it to come back on the subscription, then prints the
// room list — every operation a typed document generated from Weft's schema.graphql.
// Usage: WEFT_URL=http://localhost:8008 WEFT_USER=alice WEFT_PASSWORD=... node src/main.ts
// (Node 22.18+ runs TypeScript directly.) Prints one JSON line: what it did and saw.
import { CreateRoomDocument, LoginDocument, RoomListDocument, RoomPositionDocument, RoomTimelineDocument, SendTextDocument } from "./gql/graphql.ts";
import { WeftClient } from "./client.ts";

const url = process.env.WEFT_URL ?? "http://localhost:8008";
const user = process.env.WEFT_USER;
const password = process.env.WEFT_PASSWORD;
if (!user || !password) {
  console.error("set WEFT_USER and WEFT_PASSWORD");
  process.exit(2);
}

const anonymous = new WeftClient(url);
const login = (await anonymous.run(LoginDocument, { user, password })).login;
await anonymous.close();
if (!login) throw new Error("login returned nothing");

const client = new WeftClient(url, login.accessToken ?? undefined);
try {
  const room = (await client.run(CreateRoomDocument, { name: "Typed client" })).createRoom;
  if (!room) throw new Error("createRoom returned nothing");
  const body = `hello from the typed client ${Date.now()}`;

  // Subscribe from a position taken before the send: the subscription hands the message back, even if the
  // send is stored before the subscription is set up (what came after `since` comes first).
  const since = (await client.run(RoomPositionDocument, { roomId: room.roomId })).room?.timeline.edges[0]?.cursor;
  const received = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the message did not come back within 10 s")), 10_000);
    const stop = client.subscribe(RoomTimelineDocument, { roomId: room.roomId, since }, (data) => {
      const content = data.roomTimeline.event.content as { body?: unknown };
      if (content.body === body) {
        clearTimeout(timer);
        stop();
        resolve(data.roomTimeline.event.eventId);
      }
    }, (err) => { clearTimeout(timer); reject(err); });
  });
  const sent = (await client.run(SendTextDocument, { roomId: room.roomId, txnId: `t${Date.now()}`, body })).sendMessage;
  const eventId = await received;

  const list = (await client.run(RoomListDocument, { first: 20 })).viewer;
  const shown = list?.rooms.edges.find((e) => e.node.roomId === room.roomId)?.node;
  console.log(JSON.stringify({
    userId: login.userId,
    roomId: room.roomId,
    sentEventId: sent?.eventId,
    receivedEventId: eventId,
    roomList: { name: shown?.name, members: shown?.joinedMemberCount, lastBody: (shown?.timeline.edges[0]?.node.content as { body?: string } | undefined)?.body },
  }));
} finally {
  await client.close();
}
