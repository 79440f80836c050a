import { useState } from 'preact/hooks';
import { type Audience, type AudienceVersion, api, must } from '../api.js';
import { Status, useLoad } from '../components.js';
import { MapFrame } from './map-frame.js';
import { ScrollMap } from './scroll-map.js';

type Viewport = '' | 'mobile' | 'tablet' | 'desktop';
type Kind = 'click' | 'rage';

/** The width each viewport class is laid out at: the narrowest of the class (the measuring script's bounds). */
const WIDTHS: Record<Viewport, number> = { '': 1024, mobile: 375, tablet: 768, desktop: 1024 };

/**
 * The document the map is drawn over: the version's content when one is chosen, else the
 * audience's (or the page's). A read-only key may not post content (even to preview it): it gets
 * the audience's document, and the view says so.
 */
async function previewOf(
  pageId: string,
  audienceId: string,
  version: AudienceVersion | undefined,
): Promise<{ html: string; ofVersion: boolean }> {
  const path = { page_id: pageId };
  if (version?.content) {
    const posted = await api.POST('/v0/pages/{page_id}/preview', {
      params: { path },
      body: { content: version.content, audienceId },
      parseAs: 'text',
    });
    if (posted.response.status !== 403) return { html: must(posted), ofVersion: true };
  }
  // A version without content of its own shows the page's, as the heatmap's sections are the page's.
  const query = audienceId && !(version && !version.content) ? { audienceId } : {};
  const html = must(await api.GET('/v0/pages/{page_id}/preview', { params: { path, query }, parseAs: 'text' }));
  return { html, ofVersion: !version?.content };
}

function Filters(props: {
  audiences: Pick<Audience, 'audienceId' | 'effectiveName'>[];
  versions: AudienceVersion[];
  kind: Kind;
  audienceId: string;
  versionId: string;
  viewport: Viewport;
  set: (change: Partial<{ kind: Kind; audienceId: string; versionId: string; viewport: Viewport }>) => void;
}) {
  return (
    <form class="controls" onSubmit={(e) => e.preventDefault()}>
      <label>
        Map{' '}
        <select name="mapType" value={props.kind} onChange={(e) => props.set({ kind: e.currentTarget.value as Kind })}>
          <option value="click">Clicks</option>
          <option value="rage">Rage clicks</option>
        </select>
      </label>
      <label>
        Audience{' '}
        <select
          name="mapAudience"
          value={props.audienceId}
          onChange={(e) => props.set({ audienceId: e.currentTarget.value, versionId: '' })}
        >
          <option value="">All audiences</option>
          {props.audiences.map((a) => (
            <option key={a.audienceId} value={a.audienceId}>
              {a.effectiveName}
            </option>
          ))}
        </select>
      </label>
      <label>
        Version{' '}
        <select
          name="mapVersion"
          value={props.versionId}
          disabled={props.audienceId === ''}
          title={props.audienceId === '' ? 'Choose an audience first' : undefined}
          onChange={(e) => props.set({ versionId: e.currentTarget.value })}
        >
          <option value="">All versions</option>
          {props.versions.map((v) => (
            <option key={v.versionId} value={v.versionId}>
              v{v.versionNumber} ({v.status})
            </option>
          ))}
        </select>
      </label>
      <label>
        Viewport{' '}
        <select name="mapViewport" value={props.viewport} onChange={(e) => props.set({ viewport: e.currentTarget.value as Viewport })}>
          <option value="">All</option>
          <option value="mobile">Mobile (under 768 px)</option>
          <option value="tablet">Tablet (768 to 1,023 px)</option>
          <option value="desktop">Desktop (1,024 px and wider)</option>
        </select>
      </label>
    </form>
  );
}

/**
 * Where the page's visitors click and how far they scroll (issue 49): the click map over the
 * page's preview, and beside it the share of visits that reached each section and the scroll
 * depth curve, over the range the page's analytics show (whole UTC days).
 */
export function PageMaps({
  pageId,
  days,
  audiences,
}: {
  pageId: string;
  days: number;
  audiences: Pick<Audience, 'audienceId' | 'effectiveName'>[];
}) {
  const [filters, setFilters] = useState({ kind: 'click' as Kind, audienceId: '', versionId: '', viewport: '' as Viewport });
  const { kind, audienceId, versionId, viewport } = filters;
  const path = { page_id: pageId };
  const versions = useLoad(async () => {
    if (!audienceId) return [];
    const answer = await api.GET('/v0/pages/{page_id}/audiences/{audience_id}/versions', {
      params: { path: { ...path, audience_id: audienceId }, query: { limit: 50 } },
    });
    return must(answer).items;
  }, [pageId, audienceId]);
  const maps = useLoad(async () => {
    const startDate = new Date(Date.now() - days * 86_400_000).toISOString();
    const query = {
      startDate,
      ...(audienceId ? { audienceId } : {}),
      ...(versionId ? { versionId } : {}),
      ...(viewport ? { viewport } : {}),
    };
    const get = async (type: 'click' | 'rage' | 'scroll') =>
      must(await api.GET('/v0/pages/{page_id}/heatmap', { params: { path, query: { ...query, type } } }));
    // `scroll` answers the clicks too: one request unless the map is of rage clicks.
    const [scroll, rage] = await Promise.all([get('scroll'), kind === 'rage' ? get('rage') : undefined]);
    return { scroll, map: rage ?? scroll };
  }, [pageId, days, kind, audienceId, versionId, viewport]);
  const version = versions.data?.find((v) => v.versionId === versionId);
  const visits = maps.data?.scroll.visits ?? 0;
  const preview = useLoad(
    async () => (visits > 0 ? previewOf(pageId, audienceId, version) : undefined),
    [pageId, audienceId, version?.versionId, visits > 0],
  );
  const chosen = audiences.find((a) => a.audienceId === audienceId);
  return (
    <div class="maps">
      <h3>Click and scroll maps</h3>
      <Filters
        audiences={audiences}
        versions={versions.data ?? []}
        {...filters}
        set={(change) => setFilters((f) => ({ ...f, ...change }))}
      />
      <Status loaded={maps}>
        {maps.data &&
          (visits === 0 ? (
            <p class="muted" data-maps-empty="">
              No measured visits in this range for these filters: the maps fill once visitors come.
            </p>
          ) : (
            <div class="maps-body" aria-busy={maps.loading}>
              <div class="map-scroll">
                <p class="muted small" data-map-visits="">
                  {visits} {visits === 1 ? 'visit' : 'visits'}; {kind === 'rage' ? 'rage clicks' : 'clicks'} drawn over{' '}
                  {chosen ? chosen.effectiveName : 'the page'}
                  {version && preview.data?.ofVersion ? ` v${version.versionNumber}` : ''}, {WIDTHS[viewport]} px wide.{' '}
                  {version && preview.data?.ofVersion === false
                    ? "(This key may only read: the audience's current content is shown.) "
                    : ''}
                  <span class="map-legend" aria-hidden="true" /> fewer to more
                </p>
                <Status loaded={preview}>
                  {preview.data && (
                    <MapFrame
                      html={preview.data.html}
                      width={WIDTHS[viewport]}
                      sections={maps.data.map.sections}
                      label={`The page's preview under the ${kind === 'rage' ? 'rage click' : 'click'} map`}
                    />
                  )}
                </Status>
              </div>
              <ScrollMap heatmap={maps.data.scroll} clicks={maps.data.map} kind={kind} />
            </div>
          ))}
      </Status>
    </div>
  );
}
