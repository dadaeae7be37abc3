// Device management on the GraphQL face, over the REST face's domain operations (src/domain/devices):
// `renameDevice` (PUT /devices/{deviceId}) and `deleteDevices` (DELETE /devices/{deviceId}, POST
// /delete_devices) with user-interactive authentication as the typed AuthRequired result (../uia.ts).
// Spec: Client-Server API "Device management".
import "reflect-metadata";
import { Arg, Ctx, Field, Mutation, ObjectType, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { Device } from "../types/device.ts";
import { AuthInput, type AuthRequired } from "../types/uia.ts";
import { authDictOf, authRequiredOr, uiaResult } from "../uia.ts";
import { getDevice } from "../../domain/devices/device-info.ts";
import { deviceKeyInfo } from "../../domain/e2ee/device-key-info.ts";
import { updateDevice } from "../../domain/devices/update-device.ts";
import { deleteOwnDevices } from "../../domain/devices/delete-own-devices.ts";

@ObjectType({ description: "The devices deleteDevices removed (unknown ids are ignored, as REST does)." })
export class DevicesDeleted {
  @Field(() => [String], { description: "The device ids asked for." })
  deviceIds!: string[];
}

export const DeleteDevicesResult = uiaResult("DeleteDevicesResult", DevicesDeleted, "The devices were deleted.");

/**
 * The REST operation a deletion's UIA session is bound to: one device is DELETE /devices/{id}, several
 * POST /delete_devices, so a session started on either face finishes on the other.
 */
const deletePath = (ids: string[]) =>
  ids.length === 1 ? { path: `/_matrix/client/v3/devices/${encodeURIComponent(ids[0]!)}`, method: "DELETE" } : { path: "/_matrix/client/v3/delete_devices", method: "POST" };

@Resolver()
export class DeviceMutationsResolver {
  @Mutation(() => Device, { description: "Renames one of the viewer's devices (PUT /devices/{deviceId}); returns it. M_NOT_FOUND for a device that is not theirs." })
  async renameDevice(@Arg("deviceId", () => String) deviceId: string, @Arg("displayName", () => String) displayName: string, @Ctx() ctx: GraphqlContext): Promise<Device> {
    const r = await ctx.requester();
    await updateDevice(ctx.s, r, deviceId, displayName);
    const [device, keys] = await Promise.all([getDevice(ctx.s, r, deviceId), deviceKeyInfo(ctx.s, r.userId)]);
    return Device.from(device, keys.get(deviceId));
  }

  @Mutation(() => DeleteDevicesResult, {
    description:
      "Deletes some of the viewer's devices, signing them out (DELETE /devices/{deviceId}, POST /delete_devices). Needs " +
      "user-interactive authentication (m.login.password): the first call answers AuthRequired; repeat it with `auth`.",
  })
  async deleteDevices(
    @Arg("deviceIds", () => [String]) deviceIds: string[],
    @Arg("auth", () => AuthInput, { nullable: true }) auth: AuthInput | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<DevicesDeleted | AuthRequired> {
    const r = await ctx.requester();
    const dict = authDictOf(auth);
    const body = { ...(deviceIds.length === 1 ? {} : { devices: deviceIds }), ...(dict ? { auth: dict } : {}) };
    return authRequiredOr(async () => {
      await deleteOwnDevices(ctx.s, r, deviceIds, { ...deletePath(deviceIds), body, clientIp: ctx.clientIp });
      return Object.assign(new DevicesDeleted(), { deviceIds });
    });
  }
}
