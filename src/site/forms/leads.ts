import { Type, type Static } from '@sinclair/typebox';
import type { Kysely, Transaction } from 'kysely';
import { findAudience } from '../../audiences/index.js';
import type { AudienceSessionsTable, Database } from '../../db/types.js';
import { validatorCompiler } from '../../http/validation.js';
import { newId } from '../../ids.js';
import { normalisePhone, PHONE_INPUT_MAX } from '../../phone.js';
import { type StoredAction, findPage } from '../../pages/index.js';
import { linkPathOf } from '../../page-links/index.js';
import {
  experimentOf,
  findVisit,
  lockVisit,
  NOT_COLLECTED,
  type Occurrence,
  occurrenceVisit,
  recordOccurrences,
  recordVisit,
  type VisitFields,
} from '../../visits/index.js';
import { type LeadEnrichment, recordTakenLead } from '../../leads/index.js';
import { now } from '../../time.js';
import { HONEYPOT, type LeadErrors, type LeadFields } from '../../render/index.js';
import type { VisitClaims } from '../../visits/index.js';

/** The lead form's rules: the same email format as a person's; the phone as a person's, typed (src/phone.ts). */
const LeadForm = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000]*$' }),
  email: Type.String({ format: 'email', maxLength: 254 }),
  phone: Type.Union([Type.Literal(''), Type.String({ format: 'phone', maxLength: PHONE_INPUT_MAX })]),
});
type LeadForm = Static<typeof LeadForm>;

const checkLead = validatorCompiler({ schema: LeadForm, httpPart: 'body', method: 'POST', url: '/_pam/forms' }) as ((
  data: unknown,
) => boolean) & { errors?: { instancePath: string }[] | null };

const MESSAGES: Record<keyof LeadFields, string> = {
  name: 'Enter your name (at most 255 characters).',
  email: 'Enter a valid email address, like name@example.com.',
  phone: 'Enter a phone number, like +44 20 7183 8750, or leave it empty.',
};

/** What a visitor is told about a phone number that is no possible number (in the tenant's country for a national one). */
const phoneMessage = (country: string | null) =>
  country === null
    ? 'Enter the phone number with its country code, like +44 20 7183 8750, or leave it empty.'
    : `Enter a valid phone number for ${country}, or one with its country code, like +44 20 7183 8750, or leave it empty.`;

/** What a lead form posted (urlencoded, parsed as text by the site instance). */
export interface LeadPost {
  token: string;
  actionId: string;
  path: string;
  fields: LeadFields;
  /** The field people never see (document.ts): anything in it was typed by a bot. */
  honeypot: string;
}

export function parseLeadPost(body: unknown): LeadPost | undefined {
  const form = new URLSearchParams(typeof body === 'string' ? body : '');
  // No field may hold a NUL (PostgreSQL can neither store nor compare one): the whole post is refused.
  for (const [name, value] of form) if (name.includes('\u0000') || value.includes('\u0000')) return undefined;
  const value = (name: string) => form.get(name) ?? '';
  return {
    token: value('token'),
    actionId: value('action'),
    path: value('path'),
    // Surrounding spaces are a typing accident, never part of a name, address or number.
    fields: { name: value('name').trim(), email: value('email').trim(), phone: value('phone').trim() },
    honeypot: value(HONEYPOT),
  };
}

/**
 * The fields as stored (the phone in E.164, national numbers read in the tenant's `defaultCountry`),
 * or each invalid field with what to do about it.
 */
export function checkLeadFields(fields: LeadFields, country: string | null): { fields: LeadFields } | { errors: LeadErrors } {
  const errors: LeadErrors = {};
  if (!checkLead(fields)) {
    for (const error of checkLead.errors ?? []) {
      const field = error.instancePath.split('/')[1] as keyof LeadFields | undefined;
      if (field && field in MESSAGES) errors[field] = MESSAGES[field];
    }
  }
  let phone = fields.phone;
  if (phone !== '' && errors.phone === undefined) {
    const normalised = normalisePhone(phone, country);
    if (normalised.ok) phone = normalised.e164;
    else errors.phone = phoneMessage(country);
  }
  return Object.keys(errors).length > 0 ? { errors } : { fields: { ...fields, phone } };
}

/** The page, audience and form action a token and an action id name, when all still exist. */
export async function formTarget(db: Kysely<Database>, claims: VisitClaims, actionId: string) {
  const page = await findPage(db, claims.tenantId, claims.pageId);
  if (!page || claims.audienceId === '') return undefined;
  const action = (JSON.parse(page.actions) as StoredAction[]).find((a) => a.actionId === actionId && a.actionType === 'form');
  if (!action) return undefined;
  // The page itself (no home audience) takes leads under its own id, as its visits are recorded.
  if (claims.audienceId === page.id) return { page, audience: undefined, action };
  const audience = await findAudience(db, claims.tenantId, page.id, claims.audienceId);
  // An audience erased with its person takes no more leads: its page is gone.
  return audience && audience.erased_at === null ? { page, audience, action } : undefined;
}

type Target = NonNullable<Awaited<ReturnType<typeof formTarget>>>;
interface Submission {
  id: string;
  identifier: string;
  email: string;
  phone: string;
}

