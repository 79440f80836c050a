import { api, must } from './api.js';
import { useLoad } from './components.js';
import { href } from './router.js';

/**
 * Where a view sits, named by what it is: "Pages / Spring launch / Jane Doe". The page's name is
 * read here (each view has only its id); until it comes, and if it cannot be read, the link
 * says "this page" rather than nothing.
 */
export function PageCrumbs({ pageId, audience }: { pageId: string; audience?: { audienceId: string; name: string } }) {
  const page = useLoad(async () => must(await api.GET('/v0/pages/{page_id}', { params: { path: { page_id: pageId } } })), [pageId]);
  return (
    <nav aria-label="Breadcrumb">
      <p class="crumbs">
        <a href={href('pages')}>Pages</a> / <a href={href('pages', pageId)}>{page.data?.name ?? 'this page'}</a> /
        {audience && (
          <>
            {' '}
            <a href={href('pages', pageId, 'audiences', audience.audienceId)}>{audience.name}</a> /
          </>
        )}
      </p>
    </nav>
  );
}
