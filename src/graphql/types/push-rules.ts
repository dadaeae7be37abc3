// GraphQL types of push rules, pushers and the notifications list (spec: Client-Server API "Push Rules",
// "Pushers", "Listing Notifications"): the viewer's ruleset by kind, a rule, the input of a user rule,
// a pusher and its input, a notification and a page of them (REST's next_token as the cursor).
import "reflect-metadata";
import { Field, Float, InputType, ObjectType } from "type-graphql";
import { GraphQLJSON } from "./json.ts";
import { PageInfo } from "./connection.ts";
import { Event } from "./event.ts";
import type { PushRuleJson, Ruleset } from "../../domain/push/rule-types.ts";
import type { PusherJson } from "../../domain/push/pushers.ts";

@ObjectType({ description: "A push rule, server-default or the viewer's own." })
export class PushRule {
  @Field(() => String, { description: "override, content, postcontent, room, sender or underride." })
  kind!: string;

  @Field(() => String, { description: "The rule's id: `.m.rule.*` for server-default rules; a room id for room rules, a user id for sender rules." })
  ruleId!: string;

  @Field(() => Boolean, { description: "A server-default rule (it can be enabled/disabled and given other actions, not deleted)." })
  default!: boolean;

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => GraphQLJSON, { description: "The actions: \"notify\" and {set_tweak, value} objects, as the spec's push rule." })
  actions!: unknown;

  @Field(() => GraphQLJSON, { nullable: true, description: "The conditions (override and underride rules): a list of the spec's push conditions." })
  conditions!: unknown;

  @Field(() => String, { nullable: true, description: "The glob pattern of a content rule." })
  pattern!: string | null;

  static of(kind: string, r: PushRuleJson): PushRule {
    return Object.assign(new PushRule(), { kind, ruleId: r.rule_id, default: r.default, enabled: r.enabled, actions: r.actions, conditions: r.conditions ?? null, pattern: r.pattern ?? null });
  }
}

@ObjectType({ description: "The viewer's push rules (the `global` scope), by kind in the order they are evaluated." })
export class PushRuleset {
  @Field(() => [PushRule])
  override!: PushRule[];

  @Field(() => [PushRule])
  content!: PushRule[];

  @Field(() => [PushRule], { description: "MSC4306's thread-subscription rules (server-default only)." })
  postcontent!: PushRule[];

  @Field(() => [PushRule])
  room!: PushRule[];

  @Field(() => [PushRule])
  sender!: PushRule[];

  @Field(() => [PushRule])
  underride!: PushRule[];

  static of(rs: Ruleset): PushRuleset {
    const kind = (k: keyof Ruleset) => (rs[k] ?? []).map((r) => PushRule.of(k, r));
    return Object.assign(new PushRuleset(), {
      override: kind("override"), content: kind("content"), postcontent: kind("postcontent"), room: kind("room"), sender: kind("sender"), underride: kind("underride"),
    });
  }
}

@InputType({ description: "A user push rule (PUT /pushrules/global/{kind}/{ruleId}'s body): checked as the REST face checks it." })
export class PushRuleInput {
  @Field(() => GraphQLJSON, { description: "The actions (a list)." })
  actions!: unknown;

  @Field(() => GraphQLJSON, { nullable: true, description: "The conditions of an override or underride rule (a list)." })
  conditions?: unknown;

  @Field(() => String, { nullable: true, description: "The glob pattern of a content rule (required for one)." })
  pattern?: string | null;
}

@ObjectType({ description: "A pusher of the viewer's (GET /pushers)." })
export class Pusher {
  @Field(() => String)
  pushkey!: string;

  @Field(() => String, { description: "http or email." })
  kind!: string;

  @Field(() => String)
  appId!: string;

  @Field(() => String)
  appDisplayName!: string;

  @Field(() => String)
  deviceDisplayName!: string;

  @Field(() => String, { nullable: true })
  profileTag!: string | null;

  @Field(() => String)
  lang!: string;

  @Field(() => GraphQLJSON, { description: "The pusher's data: `url` (http pushers), `format`, and what else the app gave." })
  data!: unknown;

  static of(p: PusherJson): Pusher {
    return Object.assign(new Pusher(), {
      pushkey: p.pushkey, kind: p.kind, appId: p.app_id, appDisplayName: p.app_display_name, deviceDisplayName: p.device_display_name,
      profileTag: p.profile_tag ?? null, lang: p.lang, data: p.data,
    });
  }
}

@InputType({ description: "A pusher to create or replace (POST /pushers/set with kind http or email)." })
export class PusherInput {
  @Field(() => String, { description: "http or email." })
  kind!: string;

  @Field(() => String, { description: "At most 64 characters." })
  appId!: string;

  @Field(() => String, { description: "At most 512 bytes." })
  pushkey!: string;

  @Field(() => String)
  appDisplayName!: string;

  @Field(() => String)
  deviceDisplayName!: string;

  @Field(() => String, { nullable: true })
  profileTag?: string | null;

  @Field(() => String)
  lang!: string;

  @Field(() => GraphQLJSON, { description: "An object: for http pushers `url` (the gateway's /_matrix/push/v1/notify) and optionally `format`." })
  data!: unknown;

  @Field(() => Boolean, { nullable: true, description: "Keep other users' pushers with the same app id and pushkey (default false: they are removed)." })
  append?: boolean | null;
}

@ObjectType({ description: "An event the viewer was notified about." })
export class Notification {
  @Field(() => String)
  roomId!: string;

  @Field(() => Event)
  event!: Event;

  @Field(() => GraphQLJSON, { description: "The actions of the rule that matched." })
  actions!: unknown;

  @Field(() => Boolean, { description: "A receipt of the viewer's is at or after the event." })
  read!: boolean;

  @Field(() => Float, { description: "When the notification was made (ms since the epoch)." })
  ts!: number;

  @Field(() => String, { nullable: true, description: "The profile tag of the rule that matched (always null: no rule has one)." })
  profileTag!: string | null;
}

@ObjectType({ description: "A page of the notifications list, newest first (GET /notifications); pageInfo.endCursor is the `from` of the next page." })
export class NotificationsPage {
  @Field(() => [Notification])
  notifications!: Notification[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}
