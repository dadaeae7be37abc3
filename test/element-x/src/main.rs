//! weft-element-x: Element X's engine (matrix-sdk + matrix-sdk-ui, the crates Element X iOS and
//! Android are built on) driven by a script, for Weft's client tests.
//!
//! Commands arrive on stdin, one JSON object per line, and run in order; every observation is one
//! JSON object per line on stdout (see README.md for the full list). A command that fails prints
//! `{"event":"error",...}` and the program exits with status 1; the overall timeout (`--timeout`)
//! prints an error and exits with status 2. End of input stops the sync services and exits 0.
//!
//! Several sessions can run side by side (`"as": "name"` on any command, default "main"), each
//! with its own SQLite store, sync service and timelines: two Element X users can talk to each
//! other through one process.

use std::{collections::HashMap, path::PathBuf, sync::Arc, time::Duration};

use anyhow::{Context, Result, anyhow, bail};
use eyeball_im::Vector;
use futures_util::{StreamExt, pin_mut};
use matrix_sdk::{
    Client, Room, RoomState,
    encryption::{BackupDownloadStrategy, EncryptionSettings},
    ruma::{
        OwnedEventId, OwnedRoomId, RoomId, UserId,
        api::client::room::create_room::v3::Request as CreateRoomRequest,
        events::{
            InitialStateEvent,
            room::{encryption::RoomEncryptionEventContent, message::RoomMessageEventContent},
        },
    },
    sliding_sync::VersionBuilder,
};
use matrix_sdk_ui::{
    room_list_service::{RoomListLoadingState, filters},
    sync_service::{State as SyncState, SyncService},
    timeline::{
        EventSendState, EventTimelineItem, LatestEventValue, RoomExt, Timeline, TimelineItem,
    },
};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    sync::watch,
    time::Instant,
};

mod oauth;

const DEFAULT_WAIT_MS: u64 = 30_000;

/// Prints one observation line (stdout is line-buffered: each line is written whole). A closed
/// stdout (the driver went away) ends the program.
fn emit(v: Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{v}").and_then(|()| out.flush()).is_err() {
        std::process::exit(3);
    }
}

struct Args {
    homeserver: Option<String>,
    timeout: Duration,
    store_dir: Option<PathBuf>,
    log: String,
    insecure_tls: bool,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        homeserver: None,
        timeout: Duration::from_secs(120),
        store_dir: None,
        log: std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned()),
        insecure_tls: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| anyhow!("{name} needs a value"));
        match a.as_str() {
            "--homeserver" => args.homeserver = Some(val("--homeserver")?),
            "--timeout" => args.timeout = Duration::from_secs_f64(val("--timeout")?.parse().context("--timeout SECONDS")?),
            "--store-dir" => args.store_dir = Some(val("--store-dir")?.into()),
            "--log" => args.log = val("--log")?,
            "--insecure-tls" => args.insecure_tls = true,
            "-h" | "--help" => {
                eprintln!("usage: weft-element-x [--homeserver URL] [--timeout SECS] [--store-dir DIR] [--log FILTER] [--insecure-tls] < commands.jsonl\n(see test/element-x/README.md)");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(args)
}

/// One Element X session: a logged-in client, its sync service, its room list and open timelines.
struct Session {
    name: String,
    client: Client,
    _store: Option<TempDir>,
    sync: Option<Arc<SyncService>>,
    rooms: Option<watch::Receiver<RoomListView>>,
    timelines: HashMap<OwnedRoomId, OpenTimeline>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

#[derive(Clone, Default)]
struct RoomListView {
    rooms: Vec<Room>,
    loading: Option<RoomListLoadingState>,
}

struct OpenTimeline {
    timeline: Arc<Timeline>,
    items: watch::Receiver<Vector<Arc<TimelineItem>>>,
}

struct Ctx {
    args: Args,
    sessions: HashMap<String, Session>,
}

fn str_field<'a>(cmd: &'a Value, k: &str) -> Result<&'a str> {
    cmd.get(k).and_then(Value::as_str).ok_or_else(|| anyhow!("missing string field `{k}`"))
}

fn opt_str<'a>(cmd: &'a Value, k: &str) -> Option<&'a str> {
    cmd.get(k).and_then(Value::as_str)
}

fn wait_ms(cmd: &Value) -> Duration {
    Duration::from_millis(cmd.get("timeout_ms").and_then(Value::as_u64).unwrap_or(DEFAULT_WAIT_MS))
}

