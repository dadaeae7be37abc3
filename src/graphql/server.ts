// Placeholder replaced by the GraphQL face (Apollo Server + graphql-ws on /graphql).
import type { FastifyInstance } from "fastify";
import type { Services } from "../domain/services.ts";

export async function mountGraphql(_app: FastifyInstance, _s: Services): Promise<void> {}
