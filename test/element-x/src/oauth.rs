//! The SDK's OAuth 2.0 login (the next-generation auth of spec v1.15, MSC3861), as Element X uses it:
//! server metadata discovery and dynamic client registration (MSC2965, MSC2966), the authorization
//! code grant with PKCE (MSC2964: `oauth_login` prints the authorization URL, the driver completes the
//! server's pages, `oauth_finish` takes the redirect), refreshing (`oauth_refresh`) and revocation
//! (`oauth_logout`, MSC4254), and the QR-code login of a new device (MSC4108 rendezvous) through the
//! device authorization grant (RFC 8628, MSC4341): `qr_login` runs both sides — an existing session
//! shows the QR code and grants, a new session scans it, polls for its tokens and receives the
//! secrets — printing the verification URI for the driver to approve in a browser.

use anyhow::{Context, Result, anyhow, bail};
use futures_util::{StreamExt, pin_mut};
use matrix_sdk::{
    Client,
    authentication::oauth::{
        ClientRegistrationData,
        qrcode::{GeneratedQrProgress, GrantLoginProgress, LoginProgress, QrCodeData, QrProgress},
        registration::{ApplicationType, ClientMetadata, Localized, OAuthGrantType},
    },
    reqwest::Url,
    ruma::{OwnedDeviceId, serde::Raw},
};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::{Ctx, Session, emit, logged_in_json, opt_str, str_field, wait_ms};

/// Element X's client metadata (MSC2966): a native application with a custom-scheme redirect (the
/// reversed host of its `client_uri`) for the authorization code grant, and the device code grant.
fn registration_data(cmd: &Value) -> Result<ClientRegistrationData> {
    let client_uri = Url::parse(opt_str(cmd, "client_uri").unwrap_or("https://element.io")).context("client_uri")?;
    let redirect = Url::parse(opt_str(cmd, "redirect_uri").unwrap_or("io.element:/callback")).context("redirect_uri")?;
    let mut metadata = ClientMetadata::new(
        ApplicationType::Native,
        vec![OAuthGrantType::AuthorizationCode { redirect_uris: vec![redirect] }, OAuthGrantType::DeviceCode],
        Localized::new(client_uri, []),
    );
    metadata.client_name = Some(Localized::new(opt_str(cmd, "client_name").unwrap_or("Element X (Weft test)").to_owned(), []));
    Ok(Raw::new(&metadata).context("serializing the client metadata")?.into())
}

/// The private cross-signing keys the session's crypto store holds.
async fn cross_signing_json(name: &str, client: &Client) -> Value {
    let s = client.encryption().cross_signing_status().await;
    json!({
        "event": "cross_signing", "as": name,
        "has_master": s.as_ref().is_some_and(|s| s.has_master),
        "has_self_signing": s.as_ref().is_some_and(|s| s.has_self_signing),
        "has_user_signing": s.as_ref().is_some_and(|s| s.has_user_signing),
    })
}

/// Runs `work` to its end while `watch` follows its progress (a watch that ends first just waits).
async fn with_watch<T>(work: impl std::future::Future<Output = T>, watch: impl std::future::Future<Output = ()>) -> T {
    tokio::select! {
        r = work => r,
        () = async { watch.await; std::future::pending::<()>().await } => unreachable!(),
    }
}

fn free_name(ctx: &Ctx, cmd: &Value) -> Result<String> {
    let name = opt_str(cmd, "as").unwrap_or("main").to_owned();
    if ctx.sessions.contains_key(&name) {
        bail!("session `{name}` exists");
    }
    Ok(name)
}

impl Ctx {
    /// `oauth_login`: discovers the server's OAuth 2.0 metadata, registers the client and prints the
    /// authorization URL (`oauth_authorization_url` {url}). The session exists from now on, not
    /// logged in until `oauth_finish`.
    pub(crate) async fn oauth_login(&mut self, cmd: &Value) -> Result<()> {
        let name = free_name(self, cmd)?;
        let homeserver = self.homeserver(cmd)?;
        let (client, store) = self.build_client(cmd, &name, &homeserver, true).await?;
        let metadata = client.oauth().server_metadata().await.context("OAuth 2.0 server metadata")?;
        let redirect = Url::parse(opt_str(cmd, "redirect_uri").unwrap_or("io.element:/callback")).context("redirect_uri")?;
        let device_id = opt_str(cmd, "device_id").map(OwnedDeviceId::from);
        let auth = client
            .oauth()
            .login(redirect, device_id, Some(registration_data(cmd)?), None)
            .build()
            .await
            .context("building the authorization URL")?;
        emit(json!({
            "event": "oauth_authorization_url", "as": name, "url": auth.url.to_string(),
            "issuer": metadata.issuer.to_string(),
            "client_id": client.oauth().client_id().map(|c| c.as_str().to_owned()),
            "account_management_uri": metadata.account_management_uri.map(|u| u.to_string()),
        }));
        self.add_session(name, client, store);
        Ok(())
    }

