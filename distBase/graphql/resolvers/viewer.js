var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
// The `viewer` entry point: the user and session behind the request's access token, and its devices
// (the same read as GET /devices). Profile fields of the viewer live in resolvers/profile.ts.
import "reflect-metadata";
import { Ctx, FieldResolver, Query, Resolver, Root } from "type-graphql";
import { listDevices } from "../../domain/devices/device-info.js";
import { deviceKeyInfo } from "../../domain/e2ee/device-key-info.js";
import { Viewer } from "../types/viewer.js";
import { Device } from "../types/device.js";
let ViewerResolver = class ViewerResolver {
    async viewer(ctx) {
        return Viewer.of(await ctx.requester());
    }
    async devices(viewer, ctx) {
        // Keys of all devices in one batch beside the device list (no read per device).
        const [devices, keys] = await Promise.all([listDevices(ctx.s, viewer.requester), deviceKeyInfo(ctx.s, viewer.requester.userId)]);
        return devices.map((d) => Device.from(d, keys.get(d.device_id)));
    }
};
__decorate([
    Query(() => Viewer, {
        nullable: true,
        description: "The user and session behind the access token (HTTP `Authorization: Bearer`, or the WebSocket " +
            "connection_init payload's `authorization`/`access_token`). Never null when it succeeds: without a token " +
            "it fails with errcode M_MISSING_TOKEN, with an unknown, expired or logged-out one with M_UNKNOWN_TOKEN " +
            "(plus `soft_logout`).",
    }),
    __param(0, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object]),
    __metadata("design:returntype", Promise)
], ViewerResolver.prototype, "viewer", null);
__decorate([
    FieldResolver(() => [Device], { description: "The viewer's devices, oldest first, with their encryption keys." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, Object]),
    __metadata("design:returntype", Promise)
], ViewerResolver.prototype, "devices", null);
ViewerResolver = __decorate([
    Resolver(() => Viewer)
], ViewerResolver);
export { ViewerResolver };
