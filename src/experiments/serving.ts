import { armFor } from './assign.js';
import type { StoredArm } from './rules.js';

/** What the stamp of a served document says of experiments (site/serve/stamp.ts). */
export interface ExperimentStamp {
  personId: string | null;
  pageUpdatedAt: string;
  versionPublishedAt: string | null;
  experimentId: string | null;
  experimentKind: string | null;
  experimentArms: string | null;
  controlSince: string | null;
}

/** How one request is served in an experiment: its arm and unit, and what the arm shows. */
export interface Assignment {
  experimentId: string;
  arm: string;
  unit: string;
  /**
   * A holdout's control: for a person's audience, the page as a visitor with no audience sees it;
   * for a segment, the page as everyone sees it (site/serve/documents.ts).
   */
  asControl: boolean;
  /** A versions experiment's arm: the version it shows. */
  versionId: string | undefined;
}

/**
 * A stamp's arms, parsed once: the outcome memo serves many visits from one stamp (site/serve/run.ts).
 * Not a cache of the catalogue (db/caches.ts): it holds what its stamp holds, and goes with it.
 */
const parsedArms = new WeakMap<ExperimentStamp, readonly StoredArm[]>();
function armsOf(stamp: ExperimentStamp, text: string): readonly StoredArm[] {
  let arms = parsedArms.get(stamp);
  if (!arms) {
    arms = JSON.parse(text) as StoredArm[];
    parsedArms.set(stamp, arms);
  }
  return arms;
}

/** The unit's kept arm, or `candidate` stored as its arm at this first exposure (units.ts, `stickyArm`). */
export type KeepArm = (experimentId: string, unit: string, candidate: string) => Promise<string>;

/**
 * The arm of this request, or undefined outside experiments. The unit is the audience's person;
 * an audience without one takes the visitor's daily key (`visitorKey`, asked only then). A new unit
 * gets the weighted bucket of the current weights, and keeps it from then on (`keep`). A holdout
 * won by control serves control to the audiences it covered until another experiment starts, or
 * the page or the audience's version changes (`control`).
 */
export async function assignment(
  stamp: ExperimentStamp,
  visitorKey: (() => Promise<string>) | undefined,
  keep: KeepArm,
): Promise<Assignment | 'control' | undefined> {
  if (stamp.experimentId === null || stamp.experimentArms === null) {
    // The stamp names a control win only of a holdout that covered this audience (site/serve/stamp.ts).
    const since = stamp.controlSince;
    const holds = since !== null && stamp.pageUpdatedAt <= since && (stamp.versionPublishedAt ?? '') <= since;
    return holds ? 'control' : undefined;
  }
  const unit = stamp.personId !== null ? `person:${stamp.personId}` : await visitorKey?.();
  if (unit === undefined) return undefined;
  const arms = armsOf(stamp, stamp.experimentArms);
  const bucket = armFor(stamp.experimentId, unit, arms);
  const kept = await keep(stamp.experimentId, unit, bucket);
  // Arms are never removed, so a kept arm is always one of them; should it not be, the bucket serves.
  const arm = arms.some((a) => a.key === kept) ? kept : bucket;
  const chosen = arms.find((a) => a.key === arm);
  return {
    experimentId: stamp.experimentId,
    arm,
    unit,
    asControl: stamp.experimentKind === 'holdout' && arm === 'control',
    versionId: stamp.experimentKind === 'versions' ? (chosen?.versionId ?? undefined) : undefined,
  };
}
