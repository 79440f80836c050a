// PostgreSQL's one-statement path of the collector: `pam_collect` and its helpers, as SQL. The one
// source of the function: src/visits/collect-function.ts applies it at start when its hash differs
// from the one the database keeps (migrations 0028 to 0045 made the earlier versions and stay frozen).
// It applies the rules of reducer.ts, sql-store.ts, occurrences.ts, rollups.ts and
// announce.ts in one round trip; test/visits/parity.test.ts fails when the two drift.
// Its repeated parts (a session's rollup rows, the rollups) are written once in collect-rollups.sql.ts
// and placed into the text: PostgreSQL gets the same one function.
// Kept as a .ts file of SQL text so that `npm run build` (tsc) carries it into dist/ unchanged.
// A statement changing a function's parameters must drop the old signature first (`create or
// replace` cannot change them): add `drop function if exists pam_collect(<old types>)` before it.

import { MAP_DECLARE, MAP_FUNCTIONS, MAPS, SCROLL_OCCURRENCE } from './collect-maps.sql.js';
import { dayRow, hourRow, ROLLUPS_IF_CHANGED, summedInto } from './collect-rollups.sql.js';

/**
 * Counts the report's occurrences (`kinds`, `names`, `totals`, `vals`) into the visit's
 * `visit_events` as occurrences.ts does: a total only ever rises, a count is capped at 1,000 and a
 * visit holds at most 35 of them; the first that moves notes the tenant's change.
 */
const OCCURRENCES = `    n := coalesce(array_length(kinds, 1), 0);
    noted := false;
    if n > 0 then
      select count(*) into rows_now from visit_events where session_id = a.id;
      for i in 1..n loop
        select v.count, v.first_at into e from visit_events v
        where v.session_id = a.id and v.kind = kinds[i] and v.name = names[i];
        known := found;
        before_count := case when known then e.count else 0 end;
        -- A total no higher than the stored one says nothing new.
        continue when known and totals[i] <= before_count;
        cnt := least(1000, totals[i]);
        val := least(vals[i], cnt::float8 * 1000000000::float8);
        continue when known and cnt = before_count;
        continue when not known and rows_now >= 35;
        if not known then rows_now := rows_now + 1; end if;
        if not noted then
          perform pam_note_change('sessions:' || a.tenant_id);
          noted := true;
        end if;
        insert into visit_events (session_id, kind, name, tenant_id, page_id, audience_id, session_started_at, first_at, count, value)
        values (a.id, kinds[i], names[i], a.tenant_id, a.page_id, a.audience_id, a.session_started_at,
                case when known then e.first_at else p_at end, cnt, val)
        on conflict (session_id, kind, name) do update set count = excluded.count, value = excluded.value;
      end loop;
    end if;
`;