/** What a fresh visit's session holds before any report: the collector's fields, at rest. */
const FRESH = {
  time_spent_seconds: 0,
  max_scroll_depth_percentage: 0,
  total_clicks_count: 0,
  questions_asked_count: 0,
  utm_campaign: '',
  utm_content: '',
  utm_medium: '',
  utm_source: '',
  utm_term: '',
} satisfies Partial<VisitFields>;
type Measured = { [K in keyof typeof FRESH]: VisitFields[K] };

/** What the visit's session holds after a submission: the collector's values kept, the form's set. */
function submittedFields(existing: AudienceSessionsTable | undefined, at: string, submission: Submission): VisitFields {
  const base: Measured = { ...FRESH };
  if (existing) for (const k of Object.keys(FRESH) as (keyof Measured)[]) (base[k] as Measured[typeof k]) = existing[k];
  return {
    ...base,
    session_ended_at: existing && existing.session_ended_at > at ? existing.session_ended_at : at,
    is_bounce: 0,
    has_form_submit: 1,
    has_conversion: 1,
    form_submission_id: submission.id,
    form_submission_identifier: submission.identifier,
    form_submission_email: submission.email,
    form_submission_phone: submission.phone,
  };
}

/** How long an accepted lead holds off the next one of the same view token (issue 25). */
export const REPEAT_WINDOW_MS = 10_000;

/**
 * Takes the visit's turn to submit: true when its token had no lead accepted in the last
 * `REPEAT_WINDOW_MS`. One conditional upsert, so that of two instances racing, one wins.
 */
async function claimSubmission(trx: Transaction<Database>, visitId: string, at: string): Promise<boolean> {
  const cutoff = new Date(Date.parse(at) - REPEAT_WINDOW_MS).toISOString();
  const claimed = await trx
    .insertInto('form_claims')
    .values({ visit_id: visitId, accepted_at: at })
    .onConflict((oc) => oc.column('visit_id').doUpdateSet({ accepted_at: at }).where('form_claims.accepted_at', '<=', cutoff))
    .returning('visit_id')
    .executeTakeFirst();
  return claimed !== undefined;
}

/** Housekeeping (jobs/maintenance.ts): a claim matters for `REPEAT_WINDOW_MS`; a minute leaves room for clocks that differ. */
export async function pruneFormClaims(db: Kysely<Database>): Promise<void> {
  await db
    .deleteFrom('form_claims')
    .where('accepted_at', '<', new Date(Date.now() - 60_000).toISOString())
    .execute();
}

/** The path of the link a visit came through (a deleted link's too: the visit keeps it), as the collector records it. */
const pathOfLink = linkPathOf;

/**
 * A valid lead: on the visit's session (created if the visit has not reported yet), as a lead of
 * the person who filled it (lead-person.ts) with what they typed and the link's person when it
 * differs, in that person's log, and as `form.submitted` with `personId` and `viaPersonId`, then
 * what its email domain named (enrich.ts: an account and `form.enriched`, or why not): one transaction.
 * Undefined, with nothing written, when the same token had a lead accepted within the window.
 */
export async function recordLead(
  db: Kysely<Database>,
  claims: VisitClaims,
  target: Target,
  fields: LeadForm,
  served: { pageUrl: string; pageTitle: string },
  enrichment: LeadEnrichment,
  /** Posted with `Sec-GPC: 1`: the lead is kept, and marked so that it never leaves the service. */
  gpc = false,
) {
  const { page, audience, action } = target;
  const audienceId = audience?.id ?? page.id;
  const linkPerson = audience?.person_id ?? null;
  const recorded = await db.transaction().execute(async (trx) => {
    const at = now();
    const submission: Submission = {
      id: newId('submission'),
      identifier: audience?.action_form_id_override || action.actionId,
      email: fields.email,
      phone: fields.phone,
    };
    // The visit's reports and its form take turns (collect.ts takes the same lock).
    await lockVisit(trx, claims.visitId);
    if (!(await claimSubmission(trx, claims.visitId, at))) return undefined;
    const existing = await findVisit(trx, claims.tenantId, claims.visitId);
    const visit = {
      tenantId: claims.tenantId,
      pageId: page.id,
      audienceId,
      visitId: claims.visitId,
      pageUrl: served.pageUrl,
      pageTitle: served.pageTitle,
      startedAt: at,
      // A form before the visit's first report: that report still announces a person's visit (visit.started).
      ...(linkPerson === null ? {} : { classes: { ...NOT_COLLECTED, start_announced: 0 } }),
      ...experimentOf(claims),
      gpc,
    };
    const session = await recordVisit(trx, visit, existing, submittedFields(existing, at, submission));
    // What goals count: the form, and the path when the form made the visit's session.
    const occurrences: Occurrence[] = [{ kind: 'form', name: '', value: 0, add: 1 }];
    const linkPath = existing ? undefined : await pathOfLink(trx, claims.tenantId, claims.linkId);
    if (linkPath !== undefined) occurrences.push({ kind: 'path', name: linkPath, value: 0, total: 1 });
    await recordOccurrences(trx, occurrenceVisit(claims.tenantId, session), occurrences, at);
    await recordTakenLead(trx, {
      tenantId: claims.tenantId,
      formSubmissionId: submission.id,
      formSubmissionIdentifier: submission.identifier,
      pageId: page.id,
      audienceId,
      actionId: action.actionId,
      linkPersonId: linkPerson,
      session,
      typed: fields,
      at,
      gpc,
      enrichment,
    });
    return session;
  });
  return recorded;
}
