import { type Audience, type AudienceVersion, api, must, once, type PageContent } from '../../api.js';
import { Status, useLoad } from '../../components.js';
import { BlockEditor } from './editor.js';
import { useState } from 'preact/hooks';
import { type Draft, LivePreview } from './preview.js';

// An audience's content: the block editor on its latest version, and beside it the preview of
// what the audience is served. A draft is edited in place; after a published (or cancelled,
// archived) version, Save starts a new draft with the content and Publish publishes it at once.
// A version the page agent is still making is not edited here.

const CLOSED = ['published', 'cancelled', 'archived'];

export function AudienceContent({
  audience,
  version,
  revision,
  changed,
}: {
  audience: Audience;
  version: AudienceVersion;
  revision: number | string;
  changed: () => void;
}) {
  const path = { page_id: audience.pageId, audience_id: audience.audienceId };
  // The page gives the buttons a call to action can show, and the content a version without its own starts from.
  const page = useLoad(
    async () => must(await api.GET('/v0/pages/{page_id}', { params: { path: { page_id: audience.pageId } } })),
    [audience.pageId],
  );
  const [unsaved, setUnsaved] = useState<Draft>();
  const draft = version.status === 'draft';
  if (!draft && !CLOSED.includes(version.status))
    return (
      <p class="muted small">The page agent is making version {version.versionNumber}: its content can be edited once it is a draft.</p>
    );
  const update = (content: PageContent, status?: 'published') =>
    api.PATCH('/v0/pages/{page_id}/audiences/{audience_id}/versions/{version_id}', {
      params: { path: { ...path, version_id: version.versionId } },
      body: { content, ...(status ? { status } : {}) },
    });
  const create = async (content: PageContent) =>
    must(await api.POST('/v0/pages/{page_id}/audiences/{audience_id}/versions', { params: { path, header: once() }, body: { content } }));
  const save = async (content: PageContent) => {
    if (draft) must(await update(content));
    else await create(content);
    changed();
  };
  const publish = async (content: PageContent) => {
    if (draft) must(await update(content, 'published'));
    else {
      const made = await create(content);
      must(
        await api.PATCH('/v0/pages/{page_id}/audiences/{audience_id}/versions/{version_id}', {
          params: { path: { ...path, version_id: made.versionId } },
          body: { status: 'published' },
        }),
      );
    }
    changed();
  };
  return (
    <Status loaded={page}>
      {page.data && (
        <div class="editing">
          <BlockEditor
            key={version.versionId}
            label={`Content for ${audience.effectiveName}`}
            initial={version.content ?? page.data.content}
            actions={page.data.actions}
            onDraft={(content) => setUnsaved({ content })}
            savedNotice={draft ? 'Saved.' : 'Saved as a new draft version.'}
            save={save}
            publish={{
              confirm: `Publish this content for ${audience.effectiveName}? It replaces the published version.`,
              notice: 'Published.',
              run: publish,
            }}
          />
          <LivePreview
            pageId={audience.pageId}
            audiences={[audience]}
            initialAudienceId={audience.audienceId}
            revision={revision}
            draft={unsaved}
          />
        </div>
      )}
    </Status>
  );
}
