// Rooms every new account joins (Synapse's auto_join_rooms): after registration the user joins each
// listed room; a local alias that names no room yet is created first (autocreate_auto_join_rooms) — by
// auto_join_mxid_localpart's user when set (who invites the new user into a private preset), otherwise
// only for the server's first real user, who creates it. Guests join when auto_join_rooms_for_guests;
// application-service users never. A room that cannot be joined is logged and skipped.
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { createRoom } from "../rooms/create-room.ts";
import { inviteUser, joinRoom } from "../rooms/membership.ts";
import { makeUserId, parseRoomAlias } from "../ids.ts";

export interface RegisteredAccount {
  userId: string;
  isGuest: boolean;
  appserviceId?: string;
}

/** Run after an account was created (src/main.ts declares the list). */
export type RegistrationHook = (s: Services, account: RegisteredAccount) => Promise<void>;

const acting = (userId: string, isGuest = false): Requester => ({ userId, deviceId: null, isGuest, isAdmin: false, accessTokenId: null });

async function resolveLocal(s: Services, alias: string): Promise<string | undefined> {
  for (const resolve of s.extensions.aliasResolvers) {
    const id = await resolve(s, alias);
    if (id) return id;
  }
  return undefined;
}

/** The account that creates missing rooms: auto_join_mxid_localpart's (registered on first use). */
async function roomCreator(s: Services): Promise<string | undefined> {
  const localpart = s.config.auto_join_mxid_localpart;
  if (localpart === undefined) return undefined;
  const userId = makeUserId(localpart, s.config.server_name);
  if (!(await s.users.exists(userId))) {
    await s.db.$transaction((tx) => s.users.create(tx, { userId, passwordHash: null, displayname: localpart }, s.clock.now()));
  }
  return userId;
}

async function isFirstRealUser(s: Services): Promise<boolean> {
  const n = await s.db.user.count({ where: { isGuest: false, appserviceId: null, OR: [{ userType: null }, { userType: { not: "support" } }] } });
  return n <= 1;
}

export const autoJoinRooms: RegistrationHook = async (s, account) => {
  const c = s.config;
  if (c.auto_join_rooms.length === 0 || account.appserviceId !== undefined) return;
  if (account.isGuest && !c.auto_join_rooms_for_guests) return;
  const user = acting(account.userId, account.isGuest);
  for (const target of c.auto_join_rooms) {
    try {
      let roomId = target.startsWith("!") ? target : await resolveLocal(s, target);
      if (roomId === undefined && target.startsWith("#") && c.autocreate_auto_join_rooms && parseRoomAlias(target).serverName === c.server_name) {
        const creator = (await roomCreator(s)) ?? ((await isFirstRealUser(s)) && !account.isGuest ? account.userId : undefined);
        if (creator !== undefined) {
          roomId = (
            await createRoom(s, acting(creator), {
              preset: c.autocreate_auto_join_room_preset,
              visibility: c.autocreate_auto_join_room_preset === "public_chat" ? "public" : "private",
              room_alias_name: parseRoomAlias(target).localpart,
              creation_content: c.autocreate_auto_join_rooms_federated ? {} : { "m.federate": false },
            })
          ).room_id;
          if (creator !== account.userId && c.autocreate_auto_join_room_preset !== "public_chat") await inviteUser(s, acting(creator), roomId, { user_id: account.userId });
        }
      }
      if (roomId === undefined && target.startsWith("#")) roomId = target; // another server's alias: joinRoom asks it
      if (roomId === undefined) continue;
      await joinRoom(s, user, roomId); // the creator is joined already: a no-op for them
    } catch (err) {
      s.log.warn({ err, room: target, userId: account.userId }, "could not auto-join a room");
    }
  }
};
