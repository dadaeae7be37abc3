var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var Room_1, Member_1;
// GraphQL types of rooms: Room (its fields are resolved in resolvers/rooms.ts), the membership enum,
// members, the Relay connections of rooms and members, and the createRoom input (POST /createRoom's
// body in camelCase). Spec: Client-Server API "Rooms", "Room membership", "Creation".
import "reflect-metadata";
import { Field, InputType, ObjectType, registerEnumType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.js";
import { GraphQLJSONObject } from "./json.js";
import { PageInfo } from "./connection.js";
import { Event } from "./event.js";
export var Membership;
(function (Membership) {
    Membership["JOIN"] = "join";
    Membership["INVITE"] = "invite";
    Membership["LEAVE"] = "leave";
    Membership["BAN"] = "ban";
    Membership["KNOCK"] = "knock";
})(Membership || (Membership = {}));
registerEnumType(Membership, { name: "Membership", description: "A membership state of m.room.member." });
export var RoomVisibility;
(function (RoomVisibility) {
    RoomVisibility["PUBLIC"] = "public";
    RoomVisibility["PRIVATE"] = "private";
})(RoomVisibility || (RoomVisibility = {}));
registerEnumType(RoomVisibility, { name: "RoomVisibility", description: "Whether the room is published in the room directory." });
export var RoomPreset;
(function (RoomPreset) {
    RoomPreset["PRIVATE_CHAT"] = "private_chat";
    RoomPreset["PUBLIC_CHAT"] = "public_chat";
    RoomPreset["TRUSTED_PRIVATE_CHAT"] = "trusted_private_chat";
})(RoomPreset || (RoomPreset = {}));
registerEnumType(RoomPreset, { name: "RoomPreset", description: "createRoom's preset: join rules, history visibility and guest access to start with." });
let Room = Room_1 = class Room {
    roomId;
    static of(roomId) {
        return Object.assign(new Room_1(), { roomId });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], Room.prototype, "roomId", void 0);
Room = Room_1 = __decorate([
    ObjectType({ description: "A room, as the viewer may see it." })
], Room);
export { Room };
let Member = Member_1 = class Member extends WithAvatarHttpUrl {
    userId;
    membership;
    displayName;
    avatarUrl;
    event;
    static from(e, roomId) {
        const str = (v) => (typeof v === "string" ? v : null);
        return Object.assign(new Member_1(), {
            userId: e.state_key ?? "",
            membership: e.content.membership,
            displayName: str(e.content.displayname),
            avatarUrl: str(e.content.avatar_url),
            event: Event.from(e, roomId),
        });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], Member.prototype, "userId", void 0);
__decorate([
    Field(() => Membership),
    __metadata("design:type", String)
], Member.prototype, "membership", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The display name in this room." }),
    __metadata("design:type", Object)
], Member.prototype, "displayName", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The avatar in this room (an mxc:// URI)." }),
    __metadata("design:type", Object)
], Member.prototype, "avatarUrl", void 0);
__decorate([
    Field(() => Event, { description: "The m.room.member event." }),
    __metadata("design:type", Event)
], Member.prototype, "event", void 0);
Member = Member_1 = __decorate([
    ObjectType({ description: "A member of a room: the state of its m.room.member event." })
], Member);
export { Member };
let MemberEdge = class MemberEdge {
    node;
    cursor;
};
__decorate([
    Field(() => Member),
    __metadata("design:type", Member)
], MemberEdge.prototype, "node", void 0);
__decorate([
    Field(() => String, { description: "The member's user ID (members are ordered by it)." }),
    __metadata("design:type", String)
], MemberEdge.prototype, "cursor", void 0);
MemberEdge = __decorate([
    ObjectType()
], MemberEdge);
export { MemberEdge };
let MemberConnection = class MemberConnection {
    edges;
    pageInfo;
};
__decorate([
    Field(() => [MemberEdge]),
    __metadata("design:type", Array)
], MemberConnection.prototype, "edges", void 0);
__decorate([
    Field(() => PageInfo),
    __metadata("design:type", PageInfo)
], MemberConnection.prototype, "pageInfo", void 0);
MemberConnection = __decorate([
    ObjectType({ description: "A page of a room's members, ordered by user ID." })
], MemberConnection);
export { MemberConnection };
let RoomEdge = class RoomEdge {
    node;
    cursor;
};
__decorate([
    Field(() => Room),
    __metadata("design:type", Room)
], RoomEdge.prototype, "node", void 0);
__decorate([
    Field(() => String, { description: "The stream token of the viewer's membership event in this room." }),
    __metadata("design:type", String)
], RoomEdge.prototype, "cursor", void 0);
RoomEdge = __decorate([
    ObjectType()
], RoomEdge);
export { RoomEdge };
let RoomConnection = class RoomConnection {
    edges;
    pageInfo;
};
__decorate([
    Field(() => [RoomEdge]),
    __metadata("design:type", Array)
], RoomConnection.prototype, "edges", void 0);
__decorate([
    Field(() => PageInfo),
    __metadata("design:type", PageInfo)
], RoomConnection.prototype, "pageInfo", void 0);
RoomConnection = __decorate([
    ObjectType({ description: "A page of the viewer's rooms, newest membership change first." })
], RoomConnection);
export { RoomConnection };
let StateEventInput = class StateEventInput {
    type;
    stateKey;
    content;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], StateEventInput.prototype, "type", void 0);
__decorate([
    Field(() => String, { defaultValue: "" }),
    __metadata("design:type", String)
], StateEventInput.prototype, "stateKey", void 0);
__decorate([
    Field(() => GraphQLJSONObject),
    __metadata("design:type", Object)
], StateEventInput.prototype, "content", void 0);
StateEventInput = __decorate([
    InputType({ description: "A state event to set (createRoom's initialState)." })
], StateEventInput);
export { StateEventInput };
let CreateRoomInput = class CreateRoomInput {
    name;
    topic;
    visibility;
    preset;
    roomVersion;
    invite;
    isDirect;
    roomAliasName;
    initialState;
    creationContent;
    powerLevelContentOverride;
};
__decorate([
    Field(() => String, { nullable: true, description: "The room name (an m.room.name event)." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "name", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The room topic (an m.room.topic event)." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "topic", void 0);
__decorate([
    Field(() => RoomVisibility, { nullable: true, description: "Default PRIVATE." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "visibility", void 0);
__decorate([
    Field(() => RoomPreset, { nullable: true, description: "Default PUBLIC_CHAT for a public room, else PRIVATE_CHAT." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "preset", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The room version; the server's default when absent." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "roomVersion", void 0);
__decorate([
    Field(() => [String], { nullable: true, description: "User IDs to invite." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "invite", void 0);
__decorate([
    Field(() => Boolean, { nullable: true, description: "Mark the invites as direct chats." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "isDirect", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The localpart of an alias to create for the room." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "roomAliasName", void 0);
__decorate([
    Field(() => [StateEventInput], { nullable: true, description: "State events to set after the preset's." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "initialState", void 0);
__decorate([
    Field(() => GraphQLJSONObject, { nullable: true, description: "Extra keys of the m.room.create content." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "creationContent", void 0);
__decorate([
    Field(() => GraphQLJSONObject, { nullable: true, description: "Merged over the default m.room.power_levels content." }),
    __metadata("design:type", Object)
], CreateRoomInput.prototype, "powerLevelContentOverride", void 0);
CreateRoomInput = __decorate([
    InputType({ description: "POST /createRoom." })
], CreateRoomInput);
export { CreateRoomInput };
