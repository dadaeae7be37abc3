// Push rules, pushers and the notifications list on the GraphQL face, over the REST face's domain
// operations (src/domain/push/rules-api.ts, pushers.ts, notifications.ts): `pushRules`, `pushRule`,
// `pushers`, `notifications` queries; `setPushRule`, `deletePushRule`, `setPushRuleEnabled`,
// `setPushRuleActions`, `setPusher`, `deletePusher` mutations. Spec: Client-Server API "Push Notifications".
import "reflect-metadata";
import { Arg, Ctx, Int, Mutation, Query, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { GraphQLJSON } from "../types/json.ts";
import { PageInfo } from "../types/connection.ts";
import { Event } from "../types/event.ts";
import { Notification, NotificationsPage, Pusher, PusherInput, PushRule, PushRuleInput, PushRuleset } from "../types/push-rules.ts";
import { deleteRule, getOwnRuleset, getRule, putRule, setRuleAttr } from "../../domain/push/rules-api.ts";
import { getPushers, setPusher } from "../../domain/push/pushers.ts";
import { getNotifications, parseNotificationsQuery } from "../../domain/push/notifications.ts";
import { isPlainObject } from "../../domain/events/types.ts";
import { MatrixError } from "../../domain/errors.ts";

const KIND = { description: "override, content, room, sender or underride (postcontent: read only)." };

@Resolver()
export class PushRulesResolver {
  @Query(() => PushRuleset, { description: "The viewer's push rules, server-default and own (GET /pushrules/)." })
  async pushRules(@Ctx() ctx: GraphqlContext): Promise<PushRuleset> {
    return PushRuleset.of(await getOwnRuleset(ctx.s, await ctx.requester()));
  }

  @Query(() => PushRule, { description: "One push rule (GET /pushrules/global/{kind}/{ruleId}, and its /enabled and /actions); M_NOT_FOUND when there is none." })
  async pushRule(@Arg("kind", () => String, KIND) kind: string, @Arg("ruleId", () => String) ruleId: string, @Ctx() ctx: GraphqlContext): Promise<PushRule> {
    return PushRule.of(kind, await getRule(ctx.s, await ctx.requester(), kind, ruleId));
  }

  @Mutation(() => PushRule, {
    description: "Adds or replaces a user push rule (PUT /pushrules/global/{kind}/{ruleId}), placed before or after another user rule of its kind; returns it.",
  })
  async setPushRule(
    @Arg("kind", () => String, KIND) kind: string,
    @Arg("ruleId", () => String) ruleId: string,
    @Arg("rule", () => PushRuleInput) rule: PushRuleInput,
    @Arg("before", () => String, { nullable: true }) before: string | null,
    @Arg("after", () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PushRule> {
    const r = await ctx.requester();
    await putRule(ctx.s, r, kind, ruleId, { actions: rule.actions, conditions: rule.conditions ?? undefined, pattern: rule.pattern ?? undefined }, { before: before ?? undefined, after: after ?? undefined });
    return PushRule.of(kind, await getRule(ctx.s, r, kind, ruleId));
  }

  @Mutation(() => Boolean, { description: "Deletes a user push rule (DELETE /pushrules/global/{kind}/{ruleId}); server-default rules cannot be deleted." })
  async deletePushRule(@Arg("kind", () => String, KIND) kind: string, @Arg("ruleId", () => String) ruleId: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await deleteRule(ctx.s, await ctx.requester(), kind, ruleId);
    return true;
  }

  @Mutation(() => PushRule, { description: "Enables or disables a rule, server-default ones included (PUT .../{ruleId}/enabled); returns it." })
  async setPushRuleEnabled(
    @Arg("kind", () => String, KIND) kind: string,
    @Arg("ruleId", () => String) ruleId: string,
    @Arg("enabled", () => Boolean) enabled: boolean,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PushRule> {
    const r = await ctx.requester();
    await setRuleAttr(ctx.s, r, kind, ruleId, { attr: "enabled", enabled });
    return PushRule.of(kind, await getRule(ctx.s, r, kind, ruleId));
  }

  @Mutation(() => PushRule, { description: "Sets a rule's actions, server-default ones included (PUT .../{ruleId}/actions); returns it." })
  async setPushRuleActions(
    @Arg("kind", () => String, KIND) kind: string,
    @Arg("ruleId", () => String) ruleId: string,
    @Arg("actions", () => GraphQLJSON) actions: unknown,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PushRule> {
    const r = await ctx.requester();
    await setRuleAttr(ctx.s, r, kind, ruleId, { attr: "actions", actions });
    return PushRule.of(kind, await getRule(ctx.s, r, kind, ruleId));
  }

  @Query(() => [Pusher], { description: "The viewer's pushers (GET /pushers)." })
  async pushers(@Ctx() ctx: GraphqlContext): Promise<Pusher[]> {
    return (await getPushers(ctx.s, await ctx.requester())).pushers.map(Pusher.of);
  }

  @Mutation(() => Boolean, { description: "Creates or replaces a pusher (POST /pushers/set)." })
  async setPusher(@Arg("input", () => PusherInput) input: PusherInput, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    if (!isPlainObject(input.data)) throw new MatrixError("M_INVALID_PARAM", "data must be an object", 400);
    await setPusher(ctx.s, await ctx.requester(), {
      kind: input.kind, appId: input.appId, pushkey: input.pushkey, appDisplayName: input.appDisplayName, deviceDisplayName: input.deviceDisplayName,
      profileTag: input.profileTag ?? undefined, lang: input.lang, data: input.data, append: input.append ?? undefined,
    });
    return true;
  }

  @Mutation(() => Boolean, { description: "Deletes a pusher (POST /pushers/set with kind null); true even when there was none, as REST answers." })
  async deletePusher(@Arg("appId", () => String) appId: string, @Arg("pushkey", () => String) pushkey: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await setPusher(ctx.s, await ctx.requester(), { kind: null, appId, pushkey });
    return true;
  }

  @Query(() => NotificationsPage, { description: "The events the viewer was notified about, newest first (GET /notifications)." })
  async notifications(
    @Arg("from", () => String, { nullable: true, description: "pageInfo.endCursor of the previous page." }) from: string | null,
    @Arg("limit", () => Int, { nullable: true, description: "At most 100 (default 50)." }) limit: number | null,
    @Arg("onlyHighlights", () => Boolean, { nullable: true, description: "Only notifications that highlight (REST's only=highlight)." }) onlyHighlights: boolean | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<NotificationsPage> {
    if (limit != null && limit < 0) throw new MatrixError("M_INVALID_PARAM", "limit must be a non-negative integer", 400);
    const q = parseNotificationsQuery({ from: from ?? undefined, limit: limit ?? undefined, only: onlyHighlights ? "highlight" : undefined });
    const page = await getNotifications(ctx.s, await ctx.requester(), q);
    const notifications = page.notifications.map((n) =>
      Object.assign(new Notification(), { roomId: n.room_id, event: Event.from(n.event, n.room_id), actions: n.actions, read: n.read, ts: n.ts, profileTag: n.profile_tag }),
    );
    return Object.assign(new NotificationsPage(), { notifications, pageInfo: PageInfo.ofNextBatch(page.next_token ?? null) });
  }
}
