// Per-request DataLoaders: each value asked for more than once in one operation is read once (a viewer's
// displayName and avatarUrl share one profile read). Built fresh for every HTTP request and every
// WebSocket operation, so nothing is cached across requests.
import DataLoader from "dataloader";
import { MatrixError } from "../domain/errors.ts";
import { getProfile, type Profile } from "../domain/profile/profile.ts";
import type { GraphqlContext } from "./context.ts";

export interface Loaders {
  /**
   * Profiles by user id, read as the context's requester (anonymously without a token). A profile with
   * nothing in it (the domain's M_NOT_FOUND) loads as {}: in GraphQL its fields are simply null.
   */
  profile: DataLoader<string, Profile>;
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
  };
}
