// Server-side key backups on the GraphQL face, over the REST face's domain operations
// (src/domain/e2ee/key-backup.ts): `keyBackup(version)` and `roomKeys(version, roomId, sessionId)` queries;
// `createKeyBackupVersion`, `updateKeyBackupVersion`, `deleteKeyBackupVersion`, `putRoomKeys`,
// `deleteRoomKeys` mutations. Spec: Client-Server API "Server-side key backups".
import "reflect-metadata";
import { Arg, Ctx, Mutation, Query, Resolver } from "type-graphql";
import { GraphQLJSON } from "../types/json.ts";
import type { GraphqlContext } from "../context.ts";
import { BackedUpRoomKey, KeyBackupVersion, RoomKeysUpdate } from "../types/e2ee.ts";
import { MatrixError } from "../../domain/errors.ts";
import {
  createBackupVersion, deleteBackupVersion, deleteRoomKeys, getAllRoomKeys, getBackupVersion, getRoomRoomKeys, getSessionRoomKey,
  putRoomKeys, updateBackupVersion, type KeyBackupData,
} from "../../domain/e2ee/key-backup.ts";

const keyOf = (roomId: string, sessionId: string, k: KeyBackupData) =>
  Object.assign(new BackedUpRoomKey(), { roomId, sessionId, firstMessageIndex: k.first_message_index, forwardedCount: k.forwarded_count, isVerified: k.is_verified, sessionData: k.session_data });

const sessionsOf = (roomId: string, sessions: Record<string, KeyBackupData>) => Object.entries(sessions).map(([sid, k]) => keyOf(roomId, sid, k));

const update = (r: { etag: string; count: number }) => Object.assign(new RoomKeysUpdate(), r);

@Resolver()
export class KeyBackupResolver {
  @Query(() => KeyBackupVersion, { nullable: true, description: "The viewer's current key backup version, or the one given (GET /room_keys/version[/{version}]); null when there is none." })
  async keyBackup(@Arg("version", () => String, { nullable: true }) version: string | null, @Ctx() ctx: GraphqlContext): Promise<KeyBackupVersion | null> {
    try {
      const v = await getBackupVersion(ctx.s, await ctx.requester(), version ?? undefined);
      return Object.assign(new KeyBackupVersion(), { version: v.version, algorithm: v.algorithm, authData: v.auth_data, count: v.count, etag: v.etag });
    } catch (err) {
      if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND") return null;
      throw err;
    }
  }

  @Mutation(() => String, { description: "Creates a key backup version, which becomes the current one (POST /room_keys/version); returns its version." })
  async createKeyBackupVersion(
    @Arg("algorithm", () => String, { description: "e.g. m.megolm_backup.v1.curve25519-aes-sha2." }) algorithm: string,
    @Arg("authData", () => GraphQLJSON, { description: "The algorithm's auth data (for v1: public_key and signatures)." }) authData: unknown,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string> {
    return (await createBackupVersion(ctx.s, await ctx.requester(), { algorithm, authData })).version;
  }

  @Mutation(() => Boolean, { description: "Replaces a backup version's auth data; its algorithm cannot change (PUT /room_keys/version/{version})." })
  async updateKeyBackupVersion(
    @Arg("version", () => String) version: string,
    @Arg("algorithm", () => String) algorithm: string,
    @Arg("authData", () => GraphQLJSON) authData: unknown,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    await updateBackupVersion(ctx.s, await ctx.requester(), version, { algorithm, authData });
    return true;
  }

  @Mutation(() => Boolean, { description: "Deletes a backup version and its keys (DELETE /room_keys/version/{version})." })
  async deleteKeyBackupVersion(@Arg("version", () => String) version: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await deleteBackupVersion(ctx.s, await ctx.requester(), version);
    return true;
  }

  @Mutation(() => RoomKeysUpdate, {
    description:
      "Stores session keys in the current backup version (PUT /room_keys/keys): a stored key is replaced only by a better one " +
      "(verified, then a lower first message index, then fewer forwards). M_WRONG_ROOM_KEYS_VERSION (with `current_version` " +
      "in the extensions) when `version` is not the current one.",
  })
  async putRoomKeys(
    @Arg("version", () => String) version: string,
    @Arg("keys", () => [BackedUpRoomKey]) keys: BackedUpRoomKey[],
    @Ctx() ctx: GraphqlContext,
  ): Promise<RoomKeysUpdate> {
    const rooms = new Map<string, Map<string, KeyBackupData>>();
    for (const k of keys) {
      let m = rooms.get(k.roomId);
      if (!m) rooms.set(k.roomId, (m = new Map()));
      m.set(k.sessionId, { first_message_index: k.firstMessageIndex, forwarded_count: k.forwardedCount, is_verified: k.isVerified, session_data: k.sessionData });
    }
    return update(await putRoomKeys(ctx.s, await ctx.requester(), version, rooms));
  }

  @Query(() => [BackedUpRoomKey], {
    description: "The keys of a backup version (GET /room_keys/keys[/{roomId}[/{sessionId}]]): all, one room's (`roomId`), or one session's (`roomId` and `sessionId`).",
  })
  async roomKeys(
    @Arg("version", () => String) version: string,
    @Arg("roomId", () => String, { nullable: true }) roomId: string | null,
    @Arg("sessionId", () => String, { nullable: true }) sessionId: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<BackedUpRoomKey[]> {
    const r = await ctx.requester();
    // An omitted argument is undefined, an explicit one null: both mean "not given".
    if (sessionId != null) {
      if (roomId == null) throw new MatrixError("M_MISSING_PARAM", "sessionId needs roomId", 400);
      return [keyOf(roomId, sessionId, await getSessionRoomKey(ctx.s, r, version, roomId, sessionId))];
    }
    if (roomId != null) return sessionsOf(roomId, (await getRoomRoomKeys(ctx.s, r, version, roomId)).sessions);
    return Object.entries((await getAllRoomKeys(ctx.s, r, version)).rooms).flatMap(([rid, room]) => sessionsOf(rid, room.sessions));
  }

  @Mutation(() => RoomKeysUpdate, { description: "Deletes keys from a backup version (DELETE /room_keys/keys[/{roomId}[/{sessionId}]]): all, one room's, or one session's." })
  async deleteRoomKeys(
    @Arg("version", () => String) version: string,
    @Arg("roomId", () => String, { nullable: true }) roomId: string | null,
    @Arg("sessionId", () => String, { nullable: true }) sessionId: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<RoomKeysUpdate> {
    if (sessionId != null && roomId == null) throw new MatrixError("M_MISSING_PARAM", "sessionId needs roomId", 400);
    return update(await deleteRoomKeys(ctx.s, await ctx.requester(), version, roomId ?? undefined, sessionId ?? undefined));
  }
}