fn room_state_str(s: RoomState) -> &'static str {
    match s {
        RoomState::Joined => "joined",
        RoomState::Invited => "invited",
        RoomState::Left => "left",
        RoomState::Knocked => "knocked",
        RoomState::Banned => "banned",
    }
}

fn sync_state_name(s: &SyncState) -> &'static str {
    match s {
        SyncState::Idle => "Idle",
        SyncState::Running => "Running",
        SyncState::Terminated => "Terminated",
        SyncState::Offline => "Offline",
        SyncState::Error(_) => "Error",
    }
}

/// A timeline event item as the test sees it.
fn item_json(ev: &EventTimelineItem) -> Value {
    let content = ev.content();
    let (kind, body) = if let Some(m) = content.as_message() {
        ("message", Some(m.body().to_owned()))
    } else if content.is_unable_to_decrypt() {
        ("unable_to_decrypt", None)
    } else if content.is_redacted() {
        ("redacted", None)
    } else {
        ("other", None)
    };
    let send_state = ev.send_state().map(|s| match s {
        EventSendState::NotSentYet { .. } => json!("not_sent_yet"),
        EventSendState::SendingFailed { error, is_recoverable } => json!({"failed": error.to_string(), "recoverable": is_recoverable}),
        EventSendState::Sent { .. } => json!("sent"),
    });
    let enc = ev.encryption_info();
    json!({
        "event_id": ev.event_id().map(|e| e.to_string()),
        "txn_id": ev.transaction_id().map(|t| t.to_string()),
        "sender": ev.sender().to_string(),
        "ts": u64::from(ev.timestamp().0),
        "kind": kind,
        "event_type": content.event_type_str(),
        "body": body,
        "own": ev.is_own(),
        "local_echo": ev.is_local_echo(),
        "send_state": send_state,
        "origin": ev.origin().map(|o| format!("{o:?}")),
        // Encrypted on the wire: decrypted (encryption info present) or not decryptable.
        "encrypted": enc.is_some() || content.is_unable_to_decrypt(),
        "decrypted": enc.is_some(),
        "sender_device": enc.and_then(|e| e.sender_device.as_ref().map(|d| d.to_string())),
        "verification_state": enc.map(|e| format!("{:?}", e.verification_state)),
    })
}

async fn room_json(room: &Room) -> Value {
    let counts = room.unread_notification_counts();
    let latest = match room.latest_event().await {
        LatestEventValue::None => Value::Null,
        LatestEventValue::Remote { timestamp, sender, content, .. } => json!({
            "kind": "remote", "ts": u64::from(timestamp.0), "sender": sender.to_string(),
            "body": content.as_message().map(|m| m.body().to_owned()),
            "unable_to_decrypt": content.is_unable_to_decrypt(),
        }),
        LatestEventValue::RemoteInvite { timestamp, inviter, .. } => json!({
            "kind": "invite", "ts": u64::from(timestamp.0), "sender": inviter.map(|i| i.to_string()),
        }),
        LatestEventValue::Local { timestamp, sender, content, .. } => json!({
            "kind": "local", "ts": u64::from(timestamp.0), "sender": sender.to_string(),
            "body": content.as_message().map(|m| m.body().to_owned()),
        }),
    };
    let mut latest = latest;
    if let Some(id) = std::ops::Deref::deref(room).latest_event().event_id() {
        latest["event_id"] = json!(id.to_string());
    }
    json!({
        "room_id": room.room_id().to_string(),
        "name": room.cached_display_name().map(|n| n.to_string()),
        "state": room_state_str(room.state()),
        "encrypted": room.encryption_state().is_encrypted(),
        "recency_stamp": room.recency_stamp().map(|r| u64::from(r)),
        "latest_event": latest,
        "unread_messages": room.num_unread_messages(),
        "unread_notifications": room.num_unread_notifications(),
        "unread_mentions": room.num_unread_mentions(),
        "server_notification_count": u64::from(counts.notification_count),
        "server_highlight_count": u64::from(counts.highlight_count),
        "joined_members": room.joined_members_count(),
    })
}

/// The `logged_in` line of a session: who it is, its device and its identity keys.
async fn logged_in_json(name: &str, client: &Client, homeserver: &str) -> Value {
    json!({
        "event": "logged_in", "as": name,
        "user_id": client.user_id().map(|u| u.to_string()),
        "device_id": client.device_id().map(|d| d.to_string()), "homeserver": homeserver,
        "sliding_sync_version": format!("{:?}", client.sliding_sync_version()),
        "ed25519": client.encryption().ed25519_key().await,
        "curve25519": client.encryption().curve25519_key().await.map(|k| k.to_base64()),
    })
}

