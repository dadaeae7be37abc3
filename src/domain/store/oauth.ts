// Repository of Weft's own OAuth 2.0 server (oauth_clients, oauth_browser_sessions,
// oauth_authorization_codes, oauth_grants, oauth_device_grants, oauth_cross_signing_resets,
// oauth_retired_refresh_tokens): registered clients, the authorisation pages' browser logins, and the
// single-use authorisation codes, and which client each device's tokens were granted to. Secrets are stored as their SHA-256 (src/domain/accounts/tokens.ts).
// A cold path (logins): Prisma.
import type { Db, Tx } from "../../storage/database.ts";

export interface AuthorizationCodeRow {
  clientId: string;
  userId: string;
  deviceId: string;
  scope: string;
  redirectUri: string;
  codeChallenge: string;
  createdTs: number;
  expiresTs: number;
  /** OpenID Connect's nonce of the request (scope openid), else null. */
  nonce: string | null;
}

export class OAuthStore {
  constructor(private readonly db: Db) {}

  async addClient(clientId: string, metadata: Record<string, unknown>, now: number): Promise<void> {
    await this.db.oAuthClient.create({ data: { clientId, metadata: JSON.stringify(metadata), createdTs: BigInt(now) } });
  }

  /** The registered metadata of a client, or undefined for an unknown client id. */
  async getClient(clientId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.db.oAuthClient.findUnique({ where: { clientId } });
    return row ? (JSON.parse(row.metadata) as Record<string, unknown>) : undefined;
  }

  async addBrowserSession(tokenHash: string, userId: string, now: number, expiresTs: number): Promise<void> {
    await this.db.oAuthBrowserSession.create({ data: { tokenHash, userId, createdTs: BigInt(now), expiresTs: BigInt(expiresTs) } });
  }

  /** The user of an unexpired browser login, or undefined. */
  async browserSessionUser(tokenHash: string, now: number): Promise<string | undefined> {
    const row = await this.db.oAuthBrowserSession.findUnique({ where: { tokenHash } });
    return row && Number(row.expiresTs) > now ? row.userId : undefined;
  }

  async deleteBrowserSession(tokenHash: string): Promise<void> {
    await this.db.oAuthBrowserSession.deleteMany({ where: { tokenHash } });
  }

  /** Ends every browser login of the user but `exceptTokenHash`'s. */
  async deleteBrowserSessionsOfUser(userId: string, exceptTokenHash?: string): Promise<number> {
    const r = await this.db.oAuthBrowserSession.deleteMany({ where: { userId, ...(exceptTokenHash === undefined ? {} : { tokenHash: { not: exceptTokenHash } }) } });
    return r.count;
  }

  async addAuthorizationCode(codeHash: string, row: AuthorizationCodeRow): Promise<void> {
    await this.db.oAuthAuthorizationCode.create({
      data: { codeHash, ...row, createdTs: BigInt(row.createdTs), expiresTs: BigInt(row.expiresTs) },
    });
  }

  /**
   * Marks a code used and returns it — once: a second call (a replayed code), an unknown code and an
   * expired one give undefined. The update is conditional, so two concurrent exchanges cannot both win.
   */
  async consumeAuthorizationCode(codeHash: string, now: number): Promise<(AuthorizationCodeRow & { alreadyUsed: boolean }) | undefined> {
    const row = await this.db.oAuthAuthorizationCode.findUnique({ where: { codeHash } });
    if (!row) return undefined;
    const out = { clientId: row.clientId, userId: row.userId, deviceId: row.deviceId, scope: row.scope, redirectUri: row.redirectUri, codeChallenge: row.codeChallenge, createdTs: Number(row.createdTs), expiresTs: Number(row.expiresTs), nonce: row.nonce };
    if (row.usedTs !== null) return { ...out, alreadyUsed: true };
    const won = await this.db.oAuthAuthorizationCode.updateMany({ where: { codeHash, usedTs: null }, data: { usedTs: BigInt(now) } });
    if (won.count === 0) return { ...out, alreadyUsed: true };
    return { ...out, alreadyUsed: false };
  }

  /** Records (or replaces) what a device was granted, and to which client. */
  async setGrant(tx: Tx, g: { userId: string; deviceId: string; clientId: string; scope: string }, now: number): Promise<void> {
    await tx.oAuthGrant.upsert({
      where: { userId_deviceId: { userId: g.userId, deviceId: g.deviceId } },
      create: { ...g, createdTs: BigInt(now) },
      update: { clientId: g.clientId, scope: g.scope, createdTs: BigInt(now) },
    });
  }

