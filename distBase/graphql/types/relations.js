var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var SpaceHierarchyRoom_1;
// GraphQL types of relations, threads and spaces: the bundled aggregations of an event (thread summary,
// latest edit, references) read from its unsigned `m.relations`, the connections of related events and
// of thread roots, and the space hierarchy (GET /hierarchy's rooms in camelCase).
// Spec: Client-Server API "Relationships", "Threading", "Spaces".
import "reflect-metadata";
import { Field, Int, ObjectType, registerEnumType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.js";
import { GraphQLJSONObject } from "./json.js";
import { PageInfo } from "./connection.js";
import { Event } from "./event.js";
import { Timestamp } from "./scalars.js";
export var ThreadInclude;
(function (ThreadInclude) {
    ThreadInclude["ALL"] = "all";
    ThreadInclude["PARTICIPATED"] = "participated";
})(ThreadInclude || (ThreadInclude = {}));
registerEnumType(ThreadInclude, { name: "ThreadInclude", description: "Which threads to list: all, or those the viewer started or replied in." });
let ThreadSummary = class ThreadSummary {
    latestEvent;
    count;
    currentUserParticipated;
};
__decorate([
    Field(() => Event, { description: "The latest reply in the thread." }),
    __metadata("design:type", Event)
], ThreadSummary.prototype, "latestEvent", void 0);
__decorate([
    Field(() => Int, { description: "How many replies the thread has." }),
    __metadata("design:type", Number)
], ThreadSummary.prototype, "count", void 0);
__decorate([
    Field(() => Boolean, { description: "The viewer started the thread or replied in it." }),
    __metadata("design:type", Boolean)
], ThreadSummary.prototype, "currentUserParticipated", void 0);
ThreadSummary = __decorate([
    ObjectType({ description: "The m.thread aggregation of a thread root." })
], ThreadSummary);
export { ThreadSummary };
let EditSummary = class EditSummary {
    eventId;
    sender;
    originServerTs;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], EditSummary.prototype, "eventId", void 0);
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], EditSummary.prototype, "sender", void 0);
__decorate([
    Field(() => Timestamp),
    __metadata("design:type", Number)
], EditSummary.prototype, "originServerTs", void 0);
EditSummary = __decorate([
    ObjectType({ description: "The m.replace aggregation: the latest valid edit of an event (its content stays as sent)." })
], EditSummary);
export { EditSummary };
let RelatedEventEdge = class RelatedEventEdge {
    node;
    cursor;
};
__decorate([
    Field(() => Event),
    __metadata("design:type", Event)
], RelatedEventEdge.prototype, "node", void 0);
__decorate([
    Field(() => String, { description: "A stream token: `after:` it gives the events that come after this one." }),
    __metadata("design:type", String)
], RelatedEventEdge.prototype, "cursor", void 0);
RelatedEventEdge = __decorate([
    ObjectType()
], RelatedEventEdge);
export { RelatedEventEdge };
let RelatedEventConnection = class RelatedEventConnection {
    edges;
    pageInfo;
};
__decorate([
    Field(() => [RelatedEventEdge]),
    __metadata("design:type", Array)
], RelatedEventConnection.prototype, "edges", void 0);
__decorate([
    Field(() => PageInfo),
    __metadata("design:type", PageInfo)
], RelatedEventConnection.prototype, "pageInfo", void 0);
RelatedEventConnection = __decorate([
    ObjectType({ description: "A page of events, oldest first (related events), or of thread roots, latest activity first." })
], RelatedEventConnection);
export { RelatedEventConnection };
let SpaceHierarchyRoom = SpaceHierarchyRoom_1 = class SpaceHierarchyRoom extends WithAvatarHttpUrl {
    roomId;
    name;
    topic;
    canonicalAlias;
    avatarUrl;
    numJoinedMembers;
    worldReadable;
    guestCanJoin;
    joinRule;
    roomType;
    roomVersion;
    allowedRoomIds;
    childrenState;
    static from(r) {
        return Object.assign(new SpaceHierarchyRoom_1(), {
            roomId: r.room_id,
            name: r.name ?? null,
            topic: r.topic ?? null,
            canonicalAlias: r.canonical_alias ?? null,
            avatarUrl: r.avatar_url ?? null,
            numJoinedMembers: r.num_joined_members,
            worldReadable: r.world_readable,
            guestCanJoin: r.guest_can_join,
            joinRule: r.join_rule,
            roomType: r.room_type ?? null,
            roomVersion: r.room_version,
            allowedRoomIds: r.allowed_room_ids ?? null,
            childrenState: r.children_state,
        });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], SpaceHierarchyRoom.prototype, "roomId", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], SpaceHierarchyRoom.prototype, "name", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], SpaceHierarchyRoom.prototype, "topic", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], SpaceHierarchyRoom.prototype, "canonicalAlias", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], SpaceHierarchyRoom.prototype, "avatarUrl", void 0);
__decorate([
    Field(() => Int),
    __metadata("design:type", Number)
], SpaceHierarchyRoom.prototype, "numJoinedMembers", void 0);
__decorate([
    Field(() => Boolean),
    __metadata("design:type", Boolean)
], SpaceHierarchyRoom.prototype, "worldReadable", void 0);
__decorate([
    Field(() => Boolean),
    __metadata("design:type", Boolean)
], SpaceHierarchyRoom.prototype, "guestCanJoin", void 0);
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], SpaceHierarchyRoom.prototype, "joinRule", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "m.space for a space." }),
    __metadata("design:type", Object)
], SpaceHierarchyRoom.prototype, "roomType", void 0);
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], SpaceHierarchyRoom.prototype, "roomVersion", void 0);
__decorate([
    Field(() => [String], { nullable: true, description: "Rooms whose members may join (restricted join rules)." }),
    __metadata("design:type", Object)
], SpaceHierarchyRoom.prototype, "allowedRoomIds", void 0);
__decorate([
    Field(() => [GraphQLJSONObject], { description: "The room's m.space.child events (stripped, with origin_server_ts)." }),
    __metadata("design:type", Array)
], SpaceHierarchyRoom.prototype, "childrenState", void 0);
SpaceHierarchyRoom = SpaceHierarchyRoom_1 = __decorate([
    ObjectType({ description: "A room of a space hierarchy (GET /hierarchy)." })
], SpaceHierarchyRoom);
export { SpaceHierarchyRoom };
let SpaceHierarchy = class SpaceHierarchy {
    rooms;
    nextBatch;
};
__decorate([
    Field(() => [SpaceHierarchyRoom]),
    __metadata("design:type", Array)
], SpaceHierarchy.prototype, "rooms", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "Pass as `after` for the next page; null at the end." }),
    __metadata("design:type", Object)
], SpaceHierarchy.prototype, "nextBatch", void 0);
SpaceHierarchy = __decorate([
    ObjectType({ description: "A page of a space hierarchy, depth first." })
], SpaceHierarchy);
export { SpaceHierarchy };
