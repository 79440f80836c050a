import type { EXPERIMENT_ALLOCATIONS, EXPERIMENT_KINDS, EXPERIMENT_STATUSES } from '../enums.js';

/** Experiments and their periods (migration 0019), their units and looks (0032). */
export interface ExperimentsTable {
  id: string;
  tenant_id: string;
  page_id: string;
  /** A `versions` experiment's audience, or a holdout's segment; null for a holdout over every audience with a person. */
  audience_id: string | null;
  name: string;
  kind: (typeof EXPERIMENT_KINDS)[number];
  allocation: (typeof EXPERIMENT_ALLOCATIONS)[number];
  minimum_visits_per_arm: number;
  status: (typeof EXPERIMENT_STATUSES)[number];
  /** JSON: `[{ key, weight, versionId }]`, the current weights. */
  arms: string;
  winner: string | null;
  first_winner_at: string | null;
  /** The arm the first `winner` named (migration 0052); null before one, and for winners recorded before it. */
  first_winner: string | null;
  next_reweigh_at: string | null;
  started_at: string | null;
  concluded_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A stretch of fixed weights: its start, a weight change while running, or a bandit's recomputation. */
export interface ExperimentPeriodsTable {
  experiment_id: string;
  number: number;
  started_at: string;
  /** JSON: `{ armKey: weight }`. */
  weights: string;
  reason: 'start' | 'weights_changed' | 'bandit';
}

/** A secret per UTC day, shared by every instance and deleted once its day is over (src/db/daily-secrets.ts). */
export interface DailySecretsTable {
  day: string;
  secret: string;
}

/** A unit's arm, fixed at its first exposure (migration 0032): new weights apply to new units only. */
export interface ExperimentUnitsTable {
  experiment_id: string;
  /** `person:<id>`, or a daily visitor key. */
  unit: string;
  arm: string;
  assigned_at: string;
}

/** When a running experiment's results are next looked at for its first winner (src/experiments/looks.ts). */
export interface ExperimentLooksTable {
  experiment_id: string;
  next_look_at: string;
}

/** Each arm's smallest p-value over the scheduled looks, with the sign of its difference then (migration 0052). */
export interface ExperimentLookMinimaTable {
  experiment_id: string;
  arm: string;
  p_value: number;
  difference: number;
  looked_at: string;
}
