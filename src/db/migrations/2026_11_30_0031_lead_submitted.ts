import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Issue 36: a lead belongs to who filled the form, and keeps what they typed.
 * - `submitted_name`, `submitted_email`, `submitted_phone`: the form's fields as posted ('' for a
 *   phone left empty), since the lead's person is no longer written to by a visitor.
 * - `via_person_id`: the person of the link the form was on, when the lead is someone else's; null otherwise.
 *
 * Existing rows were all filed under the link's person when there was one (the rule before), so
 * `via_person_id` stays null. What was typed is taken from the lead's own `form-submitted` log
 * entry (which held the posted name, email and phone), else from its session when that session's
 * latest submission is this lead (email and phone), else from the person as it is now (what the
 * list showed until now).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .alterTable('leads')
    .addColumn('submitted_name', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('leads')
    .addColumn('submitted_email', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('leads')
    .addColumn('submitted_phone', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('leads').addColumn('via_person_id', id).execute();
  await backfill(db as Kysely<Tables>);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['via_person_id', 'submitted_phone', 'submitted_email', 'submitted_name']) {
    await db.schema.alterTable('leads').dropColumn(column).execute();
  }
}

/** The tables as this migration knows them (frozen: never the live types). */
interface Tables {
  leads: { id: string; tenant_id: string; person_id: string; submitted_name: string; submitted_email: string; submitted_phone: string };
  person_logs: { tenant_id: string; owner_id: string; type: string; payload: string };
  audience_sessions: { tenant_id: string; form_submission_id: string; form_submission_email: string; form_submission_phone: string };
  persons: { id: string; tenant_id: string; name: string; email: string | null; phone_number: string | null };
}

interface Typed {
  name?: string;
  email?: string;
  phone?: string;
}

const BATCH = 500;

/** Reads a form-submitted log's payload: a client may have replaced it with anything. */
function typedIn(payload: string): (Typed & { formSubmissionId: string }) | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.formSubmissionId !== 'string') return undefined;
  const text = (key: string) => (typeof record[key] === 'string' ? { [key]: record[key] as string } : {});
  return { formSubmissionId: record.formSubmissionId, ...text('name'), ...text('email'), ...text('phone') };
}

async function backfill(db: Kysely<Tables>): Promise<void> {
  let last = '';
  for (;;) {
    const leads = await db
      .selectFrom('leads')
      .select(['id', 'tenant_id', 'person_id'])
      .where('id', '>', last)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (leads.length === 0) return;
    const ids = leads.map((l) => l.id);
    const personIds = [...new Set(leads.map((l) => l.person_id))];
    const logs = await db
      .selectFrom('person_logs')
      .select(['tenant_id', 'payload'])
      .where('owner_id', 'in', personIds)
      .where('type', '=', 'form-submitted')
      .execute();
    const fromLogs = new Map<string, Typed>();
    for (const log of logs) {
      const typed = typedIn(log.payload);
      if (typed) fromLogs.set(`${log.tenant_id}:${typed.formSubmissionId}`, typed);
    }
    const sessions = await db
      .selectFrom('audience_sessions')
      .select(['tenant_id', 'form_submission_id', 'form_submission_email', 'form_submission_phone'])
      .where('form_submission_id', 'in', ids)
      .execute();
    const fromSessions = new Map(sessions.map((s) => [`${s.tenant_id}:${s.form_submission_id}`, s]));
    const persons = await db
      .selectFrom('persons')
      .select(['id', 'tenant_id', 'name', 'email', 'phone_number'])
      .where('id', 'in', personIds)
      .execute();
    const fromPersons = new Map(persons.map((p) => [`${p.tenant_id}:${p.id}`, p]));
    for (const lead of leads) {
      const log = fromLogs.get(`${lead.tenant_id}:${lead.id}`) ?? {};
      const session = fromSessions.get(`${lead.tenant_id}:${lead.id}`);
      const person = fromPersons.get(`${lead.tenant_id}:${lead.person_id}`);
      await db
        .updateTable('leads')
        .set({
          submitted_name: log.name ?? person?.name ?? '',
          submitted_email: log.email ?? session?.form_submission_email ?? person?.email ?? '',
          submitted_phone: log.phone ?? session?.form_submission_phone ?? person?.phone_number ?? '',
        })
        .where('id', '=', lead.id)
        .execute();
    }
    last = ids[ids.length - 1] as string;
  }
}
