import type { DEAL_SOURCES, DEAL_STAGES } from '../enums.js';
import type { OneOf } from './one-of.js';

/** A CRM deal (migration 0037): amounts in hundredths, `account_id` null when no account matched. */
export interface DealsTable {
  id: string;
  tenant_id: string;
  source: OneOf<typeof DEAL_SOURCES>;
  external_id: string;
  name: string;
  /** The amount in hundredths of the currency's unit: sums stay exact integers. */
  amount_cents: number | string | bigint;
  /** ISO 4217, upper case. */
  currency: string;
  stage: OneOf<typeof DEAL_STAGES>;
  account_id: string | null;
  /** The domain the deal named, as given; null when it named none. */
  account_domain: string | null;
  /** The CRM's creation instant. */
  created_at: string;
  closed_at: string | null;
  /** When the service first recorded it. */
  recorded_at: string;
  updated_at: string;
}
