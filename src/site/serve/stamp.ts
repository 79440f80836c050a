import { sql, type Kysely } from 'kysely';
import { erasedRouteKey } from '../../audiences/index.js';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/types.js';
import type { AudienceChoice } from './resolve.js';

/**
 * Everything a served document depends on, read by id and `updated_at` in one indexed query per
 * request: the document cache is keyed by it, whole, with the variant (choose.ts, `variantKey`), so a
 * change acknowledged by the API on any instance (each change moves one of these values) is never
 * answered from an older rendering.
 */
export interface Stamp {
  pageId: string;
  pageUpdatedAt: string;
  audienceId: string | null;
  audienceUpdatedAt: string | null;
  versionId: string | null;
  versionStatus: string | null;
  personId: string | null;
  personUpdatedAt: string | null;
  accountId: string | null;
  accountUpdatedAt: string | null;
  /**
   * The path named an audience erased with its person (src/audiences/erasure.ts): by its id, or
   * by a route key that it had and no live audience holds now. Such a path answers 410 Gone.
   */
  gone: boolean;
  /** The published version's time: a holdout won by control holds until the audience's version changes. */
  versionPublishedAt: string | null;
  /** The running experiment that covers this audience (src/experiments/), if any. */
  experimentId: string | null;
  experimentKind: string | null;
  experimentArms: string | null;
  experimentUpdatedAt: string | null;
  /**
   * When the latest holdout that covered this audience was concluded won by control, while no
   * experiment of the page has started since.
   */
  controlSince: string | null;
  /** When the tenant's site settings last changed (its brand on every page); null: never set. */
  settingsUpdatedAt: string | null;
  /**
   * The page's live home audience, read for an audience without a person (a segment): a segment's
   * holdout shows it to control (the page as everyone sees it), so its changes key the document too.
   */
  homeAudienceId: string | null;
  homeUpdatedAt: string | null;
  homeVersionId: string | null;
}

/** Literal values, so that each subquery matches its partial unique index's predicate on both databases. */
const ONE = sql.lit(1);

interface StampParams {
  tenantId: string;
  pageId: string;
  audienceId: string;
  routeKey: string;
  erasedKey: string;
}

/**
 * The query of a stamp, for one way of choosing the audience. Its shape depends only on `by`, so
 * each is compiled once (db/prepared.ts): building the query cost as much as running it.
 */
