// POST /user_directory/search: local users, and remote users joined to rooms here (with the name of their
// member event), matched case-insensitively on their user ID's localpart and display name, every word of
// the term as a word prefix (as Synapse does). By default (user_directory.search_all_users false) only
// users who share a joined room with the requester or are joined to a public room (join rule public,
// history world_readable, or in the room directory) are visible; with search_all_users, every local user
// and every remote user joined somewhere. Deactivated and support users never appear.
// Ranking: exact matches, then whole-name prefixes, then word prefixes; then users sharing a room with
// the requester; then those with a display name, an avatar. Spec: Client-Server API "User directory".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { DirectoryCandidate } from "../store/user-directory.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { checkSearchTerm } from "../text.ts";

export interface DirectoryUser {
  user_id: string;
  display_name?: string;
  avatar_url?: string;
}

export interface DirectoryResult {
  results: DirectoryUser[];
  limited: boolean;
}

export const DEFAULT_DIRECTORY_LIMIT = 10;
const MAX_LIMIT = 1000;
/** Most candidates the database hands back for precise matching and ranking. */
const MAX_CANDIDATES = 5000;

const normalize = (text: string) => text.normalize("NFKC").toLowerCase();
const wordsOf = (text: string) => normalize(text).match(/[\p{L}\p{N}]+/gu) ?? [];

/** Checks the body of POST /user_directory/search. */
export function parseDirectoryRequest(body: Record<string, unknown>): { term: string; limit: number } {
  if (body.search_term === undefined || body.search_term === null) throw new MatrixError("M_MISSING_PARAM", "Missing search_term", 400);
  if (typeof body.search_term !== "string") throw new MatrixError("M_BAD_JSON", "search_term must be a string", 400);
  const limit = body.limit ?? DEFAULT_DIRECTORY_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0) throw new MatrixError("M_BAD_JSON", "limit must be a non-negative integer", 400);
  return { term: body.search_term, limit };
}

/** How well `c` matches: 0 no match, 1 every word a word prefix, 2 a whole-name prefix, 3 exact. */
function score(c: DirectoryCandidate, term: string, words: string[]): number {
  const localpart = normalize(c.userId.slice(1, c.userId.indexOf(":")));
  const fullId = normalize(c.userId);
  const name = c.displayname ? normalize(c.displayname) : "";
  const t = normalize(term.trim());
  const bare = t.startsWith("@") ? t.slice(1) : t;
  if (t === fullId || bare === localpart || (name !== "" && t === name)) return 3;
  if ((t.startsWith("@") && fullId.startsWith(t)) || localpart.startsWith(bare) || (name !== "" && name.startsWith(t))) return 2;
  const tokens = [...wordsOf(localpart), ...wordsOf(name)];
  if (words.length > 0 && words.every((w) => tokens.some((tok) => tok.startsWith(w)))) return 1;
  return 0;
}

export async function searchUserDirectory(s: Services, r: Requester, term: string, limit: number): Promise<DirectoryResult> {
  requireNotGuest(r, "searchUserDirectory");
  checkSearchTerm(term, "search_term");
  const cfg = s.config.user_directory;
  const max = Math.min(limit, MAX_LIMIT);
  const words = [...new Set(wordsOf(term))];
  if (!cfg.enabled || words.length === 0 || max === 0) return { results: [], limited: false };
  const candidates = await s.userDirectory.candidates(r.userId, words, { searchAll: cfg.search_all_users, max: MAX_CANDIDATES });
  const ranked = candidates
    .map((c) => ({ c, score: score(c, term, words) }))
    .filter((x) => x.score > 0)
    .sort(
      (a, b) =>
        b.score - a.score ||
        Number(b.c.sharesRoom) - Number(a.c.sharesRoom) ||
        Number(b.c.displayname !== null) - Number(a.c.displayname !== null) ||
        Number(b.c.avatarUrl !== null) - Number(a.c.avatarUrl !== null) ||
        (a.c.userId < b.c.userId ? -1 : a.c.userId > b.c.userId ? 1 : 0),
    );
  return {
    results: ranked.slice(0, max).map(({ c }) => ({
      user_id: c.userId,
      ...(c.displayname !== null ? { display_name: c.displayname } : {}),
      ...(c.avatarUrl !== null ? { avatar_url: c.avatarUrl } : {}),
    })),
    limited: ranked.length > max || candidates.length >= MAX_CANDIDATES,
  };
}
