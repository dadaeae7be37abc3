// Relay-style connections (https://relay.dev/graphql/connections.htm): PageInfo, shared by every
// connection type, and the checks of the page-size arguments. Cursors are stable stream tokens
// (`s<pos>`) or, for members, user ids: a cursor stays valid while new items arrive.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import { MatrixError } from "../../domain/errors.ts";

@ObjectType({ description: "Where a page of a connection lies (Relay's PageInfo)." })
export class PageInfo {
  @Field(() => Boolean, { description: "More items come after this page (forward paging with first/after)." })
  hasNextPage!: boolean;

  @Field(() => Boolean, { description: "More items come before this page (backward paging with last/before)." })
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true, description: "The cursor of the first edge (null when the page is empty)." })
  startCursor!: string | null;

  @Field(() => String, { nullable: true, description: "The cursor of the last edge (null when the page is empty)." })
  endCursor!: string | null;

  /** The page info of a page the REST face pages by an opaque `next_batch` token: forward paging only. */
  static ofNextBatch(nextBatch: string | null): PageInfo {
    return Object.assign(new PageInfo(), { hasNextPage: nextBatch !== null, hasPreviousPage: false, startCursor: null, endCursor: nextBatch });
  }

  static of(p: { hasNextPage: boolean; hasPreviousPage: boolean; cursors: string[] }): PageInfo {
    return Object.assign(new PageInfo(), {
      hasNextPage: p.hasNextPage,
      hasPreviousPage: p.hasPreviousPage,
      startCursor: p.cursors[0] ?? null,
      endCursor: p.cursors[p.cursors.length - 1] ?? null,
    });
  }
}

/** A page size argument (first/last): a non-negative integer, else M_INVALID_PARAM. */
export function pageSize(value: number | null | undefined, fallback: number, name: string): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) throw new MatrixError("M_INVALID_PARAM", `${name} must be a non-negative integer`, 400);
  return value;
}