    /// `qr_login`: logs the new session `as` in by the QR code the existing session `granter` shows
    /// (its secure channel on the server's MSC4108 rendezvous), with the check code passed between
    /// them as a user would type it; the new device asks for a device code and polls the token
    /// endpoint while `qr_verification_uri` {uri} waits for the driver to approve it; then the granter
    /// sees the device and sends the secrets. Prints `qr_progress` lines and `logged_in` (with the
    /// new device's cross-signing status).
    pub(crate) async fn qr_login(&mut self, cmd: &Value) -> Result<()> {
        let name = free_name(self, cmd)?;
        let granter_name = str_field(cmd, "granter")?;
        let granter = self.sessions.get(granter_name).ok_or_else(|| anyhow!("no session `{granter_name}`"))?.client.clone();
        let homeserver = self.homeserver(cmd)?;
        let (client, store) = self.build_client(cmd, &name, &homeserver, true).await?;
        let registration = registration_data(cmd)?;
        let progress = |side: &str, step: &str| emit(json!({"event": "qr_progress", "as": name, "side": side, "step": step}));

        let (qr_tx, qr_rx) = oneshot::channel::<QrCodeData>();
        let (code_tx, code_rx) = oneshot::channel::<u8>();
        let (sender_tx, sender_rx) = oneshot::channel();

        let granter_oauth = granter.oauth();
        let grant = granter_oauth.grant_login_with_qr_code().generate();
        let grant_states = grant.subscribe_to_progress();
        let granter_side = async {
            let watch = async {
                pin_mut!(grant_states);
                let (mut qr_tx, mut sender_tx) = (Some(qr_tx), Some(sender_tx));
                while let Some(p) = grant_states.next().await {
                    match p {
                        GrantLoginProgress::Starting => {}
                        GrantLoginProgress::EstablishingSecureChannel(GeneratedQrProgress::QrReady(qr)) => {
                            progress("granter", "qr_ready");
                            if let Some(tx) = qr_tx.take() {
                                let _ = tx.send(qr);
                            }
                        }
                        GrantLoginProgress::EstablishingSecureChannel(GeneratedQrProgress::QrScanned(sender)) => {
                            progress("granter", "qr_scanned");
                            if let Some(tx) = sender_tx.take() {
                                let _ = tx.send(sender);
                            }
                        }
                        GrantLoginProgress::WaitingForAuth { verification_uri } => {
                            emit(json!({"event": "qr_verification_uri", "as": name, "uri": verification_uri.to_string()}));
                        }
                        GrantLoginProgress::SyncingSecrets => progress("granter", "syncing_secrets"),
                        GrantLoginProgress::Done => progress("granter", "done"),
                    }
                }
            };
            with_watch(grant.into_future(), watch).await.context("granting the login (existing device)")
        };

        let new_oauth = client.oauth();
        let new_side = async {
            let qr = qr_rx.await.context("the granter never showed a QR code")?;
            let login = new_oauth.login_with_qr_code(Some(&registration)).scan(&qr);
            let states = login.subscribe_to_progress();
            let watch = async {
                pin_mut!(states);
                let mut code_tx = Some(code_tx);
                while let Some(p) = states.next().await {
                    match p {
                        LoginProgress::Starting => {}
                        LoginProgress::EstablishingSecureChannel(QrProgress { check_code }) => {
                            progress("new", "check_code");
                            if let Some(tx) = code_tx.take() {
                                let _ = tx.send(check_code.to_digit());
                            }
                        }
                        LoginProgress::WaitingForToken { user_code } => {
                            emit(json!({"event": "qr_user_code", "as": name, "user_code": user_code}));
                        }
                        LoginProgress::SyncingSecrets => progress("new", "syncing_secrets"),
                        LoginProgress::Done => progress("new", "done"),
                    }
                }
            };
            with_watch(login.into_future(), watch).await.context("logging in with the QR code (new device)")
        };

        // The user reads the check code on the new device and types it on the existing one.
        let relay = async {
            let sender = sender_rx.await.context("the granter never saw the QR code scanned")?;
            let code = code_rx.await.context("the new device never showed a check code")?;
            sender.send(code).await.map_err(|e| anyhow!("typing the check code: {e}"))
        };

        tokio::time::timeout(wait_ms(cmd), async { tokio::try_join!(granter_side, new_side, relay) })
            .await
            .map_err(|_| anyhow!("the QR-code login did not complete within {} ms", wait_ms(cmd).as_millis()))??;

        let mut line = logged_in_json(&name, &client, &homeserver).await;
        line["oauth_client_id"] = json!(client.oauth().client_id().map(|c| c.as_str().to_owned()));
        line["cross_signing"] = cross_signing_json(&name, &client).await;
        emit(line);
        self.add_session(name, client, store);
        Ok(())
    }
}

