// Per-request DataLoaders: each value asked for more than once in one operation is read once (a viewer's
// displayName and avatarUrl share one profile read). Built fresh for every HTTP request and every
// WebSocket operation, so nothing is cached across requests.
import DataLoader from "dataloader";
import { MatrixError } from "../domain/errors.ts";
import { getProfile, type Profile } from "../domain/profile/profile.ts";
import { knownMemberships, memberCounts, roomSummaries, type RoomSummary } from "../domain/rooms/batch-reads.ts";
import type { KnownMembership } from "../domain/rooms/read-access.ts";
import { aliasesOfRooms } from "../domain/directory/aliases.ts";
import { latestTimelines, type LatestTimeline } from "../domain/rooms/latest-timelines.ts";
import type { ThreadCounts } from "../domain/push/counts.ts";
import type { GraphqlContext } from "./context.ts";

export interface Loaders {
  /**
   * Profiles by user id, read as the context's requester (anonymously without a token). A profile with
   * nothing in it (the domain's M_NOT_FOUND) loads as {}: in GraphQL its fields are simply null.
   */
  profile: DataLoader<string, Profile>;
  /**
   * Room summaries (version, the viewer's membership, name, topic, avatar) by room id, as the requester
   * may see them; null for a room they may not see. A page of rooms is one batch: a few queries in all.
   * Mutations clear the rooms they change.
   */
  roomSummary: DataLoader<string, RoomSummary | null>;
  /** Local aliases by room id, as the requester may list them (the domain's rule; a refusal loads as its error). */
  roomAliases: DataLoader<string, string[]>;
  /**
   * The newest events of rooms (`timeline` without a cursor), keyed "<limit>:<roomId>": each page size
   * of a batch is one domain read over all its rooms (latest-timelines.ts).
   */
  latestTimeline: DataLoader<string, LatestTimeline>;
  /** The requester's unread counts per thread by room id (push/counts.ts: one read for the batch). */
  unreadCounts: DataLoader<string, ThreadCounts | undefined>;
  /** Joined and invited member counts by room id, current (one grouped count for the batch). */
  memberCounts: DataLoader<string, { joined: number; invited: number }>;
  /** The requester's membership row by room id (null: none), for the domain reads' `known` (state, members). */
  viewerMembership: DataLoader<string, KnownMembership>;
}

export function createLoaders(ctx: GraphqlContext): Loaders {
  return {
    profile: new DataLoader<string, Profile>(async (userIds) => {
      const requester = ctx.bearerToken === undefined ? undefined : await ctx.requester();
      return Promise.all(
        userIds.map((id) =>
          getProfile(ctx.s, requester, id).catch((err: unknown): Profile | Error => {
            if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND") return {};
            return err instanceof Error ? err : new Error(String(err));
          }),
        ),
      );
    }),
    roomSummary: new DataLoader<string, RoomSummary | null>(async (roomIds) => {
      const found = await roomSummaries(ctx.s, await ctx.requester(), roomIds);
      return roomIds.map((id) => found.get(id) ?? null);
    }),
    roomAliases: new DataLoader<string, string[]>(async (roomIds) => {
      const found = await aliasesOfRooms(ctx.s, await ctx.requester(), roomIds);
      return roomIds.map((id) => found.get(id)!);
    }),
    latestTimeline: new DataLoader<string, LatestTimeline>(async (keys) => {
      const r = await ctx.requester();
      const byLimit = new Map<number, string[]>();
      for (const k of keys) {
        const i = k.indexOf(":");
        const limit = Number(k.slice(0, i));
        byLimit.set(limit, [...(byLimit.get(limit) ?? []), k.slice(i + 1)]);
      }
      const found = new Map<string, LatestTimeline | Error>();
      for (const [limit, roomIds] of byLimit) for (const [id, t] of await latestTimelines(ctx.s, r, roomIds, limit)) found.set(`${limit}:${id}`, t);
      return keys.map((k) => found.get(k) ?? new Error(`no timeline for ${k}`));
    }),
    unreadCounts: new DataLoader<string, ThreadCounts | undefined>(async (roomIds) => {
      const r = await ctx.requester();
      const counts = await ctx.s.push.counts.get(ctx.s, r.userId, roomIds);
      return roomIds.map((id) => counts.get(id));
    }),
    viewerMembership: new DataLoader<string, KnownMembership>(async (roomIds) => {
      const found = await knownMemberships(ctx.s, (await ctx.requester()).userId, roomIds);
      return roomIds.map((id) => found.get(id) ?? null);
    }),
    memberCounts: new DataLoader<string, { joined: number; invited: number }>(async (roomIds) => {
      const counts = await memberCounts(ctx.s, roomIds);
      return roomIds.map((id) => counts.get(id) ?? { joined: 0, invited: 0 });
    }),
  };
}
