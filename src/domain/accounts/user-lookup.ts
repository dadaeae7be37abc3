// Whether a local user exists, for lookups that name one (a profile, an invite): when the account is
// unknown, the declared user queries (application services, src/main.ts `userQueries`) may create it and
// are asked before the answer is no. Spec: Application Service API "Querying" (User query).
import type { Services } from "../services.ts";

/** Asked about an unknown local user; true when it exists now. */
export type UserQuery = (s: Services, userId: string) => Promise<boolean>;

export async function localUserExists(s: Services, userId: string): Promise<boolean> {
  return (await s.users.exists(userId)) || (await askAboutUnknownUser(s, userId));
}

/** Runs the user queries for a local user the caller found unknown; true when it exists now. */
export async function askAboutUnknownUser(s: Services, userId: string): Promise<boolean> {
  for (const query of s.extensions.userQueries) if (await query(s, userId)) return true;
  return false;
}