/// Waits until `pred` holds on the watched value (checked now and on each change), or times out.
async fn wait_watch<T: Clone, R>(
    rx: &mut watch::Receiver<T>,
    timeout: Duration,
    what: &str,
    mut pred: impl FnMut(&T) -> Option<R>,
    describe: impl Fn(&T) -> String,
) -> Result<R> {
    let deadline = Instant::now() + timeout;
    loop {
        let current = rx.borrow_and_update().clone();
        if let Some(r) = pred(&current) {
            return Ok(r);
        }
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => bail!("{what}: the source closed (last seen: {})", describe(&current)),
            Err(_) => bail!("timed out after {} ms waiting for {what} (last seen: {})", timeout.as_millis(), describe(&current)),
        }
    }
}

fn describe_rooms(v: &RoomListView) -> String {
    format!(
        "{} rooms {:?}, loading {:?}",
        v.rooms.len(),
        v.rooms.iter().map(|r| r.room_id().to_string()).collect::<Vec<_>>(),
        v.loading
    )
}

fn describe_items(items: &Vector<Arc<TimelineItem>>) -> String {
    let evs: Vec<Value> = items.iter().filter_map(|i| i.as_event()).map(item_json).collect();
    let n = evs.len();
    format!("{} event items, last: {}", n, Value::from(evs.into_iter().rev().take(5).collect::<Vec<_>>()))
}

impl Ctx {
    fn session(&mut self, cmd: &Value) -> Result<&mut Session> {
        let name = opt_str(cmd, "as").unwrap_or("main");
        self.sessions.get_mut(name).ok_or_else(|| anyhow!("no session `{name}`: log in first"))
    }

    async fn run(&mut self, cmd: &Value) -> Result<()> {
        let op = str_field(cmd, "cmd")?;
        match op {
            "login" => self.login(cmd).await,
            "start_sync" => self.session(cmd)?.start_sync().await,
            "wait_rooms" => self.session(cmd)?.wait_rooms(cmd).await,
            "join" => self.session(cmd)?.join(cmd).await,
            "create_room" => self.session(cmd)?.create_room(cmd).await,
            "open_timeline" => self.session(cmd)?.open_timeline(cmd).await,
            "paginate" => self.session(cmd)?.paginate(cmd).await,
            "timeline" => self.session(cmd)?.print_timeline(cmd).await,
            "send" => self.session(cmd)?.send(cmd).await,
            "wait_message" => self.session(cmd)?.wait_message(cmd).await,
            "wait_device" => self.session(cmd)?.wait_device(cmd).await,
            "stop_sync" => self.session(cmd)?.stop_sync().await,
            "oauth_login" => self.oauth_login(cmd).await,
            "oauth_finish" => self.session(cmd)?.oauth_finish(cmd).await,
            "qr_login" => self.qr_login(cmd).await,
            "whoami" => self.session(cmd)?.whoami().await,
            "tokens" => self.session(cmd)?.tokens(),
            "cross_signing" => self.session(cmd)?.cross_signing(cmd).await,
            "oauth_refresh" => self.session(cmd)?.oauth_refresh().await,
            "oauth_logout" => self.session(cmd)?.oauth_logout().await,
            other => bail!("unknown command `{other}`"),
        }
    }

    /// The homeserver of a login command: its `homeserver`, else --homeserver.
    fn homeserver(&self, cmd: &Value) -> Result<String> {
        opt_str(cmd, "homeserver")
            .map(str::to_owned)
            .or_else(|| self.args.homeserver.clone())
            .ok_or_else(|| anyhow!("no homeserver: pass --homeserver or `homeserver` in the login command"))
    }

    /// Inserts a new session (its name must be free).
    fn add_session(&mut self, name: String, client: Client, store: Option<TempDir>) {
        self.sessions.insert(
            name.clone(),
            Session { name, client, _store: store, sync: None, rooms: None, timelines: HashMap::new(), tasks: Vec::new() },
        );
    }

    async fn login(&mut self, cmd: &Value) -> Result<()> {
        let name = opt_str(cmd, "as").unwrap_or("main").to_owned();
        if self.sessions.contains_key(&name) {
            bail!("session `{name}` exists");
        }
        let homeserver = self.homeserver(cmd)?;
        let user = str_field(cmd, "user")?;
        let password = str_field(cmd, "password")?;
        let (client, store_guard) = self.build_client(cmd, &name, &homeserver, false).await?;
        client
            .matrix_auth()
            .login_username(user, password)
            .initial_device_display_name(opt_str(cmd, "device_name").unwrap_or("Weft Element X test"))
            .await
            .context("password login")?;
        emit(logged_in_json(&name, &client, &homeserver).await);
        self.add_session(name, client, store_guard);
        Ok(())
    }