  async getGrant(userId: string, deviceId: string): Promise<{ clientId: string; scope: string } | undefined> {
    const row = await this.db.oAuthGrant.findUnique({ where: { userId_deviceId: { userId, deviceId } } });
    return row ? { clientId: row.clientId, scope: row.scope } : undefined;
  }

  async addDeviceGrant(g: Omit<DeviceGrantRow, "status" | "userId" | "lastPolledTs">): Promise<void> {
    await this.db.oAuthDeviceGrant.create({
      data: { ...g, status: "pending", createdTs: BigInt(g.createdTs), expiresTs: BigInt(g.expiresTs) },
    });
  }

  async deviceGrant(where: { deviceCodeHash: string } | { userCodeHash: string }): Promise<DeviceGrantRow | undefined> {
    const row = await this.db.oAuthDeviceGrant.findUnique({ where: where as { deviceCodeHash: string } });
    if (!row) return undefined;
    return {
      deviceCodeHash: row.deviceCodeHash, userCodeHash: row.userCodeHash, clientId: row.clientId, scope: row.scope, deviceId: row.deviceId,
      status: row.status as DeviceGrantRow["status"], userId: row.userId, createdTs: Number(row.createdTs), expiresTs: Number(row.expiresTs),
      lastPolledTs: row.lastPolledTs === null ? null : Number(row.lastPolledTs), intervalS: row.intervalS,
    };
  }

  /** Moves a grant from one status to another; false if it was no longer in `from` (someone else moved it). */
  async moveDeviceGrant(deviceCodeHash: string, from: DeviceGrantRow["status"], to: DeviceGrantRow["status"], userId?: string): Promise<boolean> {
    const r = await this.db.oAuthDeviceGrant.updateMany({ where: { deviceCodeHash, status: from }, data: { status: to, ...(userId !== undefined ? { userId } : {}) } });
    return r.count === 1;
  }

  async notePoll(deviceCodeHash: string, now: number, intervalS: number): Promise<void> {
    await this.db.oAuthDeviceGrant.update({ where: { deviceCodeHash }, data: { lastPolledTs: BigInt(now), intervalS } });
  }

  async approveCrossSigningReset(userId: string, untilTs: number): Promise<void> {
    await this.db.oAuthCrossSigningReset.upsert({ where: { userId }, create: { userId, approvedUntilTs: BigInt(untilTs) }, update: { approvedUntilTs: BigInt(untilTs) } });
  }

  async crossSigningResetApprovedUntil(userId: string): Promise<number | undefined> {
    const row = await this.db.oAuthCrossSigningReset.findUnique({ where: { userId } });
    return row ? Number(row.approvedUntilTs) : undefined;
  }

  /** Remembers a replaced refresh token (a day, per device: older ones of the device are dropped). */
  async retireRefreshToken(tokenHash: string, userId: string, deviceId: string, now: number): Promise<void> {
    await this.db.oAuthRetiredRefreshToken.deleteMany({ where: { userId, deviceId, retiredTs: { lt: BigInt(now - 86_400_000) } } });
    await this.db.oAuthRetiredRefreshToken.upsert({ where: { tokenHash }, create: { tokenHash, userId, deviceId, retiredTs: BigInt(now) }, update: {} });
  }

  async retiredRefreshToken(tokenHash: string): Promise<{ userId: string; deviceId: string } | undefined> {
    const row = await this.db.oAuthRetiredRefreshToken.findUnique({ where: { tokenHash } });
    return row ? { userId: row.userId, deviceId: row.deviceId } : undefined;
  }

  /** Drops what has expired: codes, browser sessions, device requests, reset approvals. Returns how many rows went. */
  async purgeExpired(now: number): Promise<number> {
    const before = BigInt(now);
    const counts = [
      await this.db.oAuthAuthorizationCode.deleteMany({ where: { expiresTs: { lt: before } } }),
      await this.db.oAuthBrowserSession.deleteMany({ where: { expiresTs: { lt: before } } }),
      await this.db.oAuthDeviceGrant.deleteMany({ where: { expiresTs: { lt: before } } }),
      await this.db.oAuthCrossSigningReset.deleteMany({ where: { approvedUntilTs: { lt: before } } }),
      await this.db.oAuthRetiredRefreshToken.deleteMany({ where: { retiredTs: { lt: BigInt(now - 86_400_000) } } }),
    ];
    return counts.reduce((n, c) => n + c.count, 0);
  }
}

export interface DeviceGrantRow {
  deviceCodeHash: string;
  userCodeHash: string;
  clientId: string;
  scope: string;
  deviceId: string;
  status: "pending" | "approved" | "denied" | "exchanged";
  userId: string | null;
  createdTs: number;
  expiresTs: number;
  lastPolledTs: number | null;
  intervalS: number;
}
