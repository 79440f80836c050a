/**
 * What this process knows of changes to a tenant's analytics: a counter per tenant, moved after a
 * transaction that wrote sessions (or deleted a page) has committed. The pages overview keeps its
 * answers while the counter stands still (src/analytics/overview.ts). It lives on the shared floor,
 * beside the outbox, because the areas that write (pages, sessions, the visitor plane) sit below
 * analytics and must not import it.
 */
const generations = new Map<string, number>();

export function sessionsChanged(tenantId: string): void {
  generations.set(tenantId, (generations.get(tenantId) ?? 0) + 1);
}

export function generation(tenantId: string): number {
  return generations.get(tenantId) ?? 0;
}
