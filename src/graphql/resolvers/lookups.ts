// Small lookups and tokens on the GraphQL face, each over its REST twin's domain operation:
// `resolveAlias` (GET /directory/room/{roomAlias}), `directoryVisibility` (GET /directory/list/room/{roomId}),
// `eventAtTimestamp` (GET /v1/rooms/{roomId}/timestamp_to_event), `requestOpenIdToken` (POST
// /user/{userId}/openid/request_token) and `refreshTokens` (POST /refresh, needs no access token).
import "reflect-metadata";
import { Arg, Ctx, Float, Mutation, Query, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { OpenIdToken, RefreshedTokens, RoomAliasTarget, TimestampEvent } from "../types/lookups.ts";
import { getAlias } from "../../domain/directory/aliases.ts";
import { getDirectoryVisibility } from "../../domain/directory/visibility.ts";
import { timestampToEvent } from "../../domain/rooms/timestamp-to-event.ts";
import { requestOpenIdToken } from "../../domain/accounts/openid.ts";
import { refresh } from "../../domain/accounts/refresh.ts";
import { MatrixError } from "../../domain/errors.ts";

@Resolver()
export class LookupsResolver {
  @Query(() => RoomAliasTarget, { description: "The room an alias names, local or remote, with servers to join through (GET /directory/room/{roomAlias}); M_NOT_FOUND when none. Needs no token." })
  async resolveAlias(@Arg("alias", () => String) alias: string, @Ctx() ctx: GraphqlContext): Promise<RoomAliasTarget> {
    const a = await getAlias(ctx.s, alias);
    return Object.assign(new RoomAliasTarget(), { roomId: a.room_id, servers: a.servers });
  }

  @Query(() => String, { description: "Whether a room is published in this server's directory: public or private (GET /directory/list/room/{roomId}). Needs no token." })
  async directoryVisibility(@Arg("roomId", () => String) roomId: string, @Ctx() ctx: GraphqlContext): Promise<string> {
    return (await getDirectoryVisibility(ctx.s, roomId)).visibility;
  }

  @Query(() => TimestampEvent, {
    description: "The event of a room the viewer may see nearest `ts`, at or after it (direction f) or at or before it (b) (GET /v1/rooms/{roomId}/timestamp_to_event); M_NOT_FOUND when none.",
  })
  async eventAtTimestamp(
    @Arg("roomId", () => String) roomId: string,
    @Arg("ts", () => Float, { description: "ms since the epoch." }) ts: number,
    @Arg("direction", () => String, { description: "f (forward) or b (backward)." }) direction: string,
    @Ctx() ctx: GraphqlContext,
  ): Promise<TimestampEvent> {
    if (direction !== "b" && direction !== "f") throw new MatrixError("M_INVALID_PARAM", "direction must be b or f", 400);
    if (!Number.isSafeInteger(ts) || ts < 0) throw new MatrixError("M_INVALID_PARAM", "ts must be a non-negative integer", 400);
    const e = await timestampToEvent(ctx.s, await ctx.requester(), roomId, ts, direction);
    return Object.assign(new TimestampEvent(), { eventId: e.event_id, originServerTs: e.origin_server_ts });
  }

  @Mutation(() => OpenIdToken, { description: "An OpenID token for a third party (POST /user/{userId}/openid/request_token), valid an hour." })
  async requestOpenIdToken(@Ctx() ctx: GraphqlContext): Promise<OpenIdToken> {
    const r = await ctx.requester();
    const t = requestOpenIdToken(ctx.s, r, r.userId);
    return Object.assign(new OpenIdToken(), { accessToken: t.access_token, tokenType: t.token_type, matrixServerName: t.matrix_server_name, expiresIn: t.expires_in });
  }

  @Mutation(() => RefreshedTokens, {
    description: "Trades a refresh token for a new access and refresh token (POST /refresh). Needs no access token; M_UNKNOWN_TOKEN (with soft_logout) for a bad one.",
  })
  async refreshTokens(@Arg("refreshToken", () => String) refreshToken: string, @Ctx() ctx: GraphqlContext): Promise<RefreshedTokens> {
    const t = await refresh(ctx.s, refreshToken);
    return Object.assign(new RefreshedTokens(), { accessToken: t.access_token, refreshToken: t.refresh_token, expiresInMs: t.expires_in_ms ?? null });
  }
}
