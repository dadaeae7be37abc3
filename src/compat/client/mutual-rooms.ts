// REST route of GET /_matrix/client/v1/mutual_rooms (spec v1.19, MSC2666), also at MSC2666's unstable
// path /unstable/uk.half-shot.msc2666/user/mutual_rooms (the name clients released before v1.19 call).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryString, type AuthedCall } from "../http.ts";
import { mutualRooms } from "../../domain/rooms/mutual-rooms.ts";

export function mutualRoomRoutes(app: FastifyInstance, s: Services): void {
  for (const [path, versions] of [["/mutual_rooms", ["v1"]], ["/uk.half-shot.msc2666/user/mutual_rooms", ["unstable"]]] as const) {
    clientRoute<AuthedCall>(app, s, {
      method: "GET", path, auth: "token", versions: [...versions],
      handler: (c) => mutualRooms(s, c.requester, queryString(c, "user_id"), queryString(c, "from")),
    });
  }
}
