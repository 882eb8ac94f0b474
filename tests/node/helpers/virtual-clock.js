// A virtual clock for Node tests of timings: a tab's `now`, `setTimeout` and `clearTimeout`
// (tab-baton's `env`), whose timers fire only when the test runs them, so that figures are
// exact on any machine. The fakes of tab-baton/testing deliver messages and answer
// IndexedDB in real zero-delay timers: `settle()` lets those run between virtual steps.
import assert from 'node:assert/strict';

/** A virtual clock starting at `start` (ms). */
export function virtualClock(start = 1_000_000) {
  let now = start;
  let seq = 0;
  const timers = new Map();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      seq += 1;
      timers.set(seq, { at: now + Math.max(0, ms), fn });
      return seq;
    },
    clearTimeout(id) {
      timers.delete(id);
    },
    /** Runs the next due timer (moving the clock to it); false when none is left before `limit`. */
    step(limit) {
      let next = null;
      for (const [id, t] of timers) if (!next || t.at < next[1].at) next = [id, t];
      if (!next || next[1].at > limit) return false;
      timers.delete(next[0]);
      now = Math.max(now, next[1].at);
      next[1].fn();
      return true;
    },
    /**
     * Runs `ms` of virtual time: every timer due by its end, letting the fakes deliver
     * (`settle`) before each, and leaves the clock at the end.
     */
    async run(ms) {
      const end = now + ms;
      for (;;) {
        await settle();
        if (!this.step(end)) break;
      }
      now = Math.max(now, end);
    },
    /**
     * Runs virtual time, timer by timer (letting the fakes deliver before each), until
     * `predicate()` holds; fails the test if it does not within `limitMs` of virtual time.
     */
    async until(predicate, { limitMs = 60_000, what = String(predicate) } = {}) {
      const end = now + limitMs;
      for (;;) {
        await settle();
        if (await predicate()) return;
        if (!this.step(end)) assert.fail(`not within ${limitMs} virtual ms: ${what}`);
      }
    },
    /** The env members that make a tab run on this clock. */
    env() {
      return { now: this.now, setTimeout: this.setTimeout, clearTimeout: this.clearTimeout };
    },
  };
}

/** Lets the fakes' own deliveries (real zero-delay timers) and promise jobs run. */
export async function settle() {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setTimeout(resolve, 0));
}
