// REST routes for device management: list, read, rename and delete (UIA) the requester's devices;
// application services also create devices with PUT (201) and delete without UIA (spec v1.17, MSC4190).
// Spec: Client-Server API "Device management". Guests may read and rename, not delete (as Synapse).
import type { FastifyInstance } from "fastify";
import { MatrixError, badJson } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { getDevice, listDevices } from "../../domain/devices/device-info.ts";
import { updateDevice } from "../../domain/devices/update-device.ts";
import { deleteOwnDevices } from "../../domain/devices/delete-own-devices.ts";
import type { UiaRequest } from "../../domain/uia/uia.ts";

/** The JSON body; an absent or unparsable one counts as {} (old clients send DELETE without a body). */
function lenientBody(c: AuthedCall): Record<string, unknown> {
  try {
    return c.bodyOrEmpty();
  } catch (err) {
    if (err instanceof MatrixError && err.errcode === "M_NOT_JSON") return {};
    throw err;
  }
}

const uiaRequest = (c: AuthedCall, body: Record<string, unknown>): UiaRequest => ({ path: c.req.originalUrl, method: c.req.method, body, clientIp: c.clientIp });

export function deviceRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/devices", auth: "token",
    handler: async (c) => ({ devices: await listDevices(s, c.requester) }),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/devices/:deviceId", auth: "token",
    handler: (c) => getDevice(s, c.requester, c.params.deviceId!),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/devices/:deviceId", auth: "token",
    handler: async (c) => {
      const name = c.body().display_name;
      if (name !== undefined && name !== null && typeof name !== "string") throw badJson("display_name must be a string");
      const { created } = await updateDevice(s, c.requester, c.params.deviceId!, name ?? undefined);
      if (created) c.reply.code(201);
      return {};
    },
  });

  clientRoute<AuthedCall>(app, s, {
    method: "DELETE", path: "/devices/:deviceId", auth: "token", op: "deleteDevices",
    handler: async (c) => {
      const body = lenientBody(c);
      await deleteOwnDevices(s, c.requester, [c.params.deviceId!], uiaRequest(c, body));
      return {};
    },
  });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/delete_devices", auth: "token", op: "deleteDevices",
    handler: async (c) => {
      const body = lenientBody(c);
      const ids = body.devices;
      if (!Array.isArray(ids) || !ids.every((d) => typeof d === "string")) throw badJson("devices must be a list of device ids");
      await deleteOwnDevices(s, c.requester, ids as string[], uiaRequest(c, body));
      return {};
    },
  });
}