/** The statements, in order: each is run as it stands. */
export const COLLECT_SQL: readonly string[] = [
  `create or replace function pam_json_object(p_keys text[], p_vals json[])
returns text
language sql
immutable
as $function$
    select '{' || coalesce(string_agg(to_json(k)::text || ':' || coalesce(v::text, 'null'), ',' order by i), '') || '}'
    from unnest(p_keys, p_vals) with ordinality as t(k, v, i)
  $function$`,
  `create or replace function pam_instant(t timestamp with time zone)
returns text
language sql
stable
as $function$
    select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  $function$`,
  `create or replace function pam_note_change(p_scope text)
returns void
language plpgsql
as $function$
  begin
    update change_counters set value = value + 1 where scope = p_scope;
    if not found then
      insert into change_counters (scope, value) values (p_scope, 1)
      on conflict (scope) do update set value = change_counters.value + 1;
    end if;
  end $function$`,
  ...MAP_FUNCTIONS,
  // Issue 49 added the maps' parameters: the earlier signature goes first.
  `drop function if exists pam_collect(text, text, text, text, text, timestamp with time zone, timestamp with time zone, bigint,
  double precision, bigint, bigint, bigint, text, text, text, text, text, timestamp with time zone, text[], text[], bigint[],
  double precision[], text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text)`,
  `create or replace function pam_collect(
  p_tenant text,
  p_page text,
  p_link text,
  p_audience text,
  p_visit text,
  p_issued_at timestamp with time zone,
  p_at timestamp with time zone,
  p_visible_ms bigint,
  p_scroll double precision,
  p_clicks bigint,
  p_questions bigint,
  p_conversions bigint,
  p_utm_source text,
  p_utm_medium text,
  p_utm_campaign text,
  p_utm_term text,
  p_utm_content text,
  p_end_due_at timestamp with time zone,
  p_kinds text[],
  p_names text[],
  p_totals bigint[],
  p_values double precision[],
  p_now text,
  p_session_id text,
  p_created_event text,
  p_started_event text,
  p_url_prefix text,
  p_claim_path text,
  p_experiment_id text,
  p_arm text,
  p_unit text,
  p_referrer_host text,
  p_channel text,
  p_device_type text,
  p_browser text,
  p_os text,
  p_country text,
  p_visitor_hash text,
  p_channel_group text,
  p_viewport text,
  p_version text,
  p_reached integer[],
  p_cell_sections integer[],
  p_cell_kinds text[],
  p_cell_x integer[],
  p_cell_y integer[],
  p_cell_clicks bigint[],
  p_cell_rages bigint[],
  p_vitals double precision[]
)
returns text
language plpgsql
as $function$
  declare
    target record;
    s audience_sessions;
    a audience_sessions;
    stored boolean;
    previous_at timestamptz;
    seconds float8;
    wall float8;
    has_form boolean;
    visitor text;
    day_pages text[];
    kinds text[] := p_kinds;
    names text[] := p_names;
    totals bigint[] := p_totals;
    vals float8[] := p_values;
    account text;
    made_at timestamptz;
    hb analytics_hours_utm; ha analytics_hours_utm; dyb analytics_days; dya analytics_days;
    hours analytics_hours_utm[]; days analytics_days[]; r analytics_hours_utm; q analytics_days; changed boolean;
    sh analytics_site_hours; sd analytics_site_days;
    n integer; rows_now integer; e record; known boolean; before_count bigint; cnt bigint; val float8; noted boolean;
${MAP_DECLARE}  begin
    perform pg_advisory_xact_lock(hashtext('visit:' || p_visit));
    select p.title, l.path, au.person_id into target
    from pages p
    left join page_links l on l.id = p_link and l.tenant_id = p_tenant
    left join audiences au on au.id = p_audience and au.tenant_id = p_tenant
    where p.id = p_page and p.tenant_id = p_tenant and p.deleted_at is null;
    if not found then return 'gone'; end if;
    select * into s from audience_sessions where visit_id = p_visit and tenant_id = p_tenant;
    stored := found;
    if stored and target.person_id is not null and s.start_announced = 0 then return 'slow'; end if;
    if not stored and p_visitor_hash is null then return 'classify'; end if;

    -- collect.ts raise(): the session after this report.
    previous_at := case when stored then s.session_ended_at else p_issued_at end;
    seconds := greatest(1, extract(epoch from p_at - previous_at)::float8);
    wall := greatest(0, extract(epoch from p_at - p_issued_at)::float8);
    has_form := stored and s.has_form_submit = 1;
    if stored then
      a := s;
    else
      made_at := p_now::timestamptz;
      visitor := case when target.person_id is not null then 'person:' || target.person_id else p_visitor_hash end;
      -- classify.ts: two first visits of one visitor at once must not both count as the day's first.
      perform pg_advisory_xact_lock(hashtext('visitor:' || p_tenant || ':' || visitor));
      select coalesce(array_agg(x.page_id), '{}') into day_pages from audience_sessions x
      where x.tenant_id = p_tenant and x.visitor_hash = visitor
        and x.session_started_at >= date_trunc('day', p_at at time zone 'UTC') at time zone 'UTC';
      a.id := p_session_id;
      a.tenant_id := p_tenant;
      a.page_id := p_page;
      a.audience_id := p_audience;
      a.analytics_session_id := p_visit;
      a.page_title := target.title;
      a.page_url := p_url_prefix || coalesce(p_claim_path, target.path, '/');
      a.session_started_at := p_at;
      a.created_at := made_at;
      a.visit_id := p_visit;
      a.experiment_id := p_experiment_id;
      a.experiment_arm := p_arm;
      a.experiment_unit := p_unit;
      a.referrer_host := p_referrer_host;
      a.channel := p_channel;
      a.channel_group := coalesce(p_channel_group, 'Direct');
      a.device_type := p_device_type;
      a.browser := p_browser;
      a.os := p_os;
      a.country := p_country;
      a.visitor_hash := visitor;
      a.first_of_day_page := case when p_page = any(day_pages) then 0 else 1 end;
      a.first_of_day_site := case when cardinality(day_pages) > 0 then 0 else 1 end;
      -- Announced below, in this statement.
      a.start_announced := 1;
      a.end_announced := 0;
      -- Columns added after the function was first written: stored as the transaction stores them.
      a.end_due_follows := 0;
      a.gpc := 0;
      a.time_spent_seconds := 0;
      a.max_scroll_depth_percentage := 0;
      a.total_clicks_count := 0;
      a.questions_asked_count := 0;
      a.has_form_submit := 0;
      a.has_conversion := 0;
      a.form_submission_id := '';
      a.form_submission_identifier := '';
      a.form_submission_email := '';
      a.form_submission_phone := '';
      a.utm_source := ''; a.utm_medium := ''; a.utm_campaign := ''; a.utm_term := ''; a.utm_content := '';
    end if;
    a.session_ended_at := greatest(p_at, previous_at);
    a.time_spent_seconds := greatest(a.time_spent_seconds,
      floor(least(p_visible_ms::float8 / 1000, wall) * 1000 + 0.5) / 1000);
    a.total_clicks_count := a.total_clicks_count
      + least(greatest(0, p_clicks - a.total_clicks_count), floor(20 * seconds))::bigint;
    a.questions_asked_count := a.questions_asked_count
      + least(greatest(0, p_questions - a.questions_asked_count), floor(1 * seconds))::bigint;
    a.max_scroll_depth_percentage := greatest(a.max_scroll_depth_percentage, p_scroll);
    a.is_bounce := case when a.total_clicks_count = 0 and not has_form and a.time_spent_seconds < 10 then 1 else 0 end;
    a.has_form_submit := case when has_form then 1 else 0 end;
    a.has_conversion := case when (stored and s.has_conversion = 1) or has_form or p_conversions > 0 then 1 else 0 end;
    a.utm_source := coalesce(nullif(a.utm_source, ''), p_utm_source, '');
    a.utm_medium := coalesce(nullif(a.utm_medium, ''), p_utm_medium, '');
    a.utm_campaign := coalesce(nullif(a.utm_campaign, ''), p_utm_campaign, '');
    a.utm_term := coalesce(nullif(a.utm_term, ''), p_utm_term, '');
    a.utm_content := coalesce(nullif(a.utm_content, ''), p_utm_content, '');

    if stored then
      update audience_sessions set
        session_ended_at = a.session_ended_at,
        time_spent_seconds = a.time_spent_seconds,
        max_scroll_depth_percentage = a.max_scroll_depth_percentage,
        total_clicks_count = a.total_clicks_count,
        questions_asked_count = a.questions_asked_count,
        is_bounce = a.is_bounce,
        has_form_submit = a.has_form_submit,
        has_conversion = a.has_conversion,
        utm_source = a.utm_source,
        utm_medium = a.utm_medium,
        utm_campaign = a.utm_campaign,
        utm_term = a.utm_term,
        utm_content = a.utm_content,
        -- Never again once announced.
        end_due_at = case when end_announced = 0 then p_end_due_at else end_due_at end
      where id = s.id;
      
${hourRow('ha', 'a', '1')}${dayRow('dya', 'a', '1')}    
${hourRow('hb', 's', '-1')}${dayRow('dyb', 's', '-1')}    if (hb.page_id, hb.hour, hb.audience_id, hb.utm_source, hb.utm_medium, hb.utm_campaign, hb.channel, hb.channel_group, hb.referrer_host, hb.device_type, hb.browser, hb.os, hb.country) is not distinct from (ha.page_id, ha.hour, ha.audience_id, ha.utm_source, ha.utm_medium, ha.utm_campaign, ha.channel, ha.channel_group, ha.referrer_host, ha.device_type, ha.browser, ha.os, ha.country) then
      ${summedInto('ha', 'hb')}
      hours := array[ha];
    elsif (hb.page_id, hb.hour, hb.audience_id, hb.utm_source collate "C", hb.utm_medium collate "C", hb.utm_campaign collate "C", hb.channel collate "C", hb.channel_group collate "C", hb.referrer_host collate "C", hb.device_type collate "C", hb.browser collate "C", hb.os collate "C", hb.country collate "C") < (ha.page_id, ha.hour, ha.audience_id, ha.utm_source, ha.utm_medium, ha.utm_campaign, ha.channel, ha.channel_group, ha.referrer_host, ha.device_type, ha.browser, ha.os, ha.country) then hours := array[hb, ha];
    else hours := array[ha, hb];
    end if;
    if (dyb.tenant_id, dyb.day, dyb.page_id) = (dya.tenant_id, dya.day, dya.page_id) then
      ${summedInto('dya', 'dyb')}
      days := array[dya];
    elsif (dyb.day, dyb.page_id) < (dya.day, dya.page_id) then days := array[dyb, dya];
    else days := array[dya, dyb];
    end if;
${ROLLUPS_IF_CHANGED}      
${SCROLL_OCCURRENCE('floor(a.max_scroll_depth_percentage) > floor(s.max_scroll_depth_percentage)')}
${OCCURRENCES}${MAPS}      return 'accepted';
    end if;

    a.end_due_at := p_end_due_at;
    insert into audience_sessions select (a).* on conflict (visit_id) where visit_id is not null do nothing;
    -- Another tenant's visit of the same id: the caller's transaction answers as it always did.
    if not found then return 'slow'; end if;
    
${hourRow('ha', 'a', '1')}${dayRow('dya', 'a', '1')}    
    hours := array[ha];
    days := array[dya];
${ROLLUPS_IF_CHANGED}    insert into events (id, tenant_id, type, payload, created_at, fanned_out, fan_lease_until)
    values (p_created_event, p_tenant, 'audience_session.created', pam_json_object(
      array['type', 'timestamp', 'data'],
      array[to_json('audience_session.created'::text), to_json(p_now), pam_json_object(
        array['audienceSessionId', 'analyticsSessionId', 'audienceId', 'pageId', 'pageTitle', 'pageUrl', 'sessionStartedAt',
          'sessionEndedAt', 'timeSpentSeconds', 'maxScrollDepthPercentage', 'totalClicksCount', 'questionsAskedCount', 'isBounce',
          'hasFormSubmit', 'hasConversion', 'formSubmissionId', 'formSubmissionIdentifier', 'formSubmissionEmail',
          'formSubmissionPhone', 'utmCampaign', 'utmContent', 'utmMedium', 'utmSource', 'utmTerm', 'experimentId', 'arm',
          'referrerHost', 'channel', 'channelGroup', 'deviceType', 'browser', 'os', 'country'],
        array[to_json(a.id), to_json(a.analytics_session_id), to_json(a.audience_id), to_json(a.page_id), to_json(a.page_title),
          to_json(a.page_url), to_json(pam_instant(a.session_started_at)), to_json(pam_instant(a.session_ended_at)),
          to_json(a.time_spent_seconds), to_json(a.max_scroll_depth_percentage), to_json(a.total_clicks_count),
          to_json(a.questions_asked_count), to_json(a.is_bounce = 1), to_json(a.has_form_submit = 1), to_json(a.has_conversion = 1),
          to_json(a.form_submission_id), to_json(a.form_submission_identifier), to_json(a.form_submission_email),
          to_json(a.form_submission_phone), to_json(a.utm_campaign), to_json(a.utm_content), to_json(a.utm_medium),
          to_json(a.utm_source), to_json(a.utm_term), to_json(a.experiment_id), to_json(a.experiment_arm),
          to_json(a.referrer_host), to_json(a.channel), to_json(a.channel_group), to_json(a.device_type), to_json(a.browser), to_json(a.os),
          to_json(a.country)])::json]), made_at, 0, null);
    -- The path goal names the link's path, then the deepest scroll, the report's events and clicked purposes.
${SCROLL_OCCURRENCE('true')}    if coalesce(target.path, p_claim_path) is not null then
      kinds := array_prepend('path'::text, kinds);
      names := array_prepend(coalesce(target.path, p_claim_path), names);
      totals := array_prepend(1::bigint, totals);
      vals := array_prepend(0::float8, vals);
    end if;
    
${OCCURRENCES}${MAPS}    if target.person_id is not null then
      select acc.id into account from persons per
      join accounts acc on acc.domain_lc = per.domain_lc and acc.tenant_id = per.tenant_id
      where per.id = target.person_id and per.tenant_id = p_tenant
      order by acc.id limit 1;
      insert into events (id, tenant_id, type, payload, created_at, fanned_out, fan_lease_until)
      values (p_started_event, p_tenant, 'visit.started', pam_json_object(
        array['type', 'timestamp', 'data'],
        array[to_json('visit.started'::text), to_json(p_now), pam_json_object(
          array['audienceSessionId', 'analyticsSessionId', 'personId', 'accountId', 'pageId', 'audienceId', 'path', 'channel',
            'sessionStartedAt'],
          array[to_json(a.id), to_json(a.analytics_session_id), to_json(target.person_id), to_json(account), to_json(a.page_id),
            to_json(a.audience_id), to_json(coalesce(p_claim_path, target.path, '/')), to_json(a.channel),
            to_json(pam_instant(a.session_started_at))])::json]), made_at, 0, null);
    end if;
    return 'accepted';
  end $function$`,
];
