import { type Audience, api, must, type Page } from '../../api.js';
import { Section } from '../../components.js';
import { BlockEditor } from './editor.js';
import { useState } from 'preact/hooks';
import { type Draft, LivePreview } from './preview.js';

// A page's own content (what a visitor with no audience, or an audience showing the page's
// content, gets): the block editor, and beside it the preview for the page or any audience.

export function PageContent({
  page,
  audiences,
  revision,
  saved,
}: {
  page: Page;
  audiences: Audience[];
  revision: number;
  saved: () => void;
}) {
  const path = { page_id: page.pageId };
  const published = page.status === 'published';
  const [draft, setDraft] = useState<Draft>();
  return (
    <Section title="Content">
      <div class="editing">
        <BlockEditor
          label="Page content"
          initial={page.content}
          actions={page.actions}
          onDraft={(content) => setDraft({ content })}
          savedNotice={published ? 'Saved: visitors get it from the next request.' : 'Saved.'}
          save={async (content) => {
            must(await api.PATCH('/v0/pages/{page_id}', { params: { path }, body: { content } }));
            saved();
          }}
          publish={
            published
              ? undefined
              : {
                  confirm: `Publish “${page.name}”? Its links serve it at once.`,
                  notice: 'Published.',
                  run: async (content) => {
                    must(await api.PATCH('/v0/pages/{page_id}', { params: { path }, body: { content, status: 'published' } }));
                    saved();
                  },
                }
          }
        />
        <LivePreview pageId={page.pageId} audiences={audiences} revision={revision} draft={draft} />
      </div>
    </Section>
  );
}
