// Parts of `pam_collect` (collect.sql.ts) written once and placed where the function needs them:
// a session's hour and day rows (the session after a report counted once, the one before it taken
// away), and the rollup of those rows into the page, site and dimension tables, which the function
// runs after a stored session changed and after a new one was made. They are text, placed into the
// function's text: PostgreSQL keeps one function, with no helper depending on the tables' types.
// The sums and dimensions come from the lists the TypeScript path reads (sums.ts,
// db/session-columns.ts), so a sum added there is added here too.

import { SESSION_COLUMNS } from '../db/session-columns.js';
import { SOURCED_SUMS, SUM_COLUMNS } from './sums.js';

const DIMENSIONS = SESSION_COLUMNS.dimensions;

/** Whether every sum of the row variable `v` is zero. */
const allZero = (v: string) => `(${SUM_COLUMNS.map((c) => `${v}.${c} = 0`).join(' and ')})`;

/** The statements that set `v`'s sums from the session `x`, counted `n` times (1 or -1). */
const countedSums = (v: string, x: string, n: string) =>
  `${v}.visits := ${n};\n${SOURCED_SUMS.map(([sum, source]) => `${v}.${sum} := ${n} * ${x}.${source};\n`).join('')}`;

/** The statements that set `v` (a row of `analytics_hours_utm`) from the session `x`, counted `n` times (1 or -1). */
export const hourRow = (v: string, x: string, n: string) =>
  `    ${v}.hour := date_trunc('hour', ${x}.session_started_at at time zone 'UTC') at time zone 'UTC';
${['page_id', 'audience_id', ...DIMENSIONS, 'tenant_id'].map((c) => `${v}.${c} := ${x}.${c};\n`).join('')}${countedSums(v, x, n)}`;

/** The statements that set `v` (a row of `analytics_days`) from the session `x`, counted `n` times. */
export const dayRow = (v: string, x: string, n: string) =>
  `    ${v}.day := date_trunc('day', ${x}.session_started_at at time zone 'UTC') at time zone 'UTC';
${v}.page_id := ${x}.page_id;
${v}.tenant_id := ${x}.tenant_id;
${countedSums(v, x, n)}`;

/** `table`'s stored sums plus those of `from` (a row variable, or `excluded`). */
const added = (table: string, from: string) => SUM_COLUMNS.map((c) => `${c} = ${table}.${c} + ${from}.${c}`).join(', ');
const matching = (table: string, v: string, key: readonly string[]) => key.map((c) => `${table}.${c} = ${v}.${c}`).join(' and ');

/**
 * Adds the row `v` to its stored row of `table`, or stores it; a row left with no visit goes.
 * `key` is the table's conflict target; `updateKey` (the key with the tenant, where the key lacks
 * it) finds the row to update.
 */
const addRow = (table: string, v: string, key: readonly string[], updateKey: readonly string[] = key) => `
    if not ${allZero(v)} then
      update ${table} set ${added(table, v)}
      where ${matching(table, v, updateKey)};
      if not found then
        insert into ${table} select (${v}).*
        on conflict (${key.join(', ')}) do update set ${added(table, 'excluded')};
      end if;
      -- A row left with no visit holds nothing any more (at most the rounding residue of its sums).
      if ${v}.visits < 0 then delete from ${table} where ${matching(table, v, key)} and ${table}.visits <= 0; end if;
    end if;
`;

/** The statements that add `from`'s sums into `to` (two rows of one key, the session before and after a report). */
export const summedInto = (to: string, from: string) => SUM_COLUMNS.map((c) => `${to}.${c} := ${from}.${c} + ${to}.${c};`).join('\n');

const HOUR_KEY = ['page_id', 'hour', 'audience_id', ...DIMENSIONS];
const copiedSums = (to: string, from: string) => SUM_COLUMNS.map((c) => `${to}.${c} := ${from}.${c};`).join(' ');

/** Adds the rows `hours` and `days` to every rollup table they feed. */
export const ROLLUPS = `      foreach r in array hours loop
${addRow('analytics_hours_utm', 'r', HOUR_KEY, ['tenant_id', ...HOUR_KEY])}
    sh.tenant_id := r.tenant_id; sh.hour := r.hour; ${copiedSums('sh', 'r')}
${addRow('analytics_site_hours', 'sh', ['tenant_id', 'hour'])}
    sd.tenant_id := r.tenant_id; sd.day := date_trunc('day', r.hour at time zone 'UTC') at time zone 'UTC'; ${copiedSums('sd', 'r')}
${DIMENSIONS.map((d) => `    sd.dimension := '${d}'; sd.value := r.${d};${addRow('analytics_site_days', 'sd', ['tenant_id', 'dimension', 'day', 'value'])}`).join('')}      end loop;
      foreach q in array days loop
${addRow('analytics_days', 'q', ['tenant_id', 'day', 'page_id'])}      end loop;
`;

/** After the rows `hours` and `days` are set: when any of them moves a sum, the tenant's change is noted and the rollups run. */
export const ROLLUPS_IF_CHANGED = `    changed := false;
    foreach r in array hours loop
      if not ${allZero('r')} then changed := true; end if;
    end loop;
    foreach q in array days loop
      if not ${allZero('q')} then changed := true; end if;
    end loop;
    if changed then
      perform pam_note_change('sessions:' || a.tenant_id);
${ROLLUPS}    end if;
`;
