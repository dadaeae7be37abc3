var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var Event_1;
// GraphQL type of a room event: the spec's ClientEvent (Client-Server API "Room Event Format") in
// camelCase, `content` and `unsigned` as JSON objects (the escape hatch for every event type), plus typed
// accessors for the common fields (body, msgtype, membership). Also the backward timeline connection.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.js";
import { Timestamp } from "./scalars.js";
import { PageInfo } from "./connection.js";
const str = (v) => (typeof v === "string" ? v : null);
let Event = Event_1 = class Event {
    eventId;
    roomId;
    type;
    sender;
    stateKey;
    originServerTs;
    content;
    unsigned;
    redacted;
    redacts;
    transactionId;
    body;
    msgtype;
    membership;
    static from(e, roomId) {
        const unsigned = e.unsigned && Object.keys(e.unsigned).length > 0 ? e.unsigned : null;
        return Object.assign(new Event_1(), {
            eventId: e.event_id,
            roomId: e.room_id ?? roomId,
            type: e.type,
            sender: e.sender,
            stateKey: e.state_key ?? null,
            originServerTs: e.origin_server_ts,
            content: e.content,
            unsigned,
            redacted: e.unsigned?.redacted_because !== undefined,
            redacts: e.redacts ?? null,
            transactionId: str(e.unsigned?.transaction_id),
            body: str(e.content.body),
            msgtype: str(e.content.msgtype),
            membership: e.type === "m.room.member" ? str(e.content.membership) : null,
        });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], Event.prototype, "eventId", void 0);
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], Event.prototype, "roomId", void 0);
__decorate([
    Field(() => String, { description: "The event type, e.g. m.room.message." }),
    __metadata("design:type", String)
], Event.prototype, "type", void 0);
__decorate([
    Field(() => String, { description: "The user ID of the sender." }),
    __metadata("design:type", String)
], Event.prototype, "sender", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "Set on state events (possibly the empty string), null on others." }),
    __metadata("design:type", Object)
], Event.prototype, "stateKey", void 0);
__decorate([
    Field(() => Timestamp, { description: "When the sending server says it sent the event." }),
    __metadata("design:type", Number)
], Event.prototype, "originServerTs", void 0);
__decorate([
    Field(() => GraphQLJSONObject, { description: "The event content, whatever its type (empty once redacted, bar the keys redaction keeps)." }),
    __metadata("design:type", Object)
], Event.prototype, "content", void 0);
__decorate([
    Field(() => GraphQLJSONObject, { nullable: true, description: "The spec's unsigned data: age, transaction_id, prev_content, redacted_because ..." }),
    __metadata("design:type", Object)
], Event.prototype, "unsigned", void 0);
__decorate([
    Field(() => Boolean, { description: "The event was redacted (unsigned.redacted_because says by which event)." }),
    __metadata("design:type", Boolean)
], Event.prototype, "redacted", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "For m.room.redaction: the event it redacts." }),
    __metadata("design:type", Object)
], Event.prototype, "redacts", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The client's transaction ID, shown only to the device that sent the event." }),
    __metadata("design:type", Object)
], Event.prototype, "transactionId", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "content.body (messages), when a string." }),
    __metadata("design:type", Object)
], Event.prototype, "body", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "content.msgtype (m.room.message), when a string." }),
    __metadata("design:type", Object)
], Event.prototype, "msgtype", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "content.membership (m.room.member), when a string." }),
    __metadata("design:type", Object)
], Event.prototype, "membership", void 0);
Event = Event_1 = __decorate([
    ObjectType({ description: "A room event as clients see it (the spec's ClientEvent)." })
], Event);
export { Event };
let EventEdge = class EventEdge {
    node;
    cursor;
};
__decorate([
    Field(() => Event),
    __metadata("design:type", Event)
], EventEdge.prototype, "node", void 0);
__decorate([
    Field(() => String, { description: "The stream token of the position just before this event: `timeline(before:)` it pages older events." }),
    __metadata("design:type", String)
], EventEdge.prototype, "cursor", void 0);
EventEdge = __decorate([
    ObjectType()
], EventEdge);
export { EventEdge };
let EventConnection = class EventConnection {
    edges;
    pageInfo;
};
__decorate([
    Field(() => [EventEdge]),
    __metadata("design:type", Array)
], EventConnection.prototype, "edges", void 0);
__decorate([
    Field(() => PageInfo),
    __metadata("design:type", PageInfo)
], EventConnection.prototype, "pageInfo", void 0);
EventConnection = __decorate([
    ObjectType({ description: "A page of a room's timeline, oldest event first." })
], EventConnection);
export { EventConnection };
