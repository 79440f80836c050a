import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { isPostgres } from '../../db/adapter.js';
import type { Database } from '../../db/types.js';
import type { DecisionClaims } from '../decision-token.js';

/**
 * How a report of the site script is kept (issue 48 §4). A report carries totals so far for its
 * page view (the decision token names the view): a view counts once, its clicks by what they grew
 * since the view's last report, so a repeated or reordered report adds nothing. Visitors are the
 * distinct daily visitor keys of a day (`experience_units`); a conversion counts once per key and
 * day, and only for the experiences that key viewed that day (docs/decisions.md, issue 48). A
 * conversion whose view is not kept yet waits for it (`experience_early_conversions`) and converts
 * it when it comes, if it was decided no later than the conversion: a view's report that arrives
 * after its conversion page's loses nothing.
 */
export interface ExperienceReport {
  claims: DecisionClaims;
  /** The decision token, whose hash names the page view. */
  token: string;
  /** Clicks so far on each experience's changed elements, by experience id. */
  clicks: Record<string, number>;
  /** `pam.conversion()` calls so far on this page: any converts the visitor. */
  conversions: number;
  /** The account domain of the person `pam.identify()` named, when the tenant knows them. */
  accountDomain: string | undefined;
  at: string;
}

type Sums = { views: number; visitors: number; clicks: number; conversions: number };
const ZERO: Sums = { views: 0, visitors: 0, clicks: 0, conversions: 0 };

/** A unit's day, as its rows (`experience_units`, `experience_early_conversions`) are keyed. */
const unitOf = (claims: DecisionClaims) => ({ tenant_id: claims.tenantId, day: claims.day, unit: claims.unit });

export const viewKeyOf = (token: string): string => createHash('sha256').update(token).digest('base64url');

export async function recordReport(db: Kysely<Database>, report: ExperienceReport): Promise<void> {
  const { claims } = report;
  const viewKey = viewKeyOf(report.token);
  await db.transaction().execute(async (trx) => {
    await holdUnit(trx, claims);
    const sums = new Map<string, Sums & { experienceId: string; arm: string }>();
    const add = (experienceId: string, arm: string, more: Partial<Sums>) => {
      const key = `${experienceId}\n${arm}`;
      const s = sums.get(key) ?? { ...ZERO, experienceId, arm };
      for (const [k, v] of Object.entries(more) as [keyof Sums, number][]) s[k] += v;
      sums.set(key, s);
    };
    for (const { experienceId, arm } of claims.experiences) {
      const given = arm === 'personalised' ? (report.clicks[experienceId] ?? 0) : 0;
      const grown = await viewClicks(trx, viewKey, experienceId, claims.day, given);
      if (grown.first) {
        const unit = await trx
          .insertInto('experience_units')
          .values({
            tenant_id: claims.tenantId,
            experience_id: experienceId,
            day: claims.day,
            unit: claims.unit,
            arm,
            viewed_at: report.at,
            converted: 0,
            account_domain: null,
          })
          .onConflict((oc) => oc.columns(['experience_id', 'day', 'unit']).doNothing())
          .returning('arm')
          .executeTakeFirst();
        add(experienceId, arm, { views: 1, visitors: unit ? 1 : 0 });
        if (unit && (await convertedEarly(trx, claims, experienceId))) add(experienceId, arm, { conversions: 1 });
      }
      if (grown.clicks > 0) add(experienceId, arm, { clicks: grown.clicks });
    }
    // pam.conversion() names no experience: it converts every one the visitor viewed that day.
    const converting = report.conversions > 0 ? undefined : claims.converting;
    if (converting === undefined || converting.length > 0) {
      const converted = await trx
        .updateTable('experience_units')
        .set({ converted: 1 })
        .where((eb) => eb.and(unitOf(claims)))
        .where('converted', '=', 0)
        .$call((q) => (converting === undefined ? q : q.where('experience_id', 'in', converting)))
        .returning(['experience_id', 'arm'])
        .execute();
      for (const row of converted) add(row.experience_id, row.arm, { conversions: 1 });
      await keepEarly(trx, claims, converting);
    }
    if (report.accountDomain !== undefined) {
      await trx
        .updateTable('experience_units')
        .set({ account_domain: report.accountDomain })
        .where((eb) => eb.and(unitOf(claims)))
        .where((eb) => eb.or([eb('account_domain', 'is', null), eb('account_domain', '!=', report.accountDomain as string)]))
        .execute();
    }
    for (const s of sums.values()) await addToDay(trx, claims, s);
  });
}

/**
 * One unit's reports of a day, one at a time: on PostgreSQL two at once (a view and the conversion
 * page after it) would each miss the other's rows, so each takes a lock of the unit's for its
 * transaction. SQLite's writers take turns already.
 */
async function holdUnit(trx: Transaction<Database>, claims: DecisionClaims): Promise<void> {
  if (!isPostgres(trx)) return;
  const key = `${claims.tenantId}\n${claims.day}\n${claims.unit}`;
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}

/**
 * A conversion's experiences the unit has no view of yet (for `pam.conversion()`, all of them: ''),
 * kept with the conversion's decision time: a view's report may still come (`convertedEarly`).
 */
