import { ApiError } from '../core/errors';

/**
 * Failed credentials per client address, counted in fixed windows and consulted before a credential is checked:
 * a client past its allowance is refused (429, Retry-After) without a lookup, so a run of guessed API keys or
 * internal tokens costs neither a database read nor a comparison. Successes are not counted, so clients that
 * authenticate are never slowed by this. Counters live in the process, like the API's rate limits.
 */
export class CredentialFailures {
  private readonly windows = new Map<string, { failures: number; endsAt: number }>();

  constructor(
    /** Failures a client may have within one window; the next attempt is refused until the window ends. */
    readonly allowed: number,
    readonly windowMs: number,
    /** What the refusal says was failing ("API keys", "internal tokens"). */
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `client` may fail again, when it used up its failures in the current window; else undefined. */
  retryAfter(client: string): number | undefined {
    const window = this.windows.get(client);
    if (!window || window.endsAt <= this.now() || window.failures < this.allowed) return undefined;
    return Math.max(1, Math.ceil((window.endsAt - this.now()) / 1000));
  }

  /** Throws rate_limited when `client` used up its failures in the current window. */
  check(client: string): void {
    const seconds = this.retryAfter(client);
    if (seconds === undefined) return;
    throw new ApiError(
      'rate_limited',
      `Too many failed ${this.what} from this client: at most ${this.allowed} a minute; retry in ${seconds} seconds.`,
      {},
      { 'retry-after': String(seconds) },
    );
  }

  record(client: string): void {
    const now = this.now();
    const window = this.windows.get(client);
    if (window && window.endsAt > now) {
      window.failures += 1;
      return;
    }
    this.windows.delete(client);
    if (this.windows.size >= MAX_CLIENTS) this.forgetEnded(now);
    this.windows.set(client, { failures: 1, endsAt: now + this.windowMs });
  }

  /** Bounded memory under a spread of addresses: ended windows go first, then the oldest started. */
  private forgetEnded(now: number): void {
    for (const [client, window] of this.windows) if (window.endsAt <= now) this.windows.delete(client);
    for (const client of this.windows.keys()) {
      if (this.windows.size < MAX_CLIENTS) break;
      this.windows.delete(client);
    }
  }
}

/** Addresses tracked at once; about 100 bytes each. */
const MAX_CLIENTS = 50_000;

/** Wrong internal tokens one client may send a minute: the parcel system, holding the right one, sends none. */
export const INTERNAL_TOKEN_FAILURES_PER_MINUTE = 10;
