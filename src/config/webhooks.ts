import { ConfigError, type Env, readBoolean, readInteger, readString } from './read.js';

export interface WebhookDelivery {
  /** Run the dispatcher in this process. */
  enabled: boolean;
  /** Run the Slack alerts' loop in this process (it reads the outbox with a cursor of its own). */
  alerts: boolean;
  /** Deliver to loopback, private, link-local and multicast addresses too. */
  allowPrivate: boolean;
  /** Delays before each retry, in milliseconds. */
  retryScheduleMs: number[];
  timeoutMs: number;
  maxInFlight: number;
  maxInFlightPerSubscription: number;
}

const DEFAULT_RETRY_SCHEDULE_S = [5, 300, 1800, 7200, 18000, 36000, 36000];

export function readWebhooks(env: Env): WebhookDelivery {
  return {
    enabled: readBoolean(env, 'WEBHOOK_DISPATCHER', true),
    alerts: readBoolean(env, 'ALERT_SENDER', true),
    allowPrivate: readBoolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    retryScheduleMs: readSchedule(env),
    timeoutMs: readInteger(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 600_000),
    maxInFlight: readInteger(env, 'WEBHOOK_MAX_IN_FLIGHT', 100, 1, 10_000),
    maxInFlightPerSubscription: readInteger(env, 'WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION', 10, 1, 1000),
  };
}

/** Seconds between attempts, comma-separated (decimals allowed, so tests can shorten it). */
function readSchedule(env: Env): number[] {
  const raw = readString(env, 'WEBHOOK_RETRY_SCHEDULE');
  if (raw === undefined) return DEFAULT_RETRY_SCHEDULE_S.map((s) => s * 1000);
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 50 || !parts.every((p) => /^\d+(\.\d+)?$/.test(p))) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, e.g. 5,300,1800, got "${raw}"`);
  }
  return parts.map((p) => Math.round(Number(p) * 1000));
}
