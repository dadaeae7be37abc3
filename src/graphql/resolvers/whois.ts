// `whois(userId)` on the GraphQL face, over the domain read of GET /admin/whois/{userId} (src/domain/
// admin/users.ts): a user's devices and where they connected from, for the user themself or a server
// admin. Spec: Client-Server API "Server administration".
import "reflect-metadata";
import { Arg, Ctx, Field, Float, ObjectType, Query, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { whois } from "../../domain/admin/users.ts";

@ObjectType({ description: "A connection of a device: where and when it was last seen." })
export class WhoisSighting {
  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => Float, { nullable: true, description: "ms since the epoch." })
  lastSeen!: number | null;

  @Field(() => String, { nullable: true })
  userAgent!: string | null;
}

@ObjectType({ description: "A device of the user, with its connections (one session per device here)." })
export class WhoisDevice {
  @Field(() => String)
  deviceId!: string;

  @Field(() => [WhoisSighting])
  connections!: WhoisSighting[];
}

@ObjectType({ description: "A user's devices and connections (GET /admin/whois/{userId})." })
export class Whois {
  @Field(() => String)
  userId!: string;

  @Field(() => [WhoisDevice])
  devices!: WhoisDevice[];
}

type WhoisJson = { user_id: string; devices: Record<string, { sessions: { connections: { ip?: string; last_seen?: number; user_agent?: string }[] }[] }> };

@Resolver()
export class WhoisResolver {
  @Query(() => Whois, { description: "A user's devices and where they connected from (GET /admin/whois/{userId}): the viewer's own, or anyone's for a server admin (else M_FORBIDDEN)." })
  async whois(@Arg("userId", () => String) userId: string, @Ctx() ctx: GraphqlContext): Promise<Whois> {
    const w = (await whois(ctx.s, await ctx.requester(), userId)) as WhoisJson;
    const devices = Object.entries(w.devices).map(([deviceId, d]) =>
      Object.assign(new WhoisDevice(), {
        deviceId,
        connections: d.sessions.flatMap((sess) =>
          sess.connections.map((c) => Object.assign(new WhoisSighting(), { ip: c.ip ?? null, lastSeen: c.last_seen ?? null, userAgent: c.user_agent ?? null })),
        ),
      }),
    );
    return Object.assign(new Whois(), { userId: w.user_id, devices });
  }
}