    /// A client for session `name` (its SQLite store in --store-dir or a temporary folder), with
    /// Element X's settings: simplified sliding sync, the crypto settings of `crypto_setup`, and,
    /// for OAuth sessions, refresh-token handling.
    async fn build_client(&self, cmd: &Value, name: &str, homeserver: &str, refresh_tokens: bool) -> Result<(Client, Option<TempDir>)> {
        let (store_path, store_guard) = match &self.args.store_dir {
            Some(dir) => {
                let p = dir.join(name);
                std::fs::create_dir_all(&p)?;
                (p, None)
            }
            None => {
                let t = tempfile::Builder::new().prefix("weft-element-x-").tempdir()?;
                (t.path().to_owned(), Some(t))
            }
        };
        // Element X asks /versions whether the server serves simplified sliding sync
        // (`org.matrix.simplified_msc3575` in unstable_features) and refuses a server that does not;
        // "native" skips that check (the SDK's own default).
        let version = match opt_str(cmd, "sliding_sync").unwrap_or("discover") {
            "discover" => VersionBuilder::DiscoverNative,
            "native" => VersionBuilder::Native,
            other => bail!("sliding_sync must be discover or native, not {other}"),
        };
        // Element X's encryption settings: cross-signing bootstrapped at login, key backup
        // enabled, keys downloaded from backup after a decryption failure.
        let crypto_setup = cmd.get("crypto_setup").and_then(Value::as_bool).unwrap_or(true);
        let mut builder = Client::builder()
            .homeserver_url(homeserver)
            .sqlite_store(&store_path, None)
            .sliding_sync_version_builder(version)
            // The SDK's default: a `well_known` in the login response moves the client to that base URL.
            .respect_login_well_known(cmd.get("respect_login_well_known").and_then(Value::as_bool).unwrap_or(true))
            .with_encryption_settings(EncryptionSettings {
                auto_enable_cross_signing: crypto_setup,
                backup_download_strategy: BackupDownloadStrategy::AfterDecryptionFailure,
                auto_enable_backups: crypto_setup,
            });
        if self.args.insecure_tls {
            builder = builder.disable_ssl_verification();
        }
        if refresh_tokens {
            // Element X refreshes OAuth access tokens as they expire (or are refused as unknown).
            builder = builder.handle_refresh_tokens();
        }
        let client = builder.build().await.context("building the client")?;
        Ok((client, store_guard))
    }

    async fn shutdown(&mut self) {
        for s in self.sessions.values_mut() {
            let _ = s.stop_sync().await;
            for t in s.tasks.drain(..) {
                t.abort();
            }
        }
    }
}

impl Session {
    fn rooms_rx(&self) -> Result<watch::Receiver<RoomListView>> {
        self.rooms.clone().ok_or_else(|| anyhow!("start_sync first"))
    }

    fn room_id(cmd: &Value) -> Result<OwnedRoomId> {
        RoomId::parse(str_field(cmd, "room_id")?).context("room_id")
    }

    /// Builds and starts the sync service (room list + encryption syncs, as Element X) and a task
    /// mirroring the "all rooms" list in the UI crate's order.
    async fn start_sync(&mut self) -> Result<()> {
        if self.sync.is_some() {
            bail!("sync already started");
        }
        let sync = Arc::new(SyncService::builder(self.client.clone()).with_offline_mode().build().await.context("building the sync service")?);
        let name = self.name.clone();

        // Observations of the sync service's and the room list service's states.
        let mut states = sync.state();
        let n = name.clone();
        self.tasks.push(tokio::spawn(async move {
            let line = |s: &SyncState| {
                let mut o = json!({"event": "sync_state", "as": n, "service": "sync_service"});
                o["state"] = json!(sync_state_name(s));
                if let SyncState::Error(e) = s {
                    o["error"] = json!(format!("{e:#}"));
                }
                o
            };
            emit(line(&states.get()));
            while let Some(s) = states.next().await {
                emit(line(&s));
            }
        }));
        let rls = sync.room_list_service();
        let mut rl_states = rls.state();
        let n = name.clone();
        self.tasks.push(tokio::spawn(async move {
            while let Some(s) = rl_states.next().await {
                emit(json!({"event": "sync_state", "as": n, "service": "room_list", "state": format!("{s:?}")}));
            }
        }));

        let (tx, rx) = watch::channel(RoomListView::default());
        let n = name.clone();
        self.tasks.push(tokio::spawn(async move {
            let list = match rls.all_rooms().await {
                Ok(l) => l,
                Err(e) => {
                    emit(json!({"event": "warning", "as": n, "message": format!("all_rooms: {e:#}")}));
                    return;
                }
            };
            let mut loading = list.loading_state();
            // Element X shows "all" rooms: joined and invited, not left, one version per upgraded room.
            let (stream, controller) = list.entries_with_dynamic_adapters(10_000);
            controller.set_filter(Box::new(filters::new_filter_all(vec![
                Box::new(filters::new_filter_non_left()),
                Box::new(filters::new_filter_deduplicate_versions()),
            ])));
            pin_mut!(stream);
            let mut items = Vector::new();
            loop {
                tokio::select! {
                    diffs = stream.next() => {
                        let Some(diffs) = diffs else { break };
                        for d in diffs {
                            d.apply(&mut items);
                        }
                        tx.send_modify(|v| v.rooms = items.iter().map(|i: &matrix_sdk_ui::room_list_service::RoomListItem| (**i).clone()).collect());
                    }
                    state = loading.next() => {
                        let Some(state) = state else { break };
                        tx.send_modify(|v| v.loading = Some(state));
                    }
                }
            }
        }));
        self.rooms = Some(rx);
        sync.start().await;
        self.sync = Some(sync);
        emit(json!({"event": "sync_started", "as": name}));
        Ok(())
    }