impl Session {
    /// `oauth_finish` {callback_url}: completes the authorization code grant with the URL the
    /// server redirected to (code and state in its query); prints `logged_in`.
    pub(crate) async fn oauth_finish(&mut self, cmd: &Value) -> Result<()> {
        let url = Url::parse(str_field(cmd, "callback_url")?).context("callback_url")?;
        self.client.oauth().finish_login(url.into()).await.context("finishing the OAuth 2.0 login")?;
        let mut line = logged_in_json(&self.name, &self.client, self.client.homeserver().as_str()).await;
        line["oauth_client_id"] = json!(self.client.oauth().client_id().map(|c| c.as_str().to_owned()));
        emit(line);
        Ok(())
    }

    /// `whoami`: asks the server who this session's token is; prints `whoami` {ok, user_id,
    /// device_id} or {ok: false, kind, message} (a refused token is an observation, not a failure).
    pub(crate) async fn whoami(&mut self) -> Result<()> {
        match self.client.whoami().await {
            Ok(r) => emit(json!({
                "event": "whoami", "as": self.name, "ok": true, "user_id": r.user_id.to_string(),
                "device_id": r.device_id.map(|d| d.to_string()),
            })),
            Err(e) => emit(json!({
                "event": "whoami", "as": self.name, "ok": false,
                "kind": e.client_api_error_kind().map(|k| format!("{k:?}")), "message": format!("{e}"),
            })),
        }
        Ok(())
    }

    /// `tokens`: the session's current access and refresh tokens (`tokens` {access_token, refresh_token}).
    pub(crate) fn tokens(&mut self) -> Result<()> {
        let t = self.client.session_tokens().ok_or_else(|| anyhow!("not logged in"))?;
        emit(json!({"event": "tokens", "as": self.name, "access_token": t.access_token, "refresh_token": t.refresh_token}));
        Ok(())
    }

    /// `cross_signing`: waits for the login's encryption set-up (cross-signing bootstrapped, as
    /// Element X does) and prints `cross_signing` {has_master, has_self_signing, has_user_signing}.
    pub(crate) async fn cross_signing(&mut self, cmd: &Value) -> Result<()> {
        tokio::time::timeout(wait_ms(cmd), self.client.encryption().wait_for_e2ee_initialization_tasks())
            .await
            .map_err(|_| anyhow!("the encryption set-up did not finish within {} ms", wait_ms(cmd).as_millis()))?;
        emit(cross_signing_json(&self.name, &self.client).await);
        Ok(())
    }

    /// `oauth_refresh`: the refresh token grant; prints `refreshed`.
    pub(crate) async fn oauth_refresh(&mut self) -> Result<()> {
        self.client.oauth().refresh_access_token().await.context("refreshing the access token")?;
        emit(json!({"event": "refreshed", "as": self.name}));
        Ok(())
    }

    /// `oauth_logout`: stops the sync and revokes the session's token (RFC 7009); prints `logged_out`.
    pub(crate) async fn oauth_logout(&mut self) -> Result<()> {
        self.stop_sync().await?;
        self.client.oauth().logout().await.context("revoking the token")?;
        emit(json!({"event": "logged_out", "as": self.name}));
        Ok(())
    }
}
