// Repository of one-use nonces for shared-secret registration (registration_nonces), shared by workers.
import type { Db } from "../../storage/database.ts";

export class NonceStore {
  constructor(private readonly db: Db) {}

  async create(nonce: string, now: number): Promise<void> {
    await this.db.registrationNonce.create({ data: { nonce, createdTs: BigInt(now) } });
  }

  /** Deletes the nonce and says whether it existed and was younger than `maxAgeMs`. */
  async consume(nonce: string, now: number, maxAgeMs: number): Promise<boolean> {
    await this.db.registrationNonce.deleteMany({ where: { createdTs: { lt: BigInt(now - maxAgeMs) } } });
    return (await this.db.registrationNonce.deleteMany({ where: { nonce } })).count > 0;
  }
}