    async fn stop_sync(&mut self) -> Result<()> {
        if let Some(s) = self.sync.take() {
            s.stop().await;
            emit(json!({"event": "sync_stopped", "as": self.name}));
        }
        Ok(())
    }

    /// `wait_rooms`: waits until the list holds at least `min` rooms (default 1), every room of
    /// `contains`, and starts with the rooms of `order` in that order; prints the list.
    async fn wait_rooms(&mut self, cmd: &Value) -> Result<()> {
        let mut rx = self.rooms_rx()?;
        let min = cmd.get("min").and_then(Value::as_u64).unwrap_or(1) as usize;
        let ids = |k: &str| -> Vec<String> {
            cmd.get(k).and_then(Value::as_array).map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
        };
        let order = ids("order");
        let contains = ids("contains");
        let joined = ids("joined");
        // `previews: [room ids]` (or `true`: every listed room): those rooms have their latest event
        // computed (the room preview).
        let all_previews = cmd.get("previews").and_then(Value::as_bool).unwrap_or(false);
        let previews = ids("previews");
        // `{room_id: n}` maps: `notification_counts`, the server's notification count of each such
        // room (Synapse always sends 0); `unread_messages`, the SDK's own count of unread messages.
        let per_room = |k: &str| -> Vec<(String, u64)> {
            cmd.get(k)
                .and_then(Value::as_object)
                .map(|o| o.iter().filter_map(|(k, v)| v.as_u64().map(|n| (k.clone(), n))).collect())
                .unwrap_or_default()
        };
        // `latest_event_ids: {room_id: event_id}`: the room's preview is that event.
        let latest: Vec<(String, String)> = cmd
            .get("latest_event_ids")
            .and_then(Value::as_object)
            .map(|o| o.iter().filter_map(|(k, v)| v.as_str().map(|e| (k.clone(), e.to_owned()))).collect())
            .unwrap_or_default();
        let counts = per_room("notification_counts");
        let unread = per_room("unread_messages");
        let view = wait_watch(
            &mut rx,
            wait_ms(cmd),
            "the room list",
            |v: &RoomListView| {
                let loaded = matches!(v.loading, Some(RoomListLoadingState::Loaded { .. }));
                let listed: Vec<String> = v.rooms.iter().map(|r| r.room_id().to_string()).collect();
                let ok = loaded
                    && listed.len() >= min
                    && contains.iter().all(|c| listed.contains(c))
                    && joined.iter().all(|j| v.rooms.iter().any(|r| r.room_id().as_str() == j && r.state() == RoomState::Joined))
                    && (!all_previews || v.rooms.iter().all(|r| r.latest_event_timestamp().is_some()))
                    && previews.iter().all(|p| v.rooms.iter().any(|r| r.room_id().as_str() == p && r.latest_event_timestamp().is_some()))
                    && counts.iter().all(|(id, n)| {
                        v.rooms.iter().any(|r| r.room_id().as_str() == id && u64::from(r.unread_notification_counts().notification_count) == *n)
                    })
                    && latest.iter().all(|(id, e)| {
                        v.rooms.iter().any(|r| r.room_id().as_str() == id && std::ops::Deref::deref(r).latest_event().event_id().is_some_and(|x| x.as_str() == e))
                    })
                    && unread.iter().all(|(id, n)| v.rooms.iter().any(|r| r.room_id().as_str() == id && r.num_unread_messages() == *n))
                    && listed.len() >= order.len()
                    && listed.iter().zip(order.iter()).all(|(a, b)| a == b);
                ok.then(|| v.clone())
            },
            describe_rooms,
        )
        .await?;
        let mut rooms = Vec::new();
        for r in &view.rooms {
            rooms.push(room_json(r).await);
        }
        let max = match view.loading {
            Some(RoomListLoadingState::Loaded { maximum_number_of_rooms }) => maximum_number_of_rooms.map(Value::from).unwrap_or(Value::Null),
            _ => Value::Null,
        };
        emit(json!({"event": "room_list", "as": self.name, "count": rooms.len(), "maximum_number_of_rooms": max, "rooms": rooms}));
        Ok(())
    }

