var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var Viewer_1;
// GraphQL type of the viewer: the authenticated user and session that make the request. Profile fields
// and the device list are resolved on demand in resolvers/viewer.ts.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
let Viewer = Viewer_1 = class Viewer {
    userId;
    deviceId;
    isGuest;
    /** The requester behind this viewer (not a GraphQL field). */
    requester;
    static of(r) {
        return Object.assign(new Viewer_1(), { userId: r.userId, deviceId: r.deviceId, isGuest: r.isGuest, requester: r });
    }
};
__decorate([
    Field(() => String, { description: "The Matrix user ID, e.g. @alice:example.org." }),
    __metadata("design:type", String)
], Viewer.prototype, "userId", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The device of the access token (null for application services)." }),
    __metadata("design:type", Object)
], Viewer.prototype, "deviceId", void 0);
__decorate([
    Field(() => Boolean),
    __metadata("design:type", Boolean)
], Viewer.prototype, "isGuest", void 0);
Viewer = Viewer_1 = __decorate([
    ObjectType({ description: "The authenticated user and session making the request." })
], Viewer);
export { Viewer };
