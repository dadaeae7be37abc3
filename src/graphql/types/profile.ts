// GraphQL type of a user's global profile (GET /profile/{userId}): display name, avatar, time zone
// (MSC4175's m.tz) and every extended field (spec v1.16, MSC4133) as JSON.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import type { Profile } from "../../domain/profile/profile.ts";
import { GraphQLJSONObject } from "./json.ts";

export const PROFILE_FIELDS_DOC =
  "The profile's fields but displayName and avatarUrl (spec v1.16 extended profiles: m.tz and custom keys such as " +
  "org.example.pronouns), key → any JSON value.";

/** The extended fields of a profile: every key but displayname and avatar_url. */
export function extendedFields(p: Profile): Record<string, unknown> {
  const { displayname: _d, avatar_url: _a, ...rest } = p;
  return rest;
}

/** m.tz when it is a string (a remote server may send anything). */
export function timeZoneOf(p: Profile): string | null {
  return typeof p["m.tz"] === "string" ? p["m.tz"] : null;
}

@ObjectType({ description: "A user's global profile." })
export class UserProfile {
  @Field(() => String)
  userId!: string;

  @Field(() => String, { nullable: true })
  displayName!: string | null;

  @Field(() => String, { nullable: true, description: "An mxc:// URI (for a browser, use avatarHttpUrl)." })
  avatarUrl!: string | null;

  @Field(() => String, { nullable: true, description: "The user's time zone (m.tz), an IANA time zone name such as Europe/London; clients must expect unknown values." })
  timeZone!: string | null;

  @Field(() => GraphQLJSONObject, { description: PROFILE_FIELDS_DOC })
  fields!: Record<string, unknown>;

  static of(userId: string, p: Profile): UserProfile {
    return Object.assign(new UserProfile(), {
      userId,
      displayName: p.displayname ?? null,
      avatarUrl: p.avatar_url ?? null,
      timeZone: timeZoneOf(p),
      fields: extendedFields(p),
    });
  }
}
