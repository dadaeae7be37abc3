// Every REST route group of the server, in one list: the table of contents of the REST face.
import type { FastifyInstance } from "fastify";
import type { Services } from "../domain/services.ts";
import { accountRoutes } from "./client/accounts.ts";
import { serverInfoRoutes } from "./client/server-info.ts";
import { keyRoutes, wellKnownRoutes } from "./keys.ts";

export const ROUTE_GROUPS: ((app: FastifyInstance, s: Services) => void)[] = [
  serverInfoRoutes,
  accountRoutes,
  keyRoutes,
  wellKnownRoutes,
];
