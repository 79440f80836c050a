import type { DELIVERY_STATUSES } from '../enums.js';
import type { OneOf } from './one-of.js';

export interface AlertsTable {
  id: string;
  tenant_id: string;
  name: string;
  /** A URL stored before issue 45, until the service seals it at start; '' afterwards. */
  webhook_url: string;
  /** The URL sealed (integrations/secrets.ts), the alert's id as additional data. */
  webhook_url_sealed: string | null;
  /** The URL as the API shows it (alerts/webhook-url.ts). */
  webhook_url_shown: string;
  /** When the last test message was asked for: one a minute. */
  test_sent_at: string | null;
  event: string;
  /** JSON arrays of ids; null matches any. */
  account_ids: string | null;
  segment_ids: string | null;
  page_ids: string | null;
  active: number;
  created_at: string;
  updated_at: string;
}

/** Per alert and account ('' for none): the hour of the last message and the events since without one. */
export interface AlertWindowsTable {
  alert_id: string;
  account_key: string;
  hour: string;
  more: number;
  carried: number;
}

export interface AlertMessagesTable {
  id: string;
  tenant_id: string;
  alert_id: string;
  event_type: string;
  /** JSON: the event's ids, path and channel; names are read at sending. */
  facts: string;
  /** Matching events of the previous hour that had no message of their own. */
  more: number;
  status: OneOf<typeof DELIVERY_STATUSES>;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  lease_until: string | null;
  created_at: string;
}
