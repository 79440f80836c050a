import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';

/**
 * The one place that decides whether data about a visitor or a lead may leave the service for a
 * third party (issue 45). Every exit asks it: the enrichment provider (a visit's address, a
 * lead's email), the CRM push, and Slack alerts. The tenant's own webhooks are not an exit here:
 * they carry the tenant's events to the tenant (docs/webhooks.md). docs/privacy.md lists each exit
 * and its rule; a new exit is added to EXITS and to that table.
 */
export const EXITS = ['enrichment.visit', 'enrichment.lead', 'crm.push', 'alert.slack'] as const;
export type Exit = (typeof EXITS)[number];

export interface Departure {
  /** Where the data would go. */
  exit: Exit;
  /** The visitor or lead sent `Sec-GPC: 1` (a stored flag of 1 counts as sent). */
  gpc: boolean | number | null | undefined;
  /**
   * Whether what the tenant set up asks for it: for a visit's look-up, a live segment of a
   * published page reads `company.*`; elsewhere the exit is asked only where a connected CRM, an
   * active alert or a lead's email gives it a reason, so it defaults to true.
   */
  needed?: boolean;
}

/** Whether the data may leave: never for a Global Privacy Control, and never without a reason. */
export function mayLeave({ gpc, needed = true }: Departure): boolean {
  return !(gpc === true || gpc === 1) && needed;
}

/** Whether a request carries the Global Privacy Control signal: `Sec-GPC: 1`, any other value is not it. */
export const sentGpc = (headers: Record<string, string | string[] | undefined>): boolean => headers['sec-gpc'] === '1';

/**
 * The same rule as a condition on a stored `gpc` column, for an exit that reads its rows in SQL
 * (the CRM push reads a batch of leads at a time: a row the rule keeps must never be read again
 * and again in front of the others).
 */
export function mayLeaveWhere<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  gpcColumn: Parameters<ExpressionBuilder<DB, TB>['ref']>[0],
): ExpressionWrapper<DB, TB, SqlBool> {
  return eb(eb.ref(gpcColumn), '=', 0 as never);
}
