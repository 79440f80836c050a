import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';

/**
 * SQLite only: an event's position is given by its insert (events/outbox.ts), not by a trigger
 * that moved `event_sequence` and then rewrote the new row. That trigger cost each event two more
 * writes (the sequence's row, and the row with its (position, id) index entry again), about a
 * third of the insert: issue 47's create-person ran 1.15 × its cost before 0069.
 *
 * The insert takes one past the larger of the highest position kept and `event_sequence.last`,
 * which is now a floor: raised as events are deleted (pruning), so positions never start again
 * below a consumer's cursor once every event has gone. SQLite's writers take turns, so no two
 * inserts see the same highest position. An insert that gives no position (0) still gets one, from
 * the same rule, by the trigger kept for it. PostgreSQL's position is its column's default.
 */
const NEXT = `(select max(s.last, coalesce((select max(e.position) from events e), 0)) + 1 from event_sequence s where s.name = 'events')`;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`drop trigger events_position`.execute(db);
  await sql
    .raw(`create trigger events_position after insert on events when new.position = 0 begin
      update events set position = ${NEXT} where rowid = new.rowid;
    end`)
    .execute(db);
  await sql`create trigger events_floor after delete on events begin
      update event_sequence set last = max(last, old.position) where name = 'events';
    end`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`drop trigger events_floor`.execute(db);
  await sql`drop trigger events_position`.execute(db);
  // 0069's sequence holds the last position given.
  await sql`update event_sequence set last = max(last, coalesce((select max(position) from events), 0)) where name = 'events'`.execute(db);
  await sql`create trigger events_position after insert on events begin
      update event_sequence set last = last + 1 where name = 'events';
      update events set position = (select last from event_sequence where name = 'events') where rowid = new.rowid;
    end`.execute(db);
}
