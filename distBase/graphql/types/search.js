var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
// GraphQL types of searching: full-text search results of room events (a Relay connection with the
// count and highlights of POST /search) and user directory results (POST /user_directory/search).
import "reflect-metadata";
import { Field, Float, Int, ObjectType, registerEnumType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.js";
import { PageInfo } from "./connection.js";
import { Event } from "./event.js";
import { Room } from "./room.js";
export var SearchOrder;
(function (SearchOrder) {
    SearchOrder["RANK"] = "rank";
    SearchOrder["RECENT"] = "recent";
})(SearchOrder || (SearchOrder = {}));
registerEnumType(SearchOrder, { name: "SearchOrder", description: "How search results are ordered: by rank (closest match first) or newest first." });
let SearchResult = class SearchResult {
    rank;
    event;
    room;
};
__decorate([
    Field(() => Float, { description: "How closely the event matches (higher is closer)." }),
    __metadata("design:type", Number)
], SearchResult.prototype, "rank", void 0);
__decorate([
    Field(() => Event),
    __metadata("design:type", Event)
], SearchResult.prototype, "event", void 0);
__decorate([
    Field(() => Room),
    __metadata("design:type", Room)
], SearchResult.prototype, "room", void 0);
SearchResult = __decorate([
    ObjectType({ description: "A room event that matched a search." })
], SearchResult);
export { SearchResult };
let SearchResultEdge = class SearchResultEdge {
    node;
    cursor;
};
__decorate([
    Field(() => SearchResult),
    __metadata("design:type", SearchResult)
], SearchResultEdge.prototype, "node", void 0);
__decorate([
    Field(() => String, { description: "Resumes the search just after this result (pass as `after`)." }),
    __metadata("design:type", String)
], SearchResultEdge.prototype, "cursor", void 0);
SearchResultEdge = __decorate([
    ObjectType()
], SearchResultEdge);
export { SearchResultEdge };
let SearchResultConnection = class SearchResultConnection {
    edges;
    pageInfo;
    count;
    highlights;
};
__decorate([
    Field(() => [SearchResultEdge]),
    __metadata("design:type", Array)
], SearchResultConnection.prototype, "edges", void 0);
__decorate([
    Field(() => PageInfo),
    __metadata("design:type", PageInfo)
], SearchResultConnection.prototype, "pageInfo", void 0);
__decorate([
    Field(() => Int, { description: "An approximate count of all matches." }),
    __metadata("design:type", Number)
], SearchResultConnection.prototype, "count", void 0);
__decorate([
    Field(() => [String], { description: "The words searched for, to highlight in results." }),
    __metadata("design:type", Array)
], SearchResultConnection.prototype, "highlights", void 0);
SearchResultConnection = __decorate([
    ObjectType({ description: "A page of search results, in the requested order." })
], SearchResultConnection);
export { SearchResultConnection };
let DirectoryUser = class DirectoryUser extends WithAvatarHttpUrl {
    userId;
    displayName;
    avatarUrl;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], DirectoryUser.prototype, "userId", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], DirectoryUser.prototype, "displayName", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "An mxc:// URI." }),
    __metadata("design:type", Object)
], DirectoryUser.prototype, "avatarUrl", void 0);
DirectoryUser = __decorate([
    ObjectType({ description: "A user found in the user directory." })
], DirectoryUser);
export { DirectoryUser };
let UserDirectoryResult = class UserDirectoryResult {
    results;
    limited;
};
__decorate([
    Field(() => [DirectoryUser]),
    __metadata("design:type", Array)
], UserDirectoryResult.prototype, "results", void 0);
__decorate([
    Field(() => Boolean, { description: "More users matched than the limit let through." }),
    __metadata("design:type", Boolean)
], UserDirectoryResult.prototype, "limited", void 0);
UserDirectoryResult = __decorate([
    ObjectType({ description: "Users matching a user directory search." })
], UserDirectoryResult);
export { UserDirectoryResult };
