var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var PageInfo_1;
// Relay-style connections (https://relay.dev/graphql/connections.htm): PageInfo, shared by every
// connection type, and the checks of the page-size arguments. Cursors are stable stream tokens
// (`s<pos>`) or, for members, user ids: a cursor stays valid while new items arrive.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import { MatrixError } from "../../domain/errors.js";
let PageInfo = PageInfo_1 = class PageInfo {
    hasNextPage;
    hasPreviousPage;
    startCursor;
    endCursor;
    static of(p) {
        return Object.assign(new PageInfo_1(), {
            hasNextPage: p.hasNextPage,
            hasPreviousPage: p.hasPreviousPage,
            startCursor: p.cursors[0] ?? null,
            endCursor: p.cursors[p.cursors.length - 1] ?? null,
        });
    }
};
__decorate([
    Field(() => Boolean, { description: "More items come after this page (forward paging with first/after)." }),
    __metadata("design:type", Boolean)
], PageInfo.prototype, "hasNextPage", void 0);
__decorate([
    Field(() => Boolean, { description: "More items come before this page (backward paging with last/before)." }),
    __metadata("design:type", Boolean)
], PageInfo.prototype, "hasPreviousPage", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The cursor of the first edge (null when the page is empty)." }),
    __metadata("design:type", Object)
], PageInfo.prototype, "startCursor", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The cursor of the last edge (null when the page is empty)." }),
    __metadata("design:type", Object)
], PageInfo.prototype, "endCursor", void 0);
PageInfo = PageInfo_1 = __decorate([
    ObjectType({ description: "Where a page of a connection lies (Relay's PageInfo)." })
], PageInfo);
export { PageInfo };
/** A page size argument (first/last): a non-negative integer, else M_INVALID_PARAM. */
export function pageSize(value, fallback, name) {
    if (value === null || value === undefined)
        return fallback;
    if (!Number.isInteger(value) || value < 0)
        throw new MatrixError("M_INVALID_PARAM", `${name} must be a non-negative integer`, 400);
    return value;
}