async function keepEarly(trx: Transaction<Database>, claims: DecisionClaims, converting: readonly string[] | undefined): Promise<void> {
  let waiting = [''];
  if (converting !== undefined) {
    const viewed = await trx
      .selectFrom('experience_units')
      .select('experience_id')
      .where((eb) => eb.and(unitOf(claims)))
      .where('experience_id', 'in', converting)
      .execute();
    const seen = new Set(viewed.map((r) => r.experience_id));
    waiting = converting.filter((id) => !seen.has(id));
  }
  if (waiting.length === 0) return;
  await trx
    .insertInto('experience_early_conversions')
    .values(
      waiting.map((experienceId) => ({
        tenant_id: claims.tenantId,
        day: claims.day,
        unit: claims.unit,
        experience_id: experienceId,
        issued_at: claims.issuedAt,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['tenant_id', 'day', 'unit', 'experience_id'])
        .doUpdateSet((eb) => ({ issued_at: eb.ref('excluded.issued_at') }))
        .where((eb) => eb('experience_early_conversions.issued_at', '<', eb.ref('excluded.issued_at'))),
    )
    .execute();
}

/**
 * Whether a unit's first view of an experience was converted before its report came: a conversion
 * of that experience (or `pam.conversion()`) kept for the unit's day, decided no earlier than the
 * view. The unit's row is marked converted then.
 */
async function convertedEarly(trx: Transaction<Database>, claims: DecisionClaims, experienceId: string): Promise<boolean> {
  const early = await trx
    .selectFrom('experience_early_conversions')
    .select('experience_id')
    .where((eb) => eb.and(unitOf(claims)))
    .where('experience_id', 'in', [experienceId, ''])
    .where('issued_at', '>=', claims.issuedAt)
    .executeTakeFirst();
  if (!early) return false;
  await trx
    .updateTable('experience_units')
    .set({ converted: 1 })
    .where('experience_id', '=', experienceId)
    .where('day', '=', claims.day)
    .where('unit', '=', claims.unit)
    .execute();
  return true;
}

/**
 * The view's clicks on one experience set to `given` when that is more than kept: what they grew
 * by, and whether this is the view's first report. A compare-and-set, so that two reports of one
 * view at once never both add the same clicks (the loser adds nothing; the next report carries it).
 */
async function viewClicks(
  trx: Transaction<Database>,
  viewKey: string,
  experienceId: string,
  day: string,
  given: number,
): Promise<{ first: boolean; clicks: number }> {
  const made = await trx
    .insertInto('experience_views')
    .values({ view_key: viewKey, experience_id: experienceId, day, clicks: given })
    .onConflict((oc) => oc.columns(['view_key', 'experience_id']).doNothing())
    .returning('clicks')
    .executeTakeFirst();
  if (made) return { first: true, clicks: given };
  const kept = await trx
    .selectFrom('experience_views')
    .select('clicks')
    .where('view_key', '=', viewKey)
    .where('experience_id', '=', experienceId)
    .executeTakeFirst();
  const before = Number(kept?.clicks ?? given);
  if (given <= before) return { first: false, clicks: 0 };
  const set = await trx
    .updateTable('experience_views')
    .set({ clicks: given })
    .where('view_key', '=', viewKey)
    .where('experience_id', '=', experienceId)
    .where('clicks', '=', before)
    .executeTakeFirst();
  return { first: false, clicks: Number(set.numUpdatedRows) === 1 ? given - before : 0 };
}

async function addToDay(trx: Transaction<Database>, claims: DecisionClaims, s: Sums & { experienceId: string; arm: string }) {
  const plus = (column: keyof Sums) => sql<number>`${sql.ref(`experience_days.${column}`)} + ${sql.ref(`excluded.${column}`)}`;
  await trx
    .insertInto('experience_days')
    .values({
      tenant_id: claims.tenantId,
      experience_id: s.experienceId,
      arm: s.arm,
      day: claims.day,
      views: s.views,
      visitors: s.visitors,
      clicks: s.clicks,
      conversions: s.conversions,
    })
    .onConflict((oc) =>
      oc.columns(['experience_id', 'day', 'arm']).doUpdateSet({
        views: plus('views'),
        visitors: plus('visitors'),
        clicks: plus('clicks'),
        conversions: plus('conversions'),
      }),
    )
    .execute();
}

/**
 * Page views older than yesterday can no longer report (their token is at most a day old), nor can
 * their units convert: both go, their counts being in the rollups, with the conversions that waited
 * for a view. An identified unit stays, as a pipeline touch, with its key, which once the day's
 * secret is gone names no one.
 */
export async function pruneExperienceViews(db: Kysely<Database>, at = Date.now()): Promise<number> {
  const before = new Date(at - 2 * 86_400_000).toISOString().slice(0, 10);
  const views = await db.deleteFrom('experience_views').where('day', '<', before).executeTakeFirst();
  const units = await db.deleteFrom('experience_units').where('day', '<', before).where('account_domain', 'is', null).executeTakeFirst();
  const early = await db.deleteFrom('experience_early_conversions').where('day', '<', before).executeTakeFirst();
  return Number(views.numDeletedRows) + Number(units.numDeletedRows) + Number(early.numDeletedRows);
}
