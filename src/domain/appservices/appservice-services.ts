// The application-service capability's state on Services (`s.appservices`): the persistent queues, the
// HTTP client that reaches the services, their sender loops, and the cache of protocol descriptions.
// Spec: Application Service API.
import type { Services } from "../services.ts";
import { AppServiceQueueStore } from "../store/appservice-queue.ts";
import { AppServiceClient } from "./client.ts";
import { AppServiceSenders } from "./sender.ts";
import type { LruCache } from "../cache/lru.ts";

export interface CachedProtocol {
  info: Record<string, unknown>;
  expires: number;
}

export class AppServiceServices {
  readonly queue: AppServiceQueueStore;
  readonly client: AppServiceClient;
  readonly senders: AppServiceSenders;
  /** (service id, protocol) → its answer to GET /thirdparty/protocol/{protocol} (Synapse keeps it an hour). */
  readonly protocols: LruCache<string, CachedProtocol>;

  constructor(s: Services) {
    this.protocols = s.caches.get<string, CachedProtocol>("as_protocol_meta", 1000);
    this.queue = new AppServiceQueueStore(s.storage.sql);
    this.client = new AppServiceClient({ timeoutMs: s.config.app_service_request_timeout, legacyAuthorization: s.config.use_appservice_legacy_authorization });
    this.senders = new AppServiceSenders(s, this.queue, this.client);
  }
}
