import type { Kysely } from 'kysely';
import type { Database, PagesTable } from '../db/types.js';
import { findAudience, versionStatuses } from '../audiences/index.js';
import { AppError, invalidField } from '../http/errors.js';
import type { ExperimentCreate } from './schemas.js';

/** An arm as stored: a holdout's arms name no version. */
export interface StoredArm {
  key: string;
  weight: number;
  versionId: string | null;
}

export const HOLDOUT_ARMS = ['control', 'personalised'] as const;

/** What the schema cannot say of a new experiment's arms; each refusal names its field. */
export function checkArms(input: ExperimentCreate): StoredArm[] {
  const seen = new Map<string, number>();
  input.arms.forEach((arm, i) => {
    if (seen.has(arm.key)) throw invalidField(`/arms/${i}/key`, `is used by arm ${seen.get(arm.key)} too: keys are unique`);
    seen.set(arm.key, i);
  });
  if (input.kind === 'holdout') {
    if (input.arms.length !== 2 || !HOLDOUT_ARMS.every((k) => seen.has(k)))
      throw invalidField('/arms', 'of a holdout are exactly control and personalised');
    input.arms.forEach((arm, i) => {
      if (arm.versionId !== undefined) throw invalidField(`/arms/${i}/versionId`, 'is not taken by a holdout arm');
    });
    return input.arms.map((a) => ({ key: a.key, weight: a.weight, versionId: null }));
  }
  if (input.audienceId === undefined) throw invalidField('/audienceId', 'is required for a versions experiment');
  const versions = new Map<string, number>();
  input.arms.forEach((arm, i) => {
    if (arm.versionId === undefined) throw invalidField(`/arms/${i}/versionId`, 'is required for a versions experiment');
    if (versions.has(arm.versionId)) throw invalidField(`/arms/${i}/versionId`, `is served by arm ${versions.get(arm.versionId)} too`);
    versions.set(arm.versionId, i);
  });
  return input.arms.map((a) => ({ key: a.key, weight: a.weight, versionId: a.versionId ?? null }));
}

/**
 * A holdout's segment (issue 39): a live segment audience of the page (one with rules), checked at
 * creation and again at the start. A person's or the home audience is refused: a holdout without
 * `audienceId` covers the persons' audiences, and the home audience is what control shows.
 */
export async function checkSegmentHoldout(db: Kysely<Database>, page: PagesTable, audienceId: string): Promise<void> {
  const audience = await findAudience(db, page.tenant_id, page.id, audienceId);
  if (!audience) throw invalidField('/audienceId', 'is not an audience of this page');
  if (audience.rules === null)
    throw invalidField(
      '/audienceId',
      'is not a segment audience: a holdout names a segment (an audience with rules), or no audience to cover every audience with a person',
    );
  if (audience.home_page === 1)
    throw invalidField('/audienceId', 'is the home audience, which is what control shows: name another segment');
  if (audience.archived_at !== null)
    throw new AppError('conflict', 'The segment is archived', [{ path: '/audienceId', message: 'is archived' }]);
}

/**
 * A `versions` experiment's audience is a live audience of the page, and each arm a version of it
 * that is a draft or published (at creation, and again at the start: versions move meanwhile).
 */
export async function checkVersionsExperiment(
  db: Kysely<Database>,
  page: PagesTable,
  audienceId: string,
  arms: StoredArm[],
  when: 'create' | 'start',
): Promise<void> {
  const audience = await findAudience(db, page.tenant_id, page.id, audienceId);
  if (!audience) throw invalidField('/audienceId', 'is not an audience of this page');
  if (audience.archived_at !== null)
    throw new AppError('conflict', 'The audience is archived', [{ path: '/audienceId', message: 'is archived' }]);
  const ids = arms.map((a) => a.versionId ?? '');
  const versions = await versionStatuses(db, audience, ids);
  arms.forEach((arm, i) => {
    const version = versions.find((v) => v.id === arm.versionId);
    if (!version) throw invalidField(`/arms/${i}/versionId`, 'is not a version of this audience');
    if (version.status !== 'draft' && version.status !== 'published') {
      const message = `is ${version.status}: an arm serves a draft or published version`;
      throw new AppError('conflict', `${when === 'start' ? 'Cannot start: ' : ''}version ${version.id} ${message}`, [
        { path: `/arms/${i}/versionId`, message },
      ]);
    }
  });
}
