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
// Profile of the viewer: displayName and avatarUrl fields (read once per request through the profile
// DataLoader) and the mutations that set them, calling the domain operations of PUT /profile/{userId}/...
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from "type-graphql";
import { AVATAR_HTTP_URL_DOC, SIZE_ARG_DOC, avatarHttpUrl } from "../types/media.js";
import { setAvatarUrl, setDisplayName } from "../../domain/profile/profile.js";
import { Viewer } from "../types/viewer.js";
let ProfileResolver = class ProfileResolver {
    async displayName(viewer, ctx) {
        return (await ctx.loaders.profile.load(viewer.userId)).displayname ?? null;
    }
    async avatarUrl(viewer, ctx) {
        return (await ctx.loaders.profile.load(viewer.userId)).avatar_url ?? null;
    }
    async avatarHttpUrl(viewer, size, ctx) {
        return avatarHttpUrl(ctx, (await ctx.loaders.profile.load(viewer.userId)).avatar_url, size);
    }
    async setDisplayName(displayName, ctx) {
        const r = await ctx.requester();
        await setDisplayName(ctx.s, r, r.userId, displayName ?? null);
        ctx.loaders.profile.clear(r.userId);
        return Viewer.of(r);
    }
    async setAvatarUrl(avatarUrl, ctx) {
        const r = await ctx.requester();
        await setAvatarUrl(ctx.s, r, r.userId, avatarUrl ?? null);
        ctx.loaders.profile.clear(r.userId);
        return Viewer.of(r);
    }
};
__decorate([
    FieldResolver(() => String, { nullable: true }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, Object]),
    __metadata("design:returntype", Promise)
], ProfileResolver.prototype, "displayName", null);
__decorate([
    FieldResolver(() => String, { nullable: true, description: "An mxc:// URI (for a browser, use avatarHttpUrl)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, Object]),
    __metadata("design:returntype", Promise)
], ProfileResolver.prototype, "avatarUrl", null);
__decorate([
    FieldResolver(() => String, { nullable: true, description: AVATAR_HTTP_URL_DOC }),
    __param(0, Root()),
    __param(1, Arg("size", () => Int, { nullable: true, description: SIZE_ARG_DOC })),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, Object, Object]),
    __metadata("design:returntype", Promise)
], ProfileResolver.prototype, "avatarHttpUrl", null);
__decorate([
    Mutation(() => Viewer, { nullable: true, description: "Sets the viewer's display name (null removes it); returns the viewer." }),
    __param(0, Arg("displayName", () => String, { nullable: true })),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, Object]),
    __metadata("design:returntype", Promise)
], ProfileResolver.prototype, "setDisplayName", null);
__decorate([
    Mutation(() => Viewer, { nullable: true, description: "Sets the viewer's avatar to an mxc:// URI (null removes it); returns the viewer." }),
    __param(0, Arg("avatarUrl", () => String, { nullable: true })),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, Object]),
    __metadata("design:returntype", Promise)
], ProfileResolver.prototype, "setAvatarUrl", null);
ProfileResolver = __decorate([
    Resolver(() => Viewer)
], ProfileResolver);
export { ProfileResolver };
