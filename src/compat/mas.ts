// REST routes of the API Matrix Authentication Service drives the server with (Synapse's /_synapse/mas/*):
// each checks MAS's shared secret (requireMas), calls one domain operation and answers as Synapse does
// (201 for a created user or device, 204 for a deleted device). Domain: src/domain/oauth-delegation/mas-api.ts.
import type { FastifyInstance } from "fastify";
import type { Services } from "../domain/services.ts";
import { queryString, route, type Call, type Method } from "./http.ts";
import {
  masAllowCrossSigningReset, masDeleteDevice, masDeleteUser, masIsLocalpartAvailable, masProvisionUser, masQueryUser,
  masReactivateUser, masSetDisplayname, masSyncDevices, masUpdateDeviceDisplayName, masUpsertDevice, requireMas,
} from "../domain/oauth-delegation/mas-api.ts";

export function masRoutes(app: FastifyInstance, s: Services): void {
  const mas = (method: Method, name: string, handler: (c: Call) => Promise<unknown>) =>
    route(app, s, [`/_synapse/mas/${name}`], {
      method, path: "", auth: "none",
      handler: (c) => {
        requireMas(s, c.bearerToken);
        return handler(c);
      },
    });
  mas("GET", "query_user", (c) => masQueryUser(s, queryString(c, "localpart", true)));
  mas("POST", "provision_user", async (c) => {
    const { created } = await masProvisionUser(s, c.body());
    c.reply.code(created ? 201 : 200);
    return {};
  });
  mas("GET", "is_localpart_available", (c) => masIsLocalpartAvailable(s, queryString(c, "localpart")));
  mas("POST", "delete_user", (c) => masDeleteUser(s, c.body()));
  mas("POST", "reactivate_user", (c) => masReactivateUser(s, c.body()));
  mas("POST", "set_displayname", (c) => masSetDisplayname(s, c.body(), false));
  mas("POST", "unset_displayname", (c) => masSetDisplayname(s, c.body(), true));
  mas("POST", "upsert_device", async (c) => {
    const { created } = await masUpsertDevice(s, c.body());
    c.reply.code(created ? 201 : 200);
    return {};
  });
  mas("POST", "delete_device", async (c) => {
    await masDeleteDevice(s, c.body());
    return c.reply.code(204).send();
  });
  mas("POST", "update_device_display_name", (c) => masUpdateDeviceDisplayName(s, c.body()));
  mas("POST", "sync_devices", (c) => masSyncDevices(s, c.body()));
  mas("POST", "allow_cross_signing_reset", (c) => masAllowCrossSigningReset(s, c.body()));
}
