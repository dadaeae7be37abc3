// The `viewer` entry point: the user and session behind the request's access token, and its devices
// (the same read as GET /devices). Profile fields of the viewer live in resolvers/profile.ts.
import "reflect-metadata";
import { Ctx, FieldResolver, Query, Resolver, Root } from "type-graphql";
import { listDevices } from "../../domain/devices/device-info.ts";
import { deviceKeyInfo } from "../../domain/e2ee/device-key-info.ts";
import type { GraphqlContext } from "../context.ts";
import { Viewer } from "../types/viewer.ts";
import { Device } from "../types/device.ts";

@Resolver(() => Viewer)
export class ViewerResolver {
  @Query(() => Viewer, {
    nullable: true,
    description:
      "The user and session behind the access token (HTTP `Authorization: Bearer`, or the WebSocket " +
      "connection_init payload's `authorization`/`access_token`). Never null when it succeeds: without a token " +
      "it fails with errcode M_MISSING_TOKEN, with an unknown, expired or logged-out one with M_UNKNOWN_TOKEN " +
      "(plus `soft_logout`).",
  })
  async viewer(@Ctx() ctx: GraphqlContext): Promise<Viewer> {
    return Viewer.of(await ctx.requester());
  }

  @FieldResolver(() => [Device], { description: "The viewer's devices, oldest first, with their encryption keys." })
  async devices(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<Device[]> {
    // Keys of all devices in one batch beside the device list (no read per device).
    const [devices, keys] = await Promise.all([listDevices(ctx.s, viewer.requester), deviceKeyInfo(ctx.s, viewer.requester.userId)]);
    return devices.map((d) => Device.from(d, keys.get(d.device_id)));
  }
}
