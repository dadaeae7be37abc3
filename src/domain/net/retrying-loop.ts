// The machinery every outbound delivery queue shares (push gateways, application services): one run at a
// time, woken by `kick()`; a retry timer while the peer is failing (no run until it fires); and a stop that
// lets a request in flight finish for a grace period before aborting it. Subclasses say what a run does
// and whether more work arrived meanwhile.

export abstract class RetryingLoop {
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  protected stopped = false;
  readonly abort = new AbortController();

  /** One run: sends what is waiting, returns when done or when it scheduled a retry. */
  protected abstract run(): Promise<void>;
  /** Whether work arrived while a run was going (another run follows at once). */
  protected abstract hasWork(): boolean;
  /** A run that threw (logged by the subclass; it may schedule a retry). */
  protected abstract failed(err: unknown): void;

  get backingOff(): boolean {
    return this.timer !== undefined;
  }

  protected kick(): void {
    if (this.running || this.timer || this.stopped) return;
    this.running = this.run()
      .catch((err: unknown) => this.failed(err))
      .finally(() => {
        this.running = undefined;
        if (this.hasWork()) this.kick();
      });
  }

  /** No run before `ms` have passed; then one runs. */
  protected retryAfter(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  /** Ends the backoff now (the peer is known to be back). */
  protected cancelRetry(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    this.cancelRetry();
    const running = this.running;
    if (!running) return;
    const grace = setTimeout(() => this.abort.abort(), graceMs);
    await running;
    clearTimeout(grace);
  }
}
