// Remote users' profiles (GET /_matrix/federation/v1/query/profile to their server), cached in memory:
// bounded (the `remote_profile` cache, sized like every cache by caches.*), fresh for
// REMOTE_PROFILE_FRESH_MS, a "no such user" for REMOTE_PROFILE_MISSING_MS; an entry past its freshness is
// fetched again, and kept serving (up to REMOTE_PROFILE_STALE_MS) while the user's server does not
// answer. A member event from the user's server carrying a new profile drops the entry (a commit
// listener), so a rename shows on the next lookup. Concurrent lookups of one user share one request.
// From an answer (untrusted input) a string displayname, an avatar_url that is a well-formed mxc:// URI
// and a string m.tz are taken (the spec's profile schema allows no other), and every other field whose
// key is a profile key (spec v1.16 extended profiles, any JSON value); anything else is left out. Entries
// are weighed by their size, so a few servers answering 64 KiB profiles cannot fill memory.
// Spec: Server-Server API "Querying for information" (query/profile); Client-Server API "Profiles".
import { forbidden, notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import type { CommitListener } from "../consumers/commit-feed.ts";
import { FederationError } from "../../federation/errors.ts";
import { serverOfUser } from "./room-servers.ts";
import { shownMxc } from "../media/ids.ts";
import { stringifyJson } from "../json-limits.ts";
import { AVATAR_URL, DISPLAYNAME, MAX_PROFILE_BYTES, TIME_ZONE, isProfileKey, putField } from "../profile/keys.ts";

export const REMOTE_PROFILE_FRESH_MS = 10 * 60_000;
export const REMOTE_PROFILE_MISSING_MS = 60_000;
export const REMOTE_PROFILE_STALE_MS = 24 * 3600_000;

export interface RemoteProfile {
  displayname?: string;
  avatar_url?: string;
  [key: string]: unknown;
}

interface Entry {
  /** Undefined: the server said there is no such user. */
  profile: RemoteProfile | undefined;
  fetchedTs: number;
  /** The profile's approximate size in memory (its JSON text's length, doubled). */
  weight: number;
}

function cacheOf(s: Services) {
  return s.caches.get<string, Entry>("remote_profile", 10_000, { weigh: (e, key) => 200 + key.length * 2 + e.weight, baseWeight: 32 * 1024 * 1024 });
}

/** The fields of a query/profile answer Weft keeps (see the header). */
function profileFromAnswer(a: Record<string, unknown>): RemoteProfile {
  const profile: RemoteProfile = {};
  if (typeof a.displayname === "string") profile.displayname = a.displayname;
  const avatar = shownMxc(a.avatar_url);
  if (avatar !== undefined) profile.avatar_url = avatar;
  for (const [k, v] of Object.entries(a)) {
    if (k === DISPLAYNAME || k === AVATAR_URL || !isProfileKey(k) || (k === TIME_ZONE && typeof v !== "string")) continue;
    putField(profile, k, v);
  }
  return profile;
}

async function fetchProfile(s: Services, userId: string): Promise<Entry> {
  let answer: unknown;
  try {
    // A profile is at most 64 KiB of compact JSON; room for a server that indents its answer.
    answer = await s.federation.getJson(serverOfUser(userId)!, "/_matrix/federation/v1/query/profile", { user_id: userId }, { maxBytes: 2 * MAX_PROFILE_BYTES, timeoutMs: 30_000 });
  } catch (err) {
    if (err instanceof FederationError && err.is(404)) return { profile: undefined, fetchedTs: s.clock.now(), weight: 0 };
    throw err;
  }
  const a = (typeof answer === "object" && answer !== null && !Array.isArray(answer) ? answer : {}) as Record<string, unknown>;
  const profile = profileFromAnswer(a);
  return { profile, fetchedTs: s.clock.now(), weight: 2 * stringifyJson(profile).length };
}

/** A remote user's whole profile: M_NOT_FOUND when their server knows no such user, M_FORBIDDEN when it refuses. */
export async function remoteProfile(s: Services, userId: string): Promise<RemoteProfile> {
  const cache = cacheOf(s);
  const now = s.clock.now();
  const hit = cache.get(userId);
  if (hit && now - hit.fetchedTs < (hit.profile ? REMOTE_PROFILE_FRESH_MS : REMOTE_PROFILE_MISSING_MS)) {
    if (!hit.profile) throw notFound("Profile was not found");
    return hit.profile;
  }
  const running = s.caches.get<string, Promise<Entry>>("remote_profile_requests", 1000);
  let p = running.get(userId);
  if (!p) {
    p = fetchProfile(s, userId).finally(() => running.delete(userId));
    running.set(userId, p);
  }
  let entry: Entry;
  try {
    entry = await p;
  } catch (err) {
    if (err instanceof FederationError && err.is(403)) throw forbidden("Profile isn't available");
    // The user's server does not answer: what we knew, while not too old.
    if (hit?.profile && now - hit.fetchedTs < REMOTE_PROFILE_STALE_MS) return hit.profile;
    throw err;
  }
  cache.set(userId, entry);
  if (!entry.profile) throw notFound("Profile was not found");
  return entry.profile;
}

/** A remote user's member event may carry a new profile: their cached one is dropped (declared in src/main.ts). */
export const forgetChangedRemoteProfiles: CommitListener = (s, c) => {
  const cache = cacheOf(s);
  if (cache.size === 0) return;
  for (const e of c.events) {
    const p = e.pdu;
    if (p.type === "m.room.member" && typeof p.state_key === "string" && p.state_key === p.sender && serverOfUser(p.sender) !== s.config.server_name) cache.delete(p.state_key);
  }
};
