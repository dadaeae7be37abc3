// GraphQL types of searching: full-text search results of room events (a Relay connection with the
// count and highlights of POST /search) and user directory results (POST /user_directory/search).
import "reflect-metadata";
import { Arg, Ctx, Field, Float, Int, ObjectType, registerEnumType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.ts";
import { PageInfo } from "./connection.ts";
import { Event } from "./event.ts";
import { Room } from "./room.ts";

export enum SearchOrder {
  RANK = "rank",
  RECENT = "recent",
}
registerEnumType(SearchOrder, { name: "SearchOrder", description: "How search results are ordered: by rank (closest match first) or newest first." });

@ObjectType({ description: "A room event that matched a search." })
export class SearchResult {
  @Field(() => Float, { description: "How closely the event matches (higher is closer)." })
  rank!: number;

  @Field(() => Event)
  event!: Event;

  @Field(() => Room)
  room!: Room;
}

@ObjectType()
export class SearchResultEdge {
  @Field(() => SearchResult)
  node!: SearchResult;

  @Field(() => String, { description: "Resumes the search just after this result (pass as `after`)." })
  cursor!: string;
}

@ObjectType({ description: "A page of search results, in the requested order." })
export class SearchResultConnection {
  @Field(() => [SearchResultEdge])
  edges!: SearchResultEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => Int, { description: "An approximate count of all matches." })
  count!: number;

  @Field(() => [String], { description: "The words searched for, to highlight in results." })
  highlights!: string[];
}

@ObjectType({ description: "A user found in the user directory." })
export class DirectoryUser extends WithAvatarHttpUrl {
  @Field(() => String)
  userId!: string;

  @Field(() => String, { nullable: true })
  displayName!: string | null;

  @Field(() => String, { nullable: true, description: "An mxc:// URI." })
  avatarUrl!: string | null;
}

@ObjectType({ description: "Users matching a user directory search." })
export class UserDirectoryResult {
  @Field(() => [DirectoryUser])
  results!: DirectoryUser[];

  @Field(() => Boolean, { description: "More users matched than the limit let through." })
  limited!: boolean;
}
