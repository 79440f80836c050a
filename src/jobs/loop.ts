/**
 * The round loop of a background worker (the webhook dispatcher, the page agent, housekeeping): a
 * round, then a wait until the next poll or until something wakes it, rounds at least `minGapMs`
 * apart so that a stream of wake-ups costs one round per gap, not one per wake-up. A round that
 * throws is logged and the loop goes on. With `unref`, its timers never keep the process alive on
 * their own.
 */
/** What app.ts starts when the app is ready and stops before it closes: every background job. */
export interface BackgroundJob {
  start(): void;
  /** Waits for the work under way. */
  stop(): Promise<void>;
}

export interface RoundLoop {
  start(): void;
  /** Run a round soon: now if idle, right after the current one if it is running. */
  wake(): void;
  /** Ends the loop after the current round. */
  stop(): Promise<void>;
}

export function roundLoop(options: {
  round: () => Promise<void>;
  pollMs: number;
  minGapMs: number;
  onError: (err: unknown) => void;
  unref?: boolean;
}): RoundLoop {
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  async function run(): Promise<void> {
    while (running) {
      woken = false;
      const started = Date.now();
      try {
        await options.round();
      } catch (err) {
        options.onError(err);
      }
      if (!running) break;
      if (!woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, options.pollMs);
          if (options.unref) timer.unref();
          wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wakeUp = undefined;
      }
      // Woken during the round or after it: either way, rounds start at least this far apart.
      const gap = options.minGapMs - (Date.now() - started);
      if (gap > 0 && running) {
        await new Promise((r) => {
          const timer = setTimeout(r, gap);
          if (options.unref) timer.unref();
        });
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    wake() {
      woken = true;
      wakeUp?.();
    },
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
    },
  };
}
