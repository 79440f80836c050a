import { useEffect, useRef, useState } from 'preact/hooks';
import { type Audience, api, must, type PageContent } from '../../api.js';
import { messageOf, Status, useLoad } from '../../components.js';
import { type PreviewVisit, VisitFields } from './visit.js';

/** What the editor holds and has not saved: shown in the preview as it is typed. */
export interface Draft {
  content: PageContent;
}

/** How long typing pauses before the preview follows it. */
const SETTLE_MS = 300;
/** A link this close to its expiry is issued again before it is used. */
const LINK_MARGIN_MS = 30_000;

let frames = 0;

/**
 * The page as served, beside the editor, for the page itself or any of its audiences. It is a
 * document of its own, opened by a short-lived link the API hands out: it lives under its own
 * policy (which allows the page's inline styles, the tenant's brand among them), not the
 * console's, which a `srcdoc` or blob frame would inherit. The console's API is this origin
 * (`connect-src 'self'`), so the link is opened here whatever host PUBLIC_BASE_URL names.
 *
 * Live: once the editor's content changes, and typing has paused, the unsaved content is checked
 * by `POST /v0/pages/{page_id}/preview` (a problem is said here, the frame keeps the last good
 * one) and then posted into the frame through the link (`POST /previews/{page_id}`), so the
 * server's renderer shows it: nothing is stored, and the frame's document is the server's, never
 * markup the console made. `revision` changes after each Save or Publish: a fresh link.
 */
export function LivePreview({
  pageId,
  audiences,
  initialAudienceId = '',
  revision,
  draft,
}: {
  pageId: string;
  audiences: Pick<Audience, 'audienceId' | 'effectiveName'>[];
  initialAudienceId?: string;
  /** Changes when what is stored changes: the preview is fetched again. */
  revision: number | string;
  /** The editor's unsaved content; undefined until it changes. */
  draft?: Draft;
}) {
  const [chosenAudienceId, setAudienceId] = useState(initialAudienceId);
  const [asVisitor, setAsVisitor] = useState(false);
  const [visit, setVisit] = useState<PreviewVisit>({});
  /** The audience the visit got (a segment, the home audience), '' for the page itself; undefined until asked. */
  const [got, setGot] = useState<string>();
  // As a visitor, the visit chooses the audience, as a served page's does.
  const audienceId = asVisitor ? '' : chosenAudienceId;
  const [problem, setProblem] = useState<string>();
  const [name] = useState(() => `preview-${++frames}`);
  const form = useRef<HTMLFormElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const link = useLoad(async () => {
    const query = audienceId ? { audienceId } : {};
    const issued = must(await api.GET('/v0/pages/{page_id}/preview_link', { params: { path: { page_id: pageId }, query } }));
    const { pathname, search } = new URL(issued.url);
    return { path: pathname + search, expires: Date.parse(issued.expiresAt) };
  }, [pageId, audienceId, revision, asVisitor]);
  const issued = link.data;
  useEffect(() => {
    if ((!draft && !asVisitor) || !issued) return;
    let live = true;
    // As a visitor, what is saved is shown: the visit may choose another audience than the one edited.
    const posted = asVisitor ? { visit } : draft;
    const timer = setTimeout(async () => {
      try {
        const answer = await api.POST('/v0/pages/{page_id}/preview', {
          params: { path: { page_id: pageId } },
          body: { ...posted, ...(audienceId ? { audienceId } : {}) },
          parseAs: 'text',
        });
        must(answer);
        if (live) setGot(asVisitor ? (answer.response.headers.get('x-pam-audience-id') ?? '') : undefined);
      } catch (err) {
        if (live) setProblem(messageOf(err));
        return;
      }
      if (!live || !form.current || !field.current) return;
      setProblem(undefined);
      // An expired link would answer 403 in the frame: a fresh one comes back here through `issued`.
      if (issued.expires - Date.now() < LINK_MARGIN_MS) return link.reload();
      field.current.value = JSON.stringify(posted);
      form.current.action = issued.path;
      form.current.submit();
    }, SETTLE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [draft, issued, pageId, audienceId, asVisitor, visit]);
  const chosen = audiences.find((a) => a.audienceId === (asVisitor ? got : audienceId));
  const gotName =
    got === undefined ? undefined : got === '' ? 'the page itself: no segment matches' : (chosen?.effectiveName ?? `audience ${got}`);
  return (
    <div class="live-preview">
      <label>
        Preview for{' '}
        <select
          value={audienceId}
          onChange={(e) => setAudienceId(e.currentTarget.value)}
          name="previewAudience"
          disabled={asVisitor}
          title={asVisitor ? 'The visit chooses' : undefined}
        >
          <option value="">No audience (the page itself)</option>
          {audiences.map((a) => (
            <option key={a.audienceId} value={a.audienceId}>
              {a.effectiveName}
            </option>
          ))}
        </select>
      </label>
      <p class="muted small">Shows your changes as you type, before you save.</p>
      <label>
        <input
          type="checkbox"
          name="asVisitor"
          checked={asVisitor}
          onChange={(e) => {
            setAsVisitor(e.currentTarget.checked);
            setGot(undefined);
          }}
        />{' '}
        Preview as a visitor
      </label>
      {asVisitor && (
        <>
          <p class="muted small">
            The visit chooses the version, as it would on the page: the first segment it matches, else what everyone gets. What is saved is
            shown, its words filled from the visit.
          </p>
          <VisitFields onVisit={setVisit} />
          <p role="status" data-visit-gets="">
            {gotName === undefined ? '' : `This visit gets ${gotName}.`}
          </p>
        </>
      )}
      {problem && (
        <p class="error small" role="status">
          The preview shows your last complete change: {problem}
        </p>
      )}
      {/* Posts the unsaved content into the frame; never shown, never sent anywhere but this origin. */}
      <form ref={form} method="post" target={name} hidden aria-hidden="true">
        <input ref={field} type="hidden" name="draft" />
      </form>
      <Status loaded={link}>
        {/* sandbox with no allowances: the document's scripts, forms and navigation of this console are all off */}
        <iframe
          class="preview"
          name={name}
          sandbox=""
          src={issued?.path ?? 'about:blank'}
          title={`Preview of the page${asVisitor ? ' as a visitor' : chosen ? ` for ${chosen.effectiveName}` : ''}`}
          referrerpolicy="no-referrer"
        />
      </Status>
    </div>
  );
}
