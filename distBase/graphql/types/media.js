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
// Browser URLs of avatars for the GraphQL face: `avatarHttpUrl(size)` beside every `avatarUrl` (the mxc://
// URI). An <img src> cannot send an Authorization header and the spec forbids access tokens in media URLs,
// so these are short-lived URLs signed for the viewer (src/domain/media/browser-urls.ts).
import "reflect-metadata";
import { Arg, Ctx, Field, Int, ObjectType } from "type-graphql";
import { browserMediaUrl, BROWSER_URL_LIFETIME_MS } from "../../domain/media/browser-urls.js";
import { MAX_THUMBNAIL_DIMENSION } from "../../domain/media/thumbnails.js";
import { MatrixError } from "../../domain/errors.js";
export const AVATAR_HTTP_URL_DOC = "The avatar as a URL a browser can load directly (<img src>), with no Authorization header: signed for the viewer, " +
    `valid for at least ${BROWSER_URL_LIFETIME_MS / 60_000} minutes (query again for a fresh one). With \`size\`, a square thumbnail of about ` +
    "size×size pixels (cropped, never larger than the original); without it, the original file. Null without an avatar or without a viewer.";
export const SIZE_ARG_DOC = `Thumbnail edge in pixels (1 to ${MAX_THUMBNAIL_DIMENSION}); omit for the original file.`;
export async function avatarHttpUrl(ctx, mxc, size) {
    if (!mxc)
        return null;
    if (size != null && (!Number.isInteger(size) || size < 1 || size > MAX_THUMBNAIL_DIMENSION))
        throw new MatrixError("M_INVALID_PARAM", `size must be between 1 and ${MAX_THUMBNAIL_DIMENSION}`, 400);
    let userId;
    try {
        userId = (await ctx.requester()).userId;
    }
    catch {
        return null;
    }
    return browserMediaUrl(ctx.s, userId, mxc, size == null ? undefined : { width: size, height: size, method: "crop" });
}
/** The `avatarHttpUrl(size)` field, for object types that carry an `avatarUrl` (an mxc:// URI). */
let WithAvatarHttpUrl = class WithAvatarHttpUrl {
    avatarHttpUrl(size, ctx) {
        return avatarHttpUrl(ctx, this.avatarUrl, size);
    }
};
__decorate([
    Field(() => String, { nullable: true, description: AVATAR_HTTP_URL_DOC }),
    __param(0, Arg("size", () => Int, { nullable: true, description: SIZE_ARG_DOC })),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, Object]),
    __metadata("design:returntype", Promise)
], WithAvatarHttpUrl.prototype, "avatarHttpUrl", null);
WithAvatarHttpUrl = __decorate([
    ObjectType()
], WithAvatarHttpUrl);
export { WithAvatarHttpUrl };
