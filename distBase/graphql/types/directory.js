var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var PublicRoom_1;
// GraphQL types of the room directory: a published room as /publicRooms lists it, its connection and
// the filter input. Spec: Client-Server API "Listing rooms" (PublishedRoomsChunk) in camelCase.
import "reflect-metadata";
import { Field, InputType, Int, ObjectType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.js";
import { PageInfo } from "./connection.js";
let PublicRoom = PublicRoom_1 = class PublicRoom extends WithAvatarHttpUrl {
    roomId;
    name;
    topic;
    canonicalAlias;
    numJoinedMembers;
    worldReadable;
    guestCanJoin;
    avatarUrl;
    joinRule;
    roomType;
    static from(c) {
        return Object.assign(new PublicRoom_1(), {
            roomId: c.room_id,
            name: c.name ?? null,
            topic: c.topic ?? null,
            canonicalAlias: c.canonical_alias ?? null,
            numJoinedMembers: c.num_joined_members,
            worldReadable: c.world_readable,
            guestCanJoin: c.guest_can_join,
            avatarUrl: c.avatar_url ?? null,
            joinRule: c.join_rule ?? null,
            roomType: c.room_type ?? null,
        });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], PublicRoom.prototype, "roomId", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], PublicRoom.prototype, "name", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The plain-text topic." }),
    __metadata("design:type", Object)
], PublicRoom.prototype, "topic", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], PublicRoom.prototype, "canonicalAlias", void 0);
__decorate([
    Field(() => Int),
    __metadata("design:type", Number)
], PublicRoom.prototype, "numJoinedMembers", void 0);
__decorate([
    Field(() => Boolean, { description: "Anyone may read the room's history without joining." }),
    __metadata("design:type", Boolean)
], PublicRoom.prototype, "worldReadable", void 0);
__decorate([
    Field(() => Boolean),
    __metadata("design:type", Boolean)
], PublicRoom.prototype, "guestCanJoin", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "An mxc:// URI." }),
    __metadata("design:type", Object)
], PublicRoom.prototype, "avatarUrl", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], PublicRoom.prototype, "joinRule", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The room type from m.room.create (e.g. m.space)." }),
    __metadata("design:type", Object)
], PublicRoom.prototype, "roomType", void 0);
PublicRoom = PublicRoom_1 = __decorate([
    ObjectType({ description: "A room of the published room directory (the spec's PublishedRoomsChunk)." })
], PublicRoom);
export { PublicRoom };
let PublicRoomEdge = class PublicRoomEdge {
    node;
    cursor;
};
__decorate([
    Field(() => PublicRoom),
    __metadata("design:type", PublicRoom)
], PublicRoomEdge.prototype, "node", void 0);
__decorate([
    Field(() => String, { description: "A /publicRooms since token that continues after this room." }),
    __metadata("design:type", String)
], PublicRoomEdge.prototype, "cursor", void 0);
PublicRoomEdge = __decorate([
    ObjectType()
], PublicRoomEdge);
export { PublicRoomEdge };
let PublicRoomConnection = class PublicRoomConnection {
    edges;
    pageInfo;
    totalRoomCountEstimate;
};
__decorate([
    Field(() => [PublicRoomEdge]),
    __metadata("design:type", Array)
], PublicRoomConnection.prototype, "edges", void 0);
__decorate([
    Field(() => PageInfo),
    __metadata("design:type", PageInfo)
], PublicRoomConnection.prototype, "pageInfo", void 0);
__decorate([
    Field(() => Int, { description: "How many rooms are published (all of them, not only those matching the filter)." }),
    __metadata("design:type", Number)
], PublicRoomConnection.prototype, "totalRoomCountEstimate", void 0);
PublicRoomConnection = __decorate([
    ObjectType({ description: "A page of the published room directory, most joined members first." })
], PublicRoomConnection);
export { PublicRoomConnection };
let PublicRoomsFilter = class PublicRoomsFilter {
    genericSearchTerm;
    roomTypes;
};
__decorate([
    Field(() => String, { nullable: true, description: "Searched (case-insensitively) in the name, topic, canonical alias and room ID." }),
    __metadata("design:type", Object)
], PublicRoomsFilter.prototype, "genericSearchTerm", void 0);
__decorate([
    Field(() => [String], { nullable: "itemsAndList", description: "Only rooms of these types; null in the list stands for rooms without a type." }),
    __metadata("design:type", Object)
], PublicRoomsFilter.prototype, "roomTypes", void 0);
PublicRoomsFilter = __decorate([
    InputType({ description: "POST /publicRooms' filter." })
], PublicRoomsFilter);
export { PublicRoomsFilter };
