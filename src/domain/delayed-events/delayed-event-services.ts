// The delayed events of this server (MSC4140) as Services holds them: their repository and the one timer
// that fires when the next is due. Started by the `delayedEventSender` background task (src/main.ts),
// which also sends what fell due while the server was down; until then `wake` only records nothing.
import type { Sql } from "../../storage/sql.ts";
import type { Services } from "../services.ts";
import { DelayedEventStore } from "../store/delayed-events.ts";

/** The longest a timer is set for: setTimeout's limit is ~24.8 days; past this the next pass sets it again. */
const MAX_TIMER_MS = 3_600_000;

export class DelayedEventServices {
  readonly store: DelayedEventStore;
  private services: Services | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (clock ms). */
  private timerAt = Infinity;
  private pass: Promise<void> | undefined;
  private passAgain = false;
  private sendDue: (s: Services, restart: boolean) => Promise<void> = async () => {};

  constructor(sql: Sql) {
    this.store = new DelayedEventStore(sql);
  }

  /** Sends what is due with `sendDue` (those taken before a restart too), then keeps the timer. */
  async start(s: Services, sendDue: (s: Services, restart: boolean) => Promise<void>): Promise<void> {
    this.services = s;
    this.sendDue = sendDue;
    await this.run(true);
  }

  async stop(): Promise<void> {
    this.services = undefined;
    this.clearTimer();
    await this.pass;
  }

  /** An event is due at `sendTs`: the timer fires by then. */
  wake(sendTs: number): void {
    const s = this.services;
    if (!s) return;
    if (this.pass) this.passAgain = true; // the pass reads the next send time again before it sets the timer
    else if (sendTs < this.timerAt) this.setTimer(s, sendTs);
  }

  /** Sends every event due now, then sets the timer for the next one (tests call it after moving the clock). */
  run(restart = false): Promise<void> {
    const s = this.services;
    if (!s) return Promise.resolve();
    if (this.pass) {
      this.passAgain = true;
      return this.pass;
    }
    this.pass = (async () => {
      try {
        let next: number | undefined;
        do {
          this.passAgain = false;
          await this.sendDue(s, restart);
          restart = false;
          next = await this.store.nextSendTs();
        } while (this.passAgain && this.services);
        this.clearTimer();
        if (next !== undefined && this.services) this.setTimer(s, next);
      } catch (err) {
        s.log.warn({ err }, "delayed events: a sending pass failed; retrying in a minute");
        if (this.services) this.setTimer(s, s.clock.now() + 60_000);
      } finally {
        this.pass = undefined;
      }
    })();
    return this.pass;
  }

  private setTimer(s: Services, at: number): void {
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      void this.run();
    }, Math.min(MAX_TIMER_MS, Math.max(0, at - s.clock.now())));
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }
}