    async fn join(&mut self, cmd: &Value) -> Result<()> {
        let room_id = Self::room_id(cmd)?;
        let room = match self.client.get_room(&room_id) {
            Some(r) => {
                r.join().await.context("joining")?;
                r
            }
            None => self.client.join_room_by_id(&room_id).await.context("joining")?,
        };
        emit(json!({"event": "joined", "as": self.name, "room_id": room.room_id().to_string()}));
        Ok(())
    }

    async fn create_room(&mut self, cmd: &Value) -> Result<()> {
        let mut req = CreateRoomRequest::new();
        req.name = opt_str(cmd, "name").map(str::to_owned);
        req.invite = cmd
            .get("invite")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().and_then(|s| UserId::parse(s).ok())).collect())
            .unwrap_or_default();
        if cmd.get("encrypted").and_then(Value::as_bool).unwrap_or(false) {
            req.initial_state = vec![InitialStateEvent::with_empty_state_key(RoomEncryptionEventContent::with_recommended_defaults()).to_raw_any()];
        }
        let room = self.client.create_room(req).await.context("creating the room")?;
        emit(json!({"event": "room_created", "as": self.name, "room_id": room.room_id().to_string()}));
        Ok(())
    }

    /// Opens a room's timeline as Element X does when the user taps the room: subscribes to the room
    /// in sliding sync, builds the live timeline, and mirrors its items. Prints the last `last`
    /// event items (default 10), after paginating back until there are `min_items` (default 0).
    async fn open_timeline(&mut self, cmd: &Value) -> Result<()> {
        let room_id = Self::room_id(cmd)?;
        let sync = self.sync.clone().ok_or_else(|| anyhow!("start_sync first"))?;
        let mut rx = self.rooms_rx()?;
        let wanted = room_id.clone();
        wait_watch(&mut rx, wait_ms(cmd), "the room in the room list", |v: &RoomListView| v.rooms.iter().any(|r| r.room_id() == wanted).then_some(()), describe_rooms).await?;
        let rls = sync.room_list_service();
        let room = rls.room(&room_id)?;
        rls.subscribe_to_rooms(&[&room_id]).await;
        let timeline = Arc::new(room.timeline().await.context("building the timeline")?);
        let (items, stream) = timeline.subscribe().await;
        let (tx, items_rx) = watch::channel(items.clone());
        self.tasks.push(tokio::spawn(async move {
            pin_mut!(stream);
            let mut items = items;
            while let Some(diffs) = stream.next().await {
                for d in diffs {
                    d.apply(&mut items);
                }
                tx.send_replace(items.clone());
            }
        }));
        self.timelines.insert(room_id.clone(), OpenTimeline { timeline, items: items_rx });
        let min_items = cmd.get("min_items").and_then(Value::as_u64).unwrap_or(0) as usize;
        if min_items > 0 {
            self.paginate_until(&room_id, min_items, wait_ms(cmd)).await?;
        }
        emit(json!({"event": "timeline_opened", "as": self.name, "room_id": room_id.to_string()}));
        self.print_timeline(cmd).await
    }

    fn timeline(&self, room_id: &RoomId) -> Result<&OpenTimeline> {
        self.timelines.get(room_id).ok_or_else(|| anyhow!("open_timeline {room_id} first"))
    }

    async fn paginate_until(&self, room_id: &RoomId, min_items: usize, timeout: Duration) -> Result<()> {
        let tl = self.timeline(room_id)?;
        let deadline = Instant::now() + timeout;
        loop {
            let have = tl.items.borrow().iter().filter(|i| i.as_event().is_some()).count();
            if have >= min_items {
                return Ok(());
            }
            let hit_start = tokio::time::timeout_at(deadline, tl.timeline.paginate_backwards(20))
                .await
                .map_err(|_| anyhow!("timed out paginating back to {min_items} items (have {have})"))?
                .context("paginating backwards")?;
            if hit_start {
                let have = tl.items.borrow().iter().filter(|i| i.as_event().is_some()).count();
                emit(json!({"event": "timeline_start_reached", "as": self.name, "room_id": room_id.to_string(), "event_items": have}));
                return Ok(());
            }
        }
    }

    async fn paginate(&mut self, cmd: &Value) -> Result<()> {
        let room_id = Self::room_id(cmd)?;
        let min_items = cmd.get("min_items").and_then(Value::as_u64).unwrap_or(20) as usize;
        self.paginate_until(&room_id, min_items, wait_ms(cmd)).await?;
        self.print_timeline(cmd).await
    }

    async fn print_timeline(&mut self, cmd: &Value) -> Result<()> {
        let room_id = Self::room_id(cmd)?;
        let tl = self.timeline(&room_id)?;
        let last = cmd.get("last").and_then(Value::as_u64).unwrap_or(10) as usize;
        let items: Vec<Value> = tl.items.borrow().iter().filter_map(|i| i.as_event()).map(item_json).collect();
        let total = items.len();
        let tail: Vec<Value> = items.into_iter().skip(total.saturating_sub(last)).collect();
        emit(json!({"event": "timeline", "as": self.name, "room_id": room_id.to_string(), "event_items": total, "items": tail}));
        Ok(())
    }

    /// Sends a text message through the timeline (the send queue, local echo first) and prints
    /// `local_echo`, then `sent` once the server gave it an event id, then (unless
    /// `remote_echo: false`) `remote_echo` once it came back through sliding sync.
    async fn send(&mut self, cmd: &Value) -> Result<()> {
        let room_id = Self::room_id(cmd)?;
        let body = str_field(cmd, "body")?.to_owned();
        let timeout = wait_ms(cmd);
        let tl = self.timeline(&room_id)?;
        let mut rx = tl.items.clone();
        tl.timeline.send(RoomMessageEventContent::text_plain(&body).into()).await.context("timeline send")?;
        let mine = |i: &Arc<TimelineItem>| -> Option<EventTimelineItem> {
            let ev = i.as_event()?;
            (ev.is_own() && ev.content().as_message().is_some_and(|m| m.body() == body)).then(|| ev.clone())
        };
        let echo = wait_watch(&mut rx, timeout, "the local echo", |items| items.iter().rev().find_map(mine), describe_items).await?;
        let mut out = item_json(&echo);
        out["event"] = json!("local_echo");
        out["as"] = json!(self.name);
        out["room_id"] = json!(room_id.to_string());
        emit(out);
        let sent = wait_watch(
            &mut rx,
            timeout,
            "the server's event id for the message",
            |items| {
                let ev = items.iter().rev().find_map(mine)?;
                if let Some(EventSendState::SendingFailed { error, .. }) = ev.send_state() {
                    return Some(Err(anyhow!("sending failed: {error}")));
                }
                if ev.event_id().is_some() { Some(Ok(ev)) } else { None }
            },
            describe_items,
        )
        .await??;
        let event_id: OwnedEventId = sent.event_id().unwrap().to_owned();
        let mut out = item_json(&sent);
        out["event"] = json!("sent");
        out["as"] = json!(self.name);
        out["room_id"] = json!(room_id.to_string());
        out["room_encrypted"] = json!(tl.timeline.room().encryption_state().is_encrypted());
        emit(out);
        if cmd.get("remote_echo").and_then(Value::as_bool).unwrap_or(true) {
            let remote = wait_watch(
                &mut rx,
                timeout,
                "the remote echo of the message",
                |items| items.iter().rev().filter_map(|i| i.as_event()).find(|e| e.is_remote_event() && e.event_id() == Some(&*event_id)).cloned(),
                describe_items,
            )
            .await?;
            let mut out = item_json(&remote);
            out["event"] = json!("remote_echo");
            out["as"] = json!(self.name);
            out["room_id"] = json!(room_id.to_string());
            emit(out);
        }
        Ok(())
    }

    /// Waits for a message from someone else (or from `sender`), matched by `body` and/or
    /// `event_id`, to be in the timeline and readable (decrypted when encrypted), and prints it.
    async fn wait_message(&mut self, cmd: &Value) -> Result<()> {
        let room_id = Self::room_id(cmd)?;
        let body = opt_str(cmd, "body").map(str::to_owned);
        let event_id = opt_str(cmd, "event_id").map(str::to_owned);
        if body.is_none() && event_id.is_none() {
            bail!("wait_message needs `body` or `event_id`");
        }
        let sender = opt_str(cmd, "sender").map(str::to_owned);
        let tl = self.timeline(&room_id)?;
        let mut rx = tl.items.clone();
        let ev = wait_watch(
            &mut rx,
            wait_ms(cmd),
            "the message",
            |items| {
                items.iter().rev().filter_map(|i| i.as_event()).find(|e| {
                    let from_ok = match &sender {
                        Some(s) => e.sender().as_str() == s,
                        None => !e.is_own(),
                    };
                    let id_ok = event_id.as_ref().is_none_or(|id| e.event_id().is_some_and(|x| x.as_str() == id));
                    let body_ok = body.as_ref().is_none_or(|b| e.content().as_message().is_some_and(|m| m.body() == b));
                    from_ok && id_ok && body_ok && e.content().as_message().is_some()
                }).cloned()
            },
            describe_items,
        )
        .await?;
        let mut out = item_json(&ev);
        out["event"] = json!("message");
        out["as"] = json!(self.name);
        out["room_id"] = json!(room_id.to_string());
        emit(out);
        Ok(())
    }

    /// Waits until this client's crypto knows the device `device_id` of `user_id` (asking the
    /// server), so that what it encrypts next is readable there.
    async fn wait_device(&mut self, cmd: &Value) -> Result<()> {
        let user_id = UserId::parse(str_field(cmd, "user_id")?)?;
        let device_id = str_field(cmd, "device_id")?;
        let deadline = Instant::now() + wait_ms(cmd);
        loop {
            if self.client.encryption().get_device(&user_id, device_id.into()).await?.is_some() {
                emit(json!({"event": "device_known", "as": self.name, "user_id": user_id.to_string(), "device_id": device_id}));
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("timed out waiting for device {device_id} of {user_id}");
            }
            // A /keys/query for the user (the crypto store keeps what it answers).
            self.client.encryption().request_user_identity(&user_id).await.context("querying the user's keys")?;
            if self.client.encryption().get_device(&user_id, device_id.into()).await?.is_some() {
                continue;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

async fn read_commands(ctx: &mut Ctx) -> Result<()> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cmd: Value = serde_json::from_str(line).with_context(|| format!("not JSON: {line}"))?;
        let op = cmd.get("cmd").and_then(Value::as_str).unwrap_or("?").to_owned();
        if op == "quit" {
            break;
        }
        let started = Instant::now();
        ctx.run(&cmd).await.map_err(|e| CmdError { cmd: cmd.clone(), err: e })?;
        let mut done = json!({"event": "done", "cmd": op, "ms": started.elapsed().as_millis() as u64});
        if let Some(id) = cmd.get("id") {
            done["id"] = id.clone();
        }
        if let Some(a) = cmd.get("as") {
            done["as"] = a.clone();
        }
        emit(done);
    }
    Ok(())
}

#[derive(Debug)]
struct CmdError {
    cmd: Value,
    err: anyhow::Error,
}
impl std::fmt::Display for CmdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.err)
    }
}
impl std::error::Error for CmdError {}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            emit(json!({"event": "error", "message": format!("{e:#}")}));
            std::process::exit(64);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(&args.log))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let overall = args.timeout;
    let mut ctx = Ctx { args, sessions: HashMap::new() };
    emit(json!({"event": "ready", "matrix_sdk": "0.18.0", "matrix_sdk_ui": "0.18.0", "pid": std::process::id()}));
    let outcome = tokio::time::timeout(overall, read_commands(&mut ctx)).await;
    let code = match outcome {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            let mut line = json!({"event": "error", "message": format!("{e:#}")});
            if let Some(ce) = e.downcast_ref::<CmdError>() {
                line["cmd"] = ce.cmd.get("cmd").cloned().unwrap_or(Value::Null);
                if let Some(id) = ce.cmd.get("id") {
                    line["id"] = id.clone();
                }
                if let Some(a) = ce.cmd.get("as") {
                    line["as"] = a.clone();
                }
            }
            emit(line);
            1
        }
        Err(_) => {
            emit(json!({"event": "error", "message": format!("overall timeout of {} s reached", overall.as_secs_f64())}));
            2
        }
    };
    // Stop the syncs (bounded: a stuck request must not hold the exit).
    let _ = tokio::time::timeout(Duration::from_secs(5), ctx.shutdown()).await;
    drop(ctx);
    std::process::exit(code);
}