function stampQuery(db: Kysely<Database>, p: StampParams, by: AudienceChoice['by']) {
  const home = db
    .selectFrom('audiences as h')
    .select('h.id')
    .where('h.page_id', '=', p.pageId)
    .where('h.archived_at', 'is', null)
    .where('h.home_page', '=', ONE);
  const byKey = db
    .selectFrom('audiences as k')
    .select('k.id')
    .where('k.page_id', '=', p.pageId)
    .where('k.archived_at', 'is', null)
    .where('k.person_route_key', '=', p.routeKey);
  const erased = db
    .selectFrom('audiences as e')
    .select('e.id')
    .where('e.page_id', '=', p.pageId)
    .where('e.erased_at', 'is not', null)
    .where((eb) => (by === 'id' ? eb('e.id', '=', p.audienceId) : eb('e.erased_route_key', '=', p.erasedKey)));
  return (
    db
      .selectFrom('pages as p')
      .leftJoin('audiences as a', (join) =>
        join
          .onRef('a.page_id', '=', 'p.id')
          .on('a.archived_at', 'is', null)
          .on((eb) =>
            by === 'id'
              ? eb('a.id', '=', p.audienceId)
              : by === 'home'
                ? eb('a.id', '=', home)
                : eb('a.id', '=', eb.fn.coalesce(byKey, home)),
          ),
      )
      .leftJoin('audience_versions as v', 'v.id', 'a.published_version_id')
      // The running experiment covering the audience: a holdout without an audience covers every
      // audience with a person; a segment's holdout and a versions experiment their own audience
      // (at most one runs per audience: experiments/repository.ts).
      .leftJoin('experiments as x', (join) =>
        join
          .onRef('x.page_id', '=', 'p.id')
          .on(sql<boolean>`x.status = 'running'`)
          .on((eb) =>
            eb.or([
              eb.and([eb('x.kind', '=', sql.lit('holdout')), eb('x.audience_id', 'is', null), eb('a.person_id', 'is not', null)]),
              eb('x.audience_id', '=', eb.ref('a.id')),
            ]),
          ),
      )
      .leftJoin('audiences as hm', (join) =>
        join.onRef('hm.page_id', '=', 'p.id').on('hm.archived_at', 'is', null).on('hm.home_page', '=', ONE).on('a.person_id', 'is', null),
      )
      .leftJoin('persons as per', (join) => join.onRef('per.id', '=', 'a.person_id').onRef('per.tenant_id', '=', 'p.tenant_id'))
      .leftJoin('accounts as acc', (join) => join.onRef('acc.tenant_id', '=', 'p.tenant_id').onRef('acc.domain_lc', '=', 'per.domain_lc'))
      .leftJoin('site_settings as ss', 'ss.tenant_id', 'p.tenant_id')
      .select([
        'p.id as pageId',
        'p.updated_at as pageUpdatedAt',
        'a.id as audienceId',
        'a.updated_at as audienceUpdatedAt',
        'v.id as versionId',
        'v.status as versionStatus',
        'per.id as personId',
        'per.updated_at as personUpdatedAt',
        'acc.id as accountId',
        'acc.updated_at as accountUpdatedAt',
        'v.published_at as versionPublishedAt',
        'x.id as experimentId',
        'x.kind as experimentKind',
        'x.arms as experimentArms',
        'x.updated_at as experimentUpdatedAt',
        'ss.updated_at as settingsUpdatedAt',
        'hm.id as homeAudienceId',
        'hm.updated_at as homeUpdatedAt',
        'hm.published_version_id as homeVersionId',
        (eb) =>
          eb
            .selectFrom('experiments as c')
            .select('c.concluded_at')
            .whereRef('c.page_id', '=', 'p.id')
            .where(sql<boolean>`c.status = 'concluded' and c.kind = 'holdout' and c.winner = 'control'`)
            // The holdouts that covered this audience: over every person's audience, or over this segment.
            .where((w) =>
              w.or([w.and([w('c.audience_id', 'is', null), w('a.person_id', 'is not', null)]), w('c.audience_id', '=', w.ref('a.id'))]),
            )
            .where((w) =>
              w.not(
                w.exists(
                  w
                    .selectFrom('experiments as n')
                    .select('n.id')
                    .whereRef('n.page_id', '=', 'p.id')
                    .whereRef('n.started_at', '>', 'c.concluded_at'),
                ),
              ),
            )
            .orderBy('c.concluded_at', 'desc')
            .limit(1)
            .as('controlSince'),
        (eb) =>
          sql<boolean | number>`${
            by === 'home' ? sql.lit(false) : by === 'id' ? eb.exists(erased) : eb.and([eb.exists(erased), eb.not(eb.exists(byKey))])
          }`.as('gone'),
      ])
      .where('p.id', '=', p.pageId)
      .where('p.tenant_id', '=', p.tenantId)
      .where('p.deleted_at', 'is', null)
      .where('p.status', '=', 'published')
  );
}

const STAMPS = {
  id: prepared((db, p: StampParams) => stampQuery(db, p, 'id')),
  home: prepared((db, p: StampParams) => stampQuery(db, p, 'home')),
  routeKey: prepared((db, p: StampParams) => stampQuery(db, p, 'routeKey')),
};

/**
 * The served page's stamp, with the live audience the visitor path chose (a route key falls back
 * to the page's home page audience). Undefined when the page is not published or is deleted.
 */
export async function readStamp(
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  choice: AudienceChoice,
): Promise<Stamp | undefined> {
  const params: StampParams = {
    tenantId,
    pageId,
    audienceId: choice.by === 'id' ? choice.audienceId : '',
    routeKey: choice.by === 'routeKey' ? choice.key : '',
    erasedKey: choice.by === 'routeKey' ? erasedRouteKey(pageId, choice.key) : '',
  };
  const [row] = await STAMPS[choice.by](db, params);
  // SQLite answers 0 or 1, PostgreSQL a boolean.
  return row && { ...row, gone: row.gone === true || row.gone === 1 };
}
