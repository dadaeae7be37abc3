// EDUs a remote server sends in a transaction (PUT /_matrix/federation/v1/send/{txnId}): the handler of
// each edu_type is declared in src/main.ts (`eduHandlers`); the /send route hands every EDU of a
// transaction to the handler of its type, and drops (logging once) those no handler takes.
// Spec: Server-Server API "Transactions", "EDUs".
import type { Services } from "../services.ts";

export interface EduHandler {
  /** The edu_type this handler takes, e.g. "m.typing". */
  type: string;
  /**
   * Applies one EDU from `origin` (the authenticated sending server). `content` is untrusted JSON:
   * validate it, and drop what the origin may not speak for (e.g. users of other servers).
   */
  handle(s: Services, origin: string, content: unknown): Promise<void>;
}
