import type { GoalKind } from '../enums.js';

export interface GoalsTable {
  id: string;
  tenant_id: string;
  name: string;
  kind: GoalKind;
  /** The kind's field: action purpose, link path or event name; '' for a form. */
  target: string;
  /** A form goal's page; null for any page (and for the other kinds). */
  page_id: string | null;
  currency: string | null;
  /** What one visit's value adds to the goal at most (migration 0033). */
  max_value: number;
  /** A scroll goal's depth, 1 to 100; null for the other kinds (migration 0067). */
  threshold: number | null;
  /** A scroll goal's path glob as a LIKE pattern on the lowercased path; null for the other kinds. */
  path_like: string | null;
  created_at: string;
  updated_at: string;
}

export interface FunnelsTable {
  id: string;
  tenant_id: string;
  name: string;
  /** JSON: the steps as stored (src/goals/funnels.ts), 2 to 8, in order. */
  steps: string;
  window_hours: number;
  created_at: string;
  updated_at: string;
}

/** One moment a goal can name, per visit, kind and name (migration 0022). */
export interface VisitEventsTable {
  session_id: string;
  kind: GoalKind;
  name: string;
  tenant_id: string;
  page_id: string;
  audience_id: string;
  session_started_at: string;
  first_at: string;
  count: number;
  value: number;
}
