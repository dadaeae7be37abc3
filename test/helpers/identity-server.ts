// A small identity server for tests, over HTTPS on loopback (the self-signed test certificate), following
// the Identity Service API v2 (../shared/matrix-spec/data/api/identity): bearer-token auth, hash_details and
// hashed lookup, 3pid bind (sessions the test validates directly) and unbind (the homeserver's X-Matrix
// signature checked against its published key), store-invite with an ed25519 public key, and — when an
// address with stored invites is bound — the homeserver's PUT /3pid/onbind with each invite signed.
import { createServer, type Server } from "node:https";
import { fetch as undiciFetch } from "undici";
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { testCertificate } from "./tls.ts";
import { freePort } from "./server.ts";
import { parseFederationAuthHeader } from "../../src/domain/federation/request-auth.ts";
import { signingBytes, verifyBytes, rawPublicKey, signJson } from "../../src/domain/signing.ts";
import { insecureAgent } from "./server.ts";

export interface StoredInvite {
  body: Record<string, any>;
  token: string;
}

export interface TestIdentityServer {
  /** host:port, what clients pass as id_server. */
  name: string;
  accessToken: string;
  /** Makes a validated session for an address (as if its owner had followed the identity server's mail). */
  validatedSession(medium: string, address: string): { sid: string; client_secret: string };
  /** address → mxid bindings. */
  bindings: Map<string, string>;
  invites: StoredInvite[];
  unbinds: { origin: string; body: any }[];
  publicKey: string;
  /**
   * Binds the address to `mxid` and tells the user's homeserver (at `homeserverBaseUrl`) with PUT
   * /_matrix/federation/v1/3pid/onbind, carrying every invite stored for the address, each signed with
   * this server's key (POST instead, as Sydent sends it, when `method` says so). Returns the homeserver's answer.
   */
  bindAndNotify(homeserverBaseUrl: string, medium: string, address: string, mxid: string, method?: "PUT" | "POST"): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

export async function startIdentityServer(homeserverBaseUrl: () => string): Promise<TestIdentityServer> {
  const port = await freePort();
  const name = `127.0.0.1:${port}`;
  const accessToken = randomBytes(12).toString("hex");
  const pepper = "matrixrocks";
  const sessions = new Map<string, { medium: string; address: string; client_secret: string }>();
  const bindings = new Map<string, string>();
  const invites: StoredInvite[] = [];
  const unbinds: { origin: string; body: any }[] = [];
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const publicKeyB64 = rawPublicKey(publicKey).toString("base64").replace(/=+$/, "");
  const hashOf = (address: string, medium: string) => createHash("sha256").update(`${address} ${medium} ${pepper}`).digest("base64url");

  const cert = testCertificate();
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const text = Buffer.concat(chunks).toString("utf8");
      const body = text ? JSON.parse(text) : undefined;
      const path = (req.url ?? "").replace(/^\/_matrix\/identity\/v2/, "");
      const bearer = req.headers.authorization === `Bearer ${accessToken}`;
      const needAuth = () => send(401, { errcode: "M_UNAUTHORIZED", error: "Unrecognised access token" });
      try {
        if (req.method === "GET" && path === "") return send(200, {});
        if (req.method === "GET" && path === "/hash_details") return bearer ? send(200, { algorithms: ["none", "sha256"], lookup_pepper: pepper }) : needAuth();
        if (req.method === "POST" && path === "/lookup") {
          if (!bearer) return needAuth();
          if (body.pepper !== pepper) return send(400, { errcode: "M_INVALID_PEPPER", error: "Unknown or invalid pepper", algorithm: "sha256", lookup_pepper: pepper });
          const mappings: Record<string, string> = {};
          for (const [key, mxid] of bindings) {
            const [medium, address] = key.split(" ", 2) as [string, string];
            const hashed = body.algorithm === "sha256" ? hashOf(address, medium) : `${address} ${medium}`;
            if (body.addresses.includes(hashed)) mappings[hashed] = mxid;
          }
          return send(200, { mappings });
        }
        if (req.method === "POST" && path === "/3pid/bind") {
          if (!bearer) return needAuth();
          const session = sessions.get(body.sid);
          if (!session || session.client_secret !== body.client_secret) return send(404, { errcode: "M_NO_VALID_SESSION", error: "No valid session was found matching that sid and client secret" });
          bindings.set(`${session.medium} ${session.address}`, body.mxid);
          const now = Date.now();
          return send(200, { address: session.address, medium: session.medium, mxid: body.mxid, not_before: now, not_after: now + 1e10, ts: now, signatures: { [name]: { "ed25519:0": "c2lnbmF0dXJl" } } });
        }
        if (req.method === "POST" && path === "/3pid/unbind") {
          // Signed by the homeserver: check the signature against its published key.
          const auth = parseFederationAuthHeader(String(req.headers.authorization ?? ""));
          if (!auth) return send(403, { errcode: "M_FORBIDDEN", error: "Unsigned request" });
          const keys = await (await fetch(`${homeserverBaseUrl()}/_matrix/key/v2/server`)).json() as { verify_keys: Record<string, { key: string }> };
          const key = keys.verify_keys[auth.key]?.key;
          const signed = signingBytes({ method: "POST", uri: req.url, origin: auth.origin, destination: auth.destination, content: body });
          if (!key || !verifyBytes(signed, auth.sig, key)) return send(403, { errcode: "M_FORBIDDEN", error: "Bad signature" });
          if (auth.origin !== body.mxid.slice(body.mxid.indexOf(":") + 1)) return send(403, { errcode: "M_FORBIDDEN", error: "Origin does not match the mxid" });
          unbinds.push({ origin: auth.origin, body });
          const k = `${body.threepid.medium} ${body.threepid.address}`;
          if (bindings.get(k) !== body.mxid) return send(404, { errcode: "M_NOT_FOUND", error: "No such binding" });
          bindings.delete(k);
          return send(200, {});
        }
        if (req.method === "POST" && path === "/store-invite") {
          if (!bearer) return needAuth();
          for (const f of ["medium", "address", "room_id", "sender"]) if (typeof body[f] !== "string") return send(400, { errcode: "M_MISSING_PARAMS", error: `Missing ${f}` });
          if (bindings.has(`${body.medium} ${body.address}`)) return send(400, { errcode: "M_THREEPID_IN_USE", error: "Already bound" });
          const token = randomBytes(16).toString("hex");
          invites.push({ body, token });
          const [local, domain] = String(body.address).split("@");
          return send(200, {
            token,
            public_keys: [{ public_key: publicKeyB64, key_validity_url: `https://${name}/_matrix/identity/v2/pubkey/isvalid` }],
            display_name: `${local!.slice(0, 1)}...@${domain}`,
          });
        }
        send(404, { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" });
      } catch (err) {
        send(500, { errcode: "M_UNKNOWN", error: String(err) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    name,
    accessToken,
    validatedSession(medium, address) {
      const sid = randomBytes(8).toString("hex");
      const client_secret = randomBytes(8).toString("hex");
      sessions.set(sid, { medium, address, client_secret });
      return { sid, client_secret };
    },
    bindings,
    invites,
    unbinds,
    publicKey: publicKeyB64,
    async bindAndNotify(homeserverBaseUrl, medium, address, mxid, method = "PUT") {
      bindings.set(`${medium} ${address}`, mxid);
      const pending = invites.filter((i) => i.body.medium === medium && i.body.address === address);
      const body = {
        medium,
        address,
        mxid,
        invites: pending.map((i) => ({
          medium,
          address,
          mxid,
          room_id: i.body.room_id,
          sender: i.body.sender,
          signed: signJson({ mxid, sender: i.body.sender, token: i.token }, name, { keyId: "ed25519:0", privateKey }),
        })),
      };
      const res = await undiciFetch(`${homeserverBaseUrl}/_matrix/federation/v1/3pid/onbind`, {
        method, headers: { "content-type": "application/json" }, body: JSON.stringify(body), dispatcher: insecureAgent,
      });
      return { status: res.status, json: await res.json() };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
