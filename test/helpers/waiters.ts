// Waiting on a condition that a recording peer's requests make true (push gateway, application service):
// `until(pred)` resolves once it holds — checked now and at each `check()` — or fails after a timeout.
export class Waiters {
  private waiting: { pred: () => boolean; resolve: () => void }[] = [];

  /** Re-checks every waiting condition (call after each recorded request). */
  check(): void {
    this.waiting = this.waiting.filter((w) => {
      if (!w.pred()) return true;
      w.resolve();
      return false;
    });
  }

  until(pred: () => boolean, ms: number, what: string): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      this.waiting.push({ pred, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}
