// The click and scroll maps and web vitals of a report (issue 49) in `pam_collect` (collect.sql.ts):
// the rules of maps.ts and vitals.ts, as SQL text placed into the function where a report's session
// is known (`a` after the report, `s` before it when `stored`). test/visits/parity.test.ts holds them together.

const KEY = 'tenant_id, page_id, audience_id, version_id, day, viewport';
const CONFLICT = 'page_id, audience_id, version_id, day, viewport';
const KEY_VALUES = 'mp.tenant_id, mp.page_id, mp.audience_id, mp.version_id, mp.day, mp.viewport';

/** The helpers: a vital's bucket (vitals.ts `bucketOf`) and a depth bucket's or a vital bucket's visits moved by n. */
export const MAP_FUNCTIONS: readonly string[] = [
  `create or replace function pam_vital_bucket(p_metric text, p_value double precision)
returns integer
language plpgsql
immutable
as $function$
  declare u bigint;
  begin
    u := floor(p_value * case when p_metric = 'cls' then 1000 else 1 end + 0.5)::bigint;
    if u <= 0 then return 0; end if;
    if p_metric = 'cls' then
      if u <= 1000 then return ((u + 9) / 10) * 10; end if;
      return least(((u + 99) / 100) * 100, 100000);
    end if;
    if u <= 1000 then return ((u + 9) / 10) * 10; end if;
    if u <= 5000 then return ((u + 49) / 50) * 50; end if;
    if u <= 30000 then return ((u + 249) / 250) * 250; end if;
    return least(((u + 999) / 1000) * 1000, 3600000);
  end $function$`,
  `create or replace function pam_map_depth(p_tenant text, p_page text, p_audience text, p_version text, p_day text,
  p_viewport text, p_depth integer, p_n integer)
returns void
language sql
as $function$
    insert into heatmap_depths (${KEY}, depth, visits)
    values (p_tenant, p_page, p_audience, p_version, p_day, p_viewport, p_depth, p_n)
    on conflict (${CONFLICT}, depth) do update set visits = heatmap_depths.visits + excluded.visits
  $function$`,
  `create or replace function pam_map_vital(p_tenant text, p_page text, p_day text, p_metric text, p_bucket integer, p_n integer)
returns void
language sql
as $function$
    insert into web_vital_days (tenant_id, page_id, day, metric, bucket, visits)
    values (p_tenant, p_page, p_day, p_metric, p_bucket, p_n)
    on conflict (page_id, day, metric, bucket) do update set visits = web_vital_days.visits + excluded.visits
  $function$`,
];

/** The variables MAPS uses, for the function's `declare`. */
export const MAP_DECLARE = `    mp visit_maps; m_found boolean; m_depth integer; m_budget bigint; m_count bigint; m_value float8; m_before float8;
    m_bucket integer; m_metric text; m_changed boolean;
`;

const vital = (i: number) => ['lcp', 'inp', 'cls', 'fcp', 'ttfb'][i - 1];

/** maps.ts `recordMaps`, for the session `a` after the report (`s` before it when `stored`). */
export const MAPS = `    if p_viewport is not null then
      select * into mp from visit_maps where session_id = a.id;
      m_found := found;
      m_changed := not m_found;
      if not m_found then
        mp.session_id := a.id; mp.tenant_id := a.tenant_id; mp.page_id := a.page_id; mp.audience_id := a.audience_id;
        mp.version_id := coalesce(p_version, '');
        mp.day := to_char(a.session_started_at at time zone 'UTC', 'YYYY-MM-DD');
        mp.viewport := p_viewport; mp.reached := 0;
      end if;
      -- Below 5 the bucket is 0; a subnormal depth divided would be an underflow error.
      m_depth := case when a.max_scroll_depth_percentage < 5 then 0 else least(100, (floor(a.max_scroll_depth_percentage / 5) * 5)::integer) end;
      if not m_found then
        perform pam_map_depth(${KEY_VALUES}, m_depth, 1);
      elsif mp.depth <> m_depth then
        perform pam_map_depth(${KEY_VALUES}, mp.depth, -1);
        perform pam_map_depth(${KEY_VALUES}, m_depth, 1);
        m_changed := true;
      end if;
      mp.depth := m_depth;
      for i in 1..coalesce(array_length(p_reached, 1), 0) loop
        continue when (mp.reached >> p_reached[i]) & 1 = 1;
        mp.reached := mp.reached | (1::bigint << p_reached[i]);
        m_changed := true;
        insert into heatmap_sections (${KEY}, section, reached) values (${KEY_VALUES}, p_reached[i], 1)
        on conflict (${CONFLICT}, section) do update set reached = heatmap_sections.reached + 1;
      end loop;
      m_budget := a.total_clicks_count - case when stored then s.total_clicks_count else 0 end;
      for i in 1..coalesce(array_length(p_cell_sections, 1), 0) loop
        m_count := least(p_cell_clicks[i], m_budget);
        continue when m_count <= 0;
        m_budget := m_budget - m_count;
        insert into heatmap_cells (${KEY}, section, kind, x, y, clicks, rages)
        values (${KEY_VALUES}, p_cell_sections[i], p_cell_kinds[i], p_cell_x[i], p_cell_y[i], m_count, least(p_cell_rages[i], m_count))
        on conflict (${CONFLICT}, section, kind, x, y) do update
        set clicks = heatmap_cells.clicks + excluded.clicks, rages = heatmap_cells.rages + excluded.rages;
      end loop;
      for i in 1..5 loop
        m_value := p_vitals[i];
        continue when m_value is null;
        m_metric := (array['lcp', 'inp', 'cls', 'fcp', 'ttfb'])[i];
        m_before := case i ${[1, 2, 3, 4, 5].map((i) => `when ${i} then mp.${vital(i)}`).join(' ')} end;
        m_bucket := pam_vital_bucket(m_metric, m_value);
        if m_before is null then
          perform pam_map_vital(mp.tenant_id, mp.page_id, mp.day, m_metric, m_bucket, 1);
        elsif pam_vital_bucket(m_metric, m_before) <> m_bucket then
          perform pam_map_vital(mp.tenant_id, mp.page_id, mp.day, m_metric, pam_vital_bucket(m_metric, m_before), -1);
          perform pam_map_vital(mp.tenant_id, mp.page_id, mp.day, m_metric, m_bucket, 1);
        end if;
        ${[1, 2, 3, 4, 5].map((i) => `if i = ${i} then mp.${vital(i)} := m_value; end if;`).join(' ')}
        m_changed := true;
      end loop;
      if not m_found then
        insert into visit_maps select (mp).*;
      elsif m_changed then
        update visit_maps set reached = mp.reached, depth = mp.depth, lcp = mp.lcp, inp = mp.inp, cls = mp.cls, fcp = mp.fcp, ttfb = mp.ttfb
        where session_id = a.id;
      end if;
    end if;
`;

/** The deepest scroll as a scroll goal's occurrence (reducer.ts `occurrencesOf`), put before the report's events. */
export const SCROLL_OCCURRENCE = (
  rose: string,
) => `    if coalesce(target.path, p_claim_path) is not null and floor(a.max_scroll_depth_percentage) >= 1 and ${rose} then
      kinds := array_prepend('scroll'::text, kinds);
      names := array_prepend(coalesce(target.path, p_claim_path), names);
      totals := array_prepend(floor(a.max_scroll_depth_percentage)::bigint, totals);
      vals := array_prepend(0::float8, vals);
    end if;
`;
