import { useState } from 'preact/hooks';
import { type Audience, api, must, once, type PageLink, succeeded, type TenantDomain } from '../api.js';
import { LoadMore, Section, Status, useCursorList, useLoad, WriteButton } from '../components.js';
import { ApiForm, Field } from '../form.js';
import { href } from '../router.js';

// A page's links: create one on any verified domain, move it (a new path), delete it; each shown
// as its full, clickable URL. The same service serves the console and the tenant's domains, so a
// link's URL takes the console's own scheme and port (https and none in production; the local
// port in development, where *.localhost names loop back).

export const linkUrl = (hostname: string, path: string): string =>
  `${location.protocol}//${hostname}${location.port ? `:${location.port}` : ''}${path}`;

/** The tenant's verified domains (at most 100), which links may live on. */
export function useVerifiedDomains() {
  return useLoad(
    async () =>
      must(await api.GET('/v0/tenant_domains', { params: { query: { limit: 100 } } })).items.filter(
        (d: TenantDomain) => d.status === 'verified',
      ),
    [],
  );
}

function MoveLink({ link, changed }: { link: PageLink; changed: () => void }) {
  const [path, setPath] = useState(link.path);
  return (
    <details>
      <summary>Move</summary>
      <ApiForm
        label={`Move link ${link.pageLinkId}`}
        submitLabel="Move"
        onSubmit={async () => {
          must(await api.PATCH('/v0/page_links/{page_link_id}', { params: { path: { page_link_id: link.pageLinkId } }, body: { path } }));
          changed();
        }}
      >
        <Field name="path" label="New path" value={path} onInput={setPath} maxLength={2048} />
      </ApiForm>
    </details>
  );
}

/**
 * What a link serves, in one plain line: the audience it names, or for a link to the page, the home
 * audience (segments first, when the page has any) or else the page itself. Every one of them is
 * measured and takes leads, so the line says only which version a visitor gets.
 */
function Serves({ pageId, target, audiences }: { pageId: string; target: PageLink['target']; audiences: Audience[] }) {
  const named = (a: Pick<Audience, 'audienceId' | 'effectiveName'>) => (
    <a href={href('pages', pageId, 'audiences', a.audienceId)}>{a.effectiveName}</a>
  );
  if (target.targetType === 'audience') {
    // An audience beyond the loaded list (or archived) is still named, by its id, never left blank.
    const audience = audiences.find((a) => a.audienceId === target.audienceId);
    return (
      <span class="serves">Serves audience {named(audience ?? { audienceId: target.audienceId, effectiveName: target.audienceId })}</span>
    );
  }
  const live = audiences.filter((a) => a.archivedAt === null);
  const home = live.find((a) => a.flags.includes('home_page'));
  const segments = live.filter((a) => a.rules !== null && a.rules !== undefined).length;
  const first = segments > 0 ? `a matching segment (${segments}), else ` : '';
  return (
    <span class="serves">
      Serves {first}
      {home ? <>audience {named(home)} (the home audience)</> : 'the page itself'}
    </span>
  );
}

/** The page's links on one domain (the search is per domain: the fallback one unless named). */
function DomainLinks({ pageId, domain, round, audiences }: { pageId: string; domain: TenantDomain; round: number; audiences: Audience[] }) {
  const links = useCursorList(
    async (cursor) =>
      must(
        await api.GET('/v0/page_links/search', {
          params: { query: { pageId, tenantDomainId: domain.tenantDomainId, limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [pageId, domain.tenantDomainId, round],
  );
  if (links.items.length === 0 && !links.error) return null;
  return (
    <Status loaded={links}>
      <ul class="links" aria-label={`Links on ${domain.hostname}`}>
        {links.items.map((l) => (
          <li key={l.pageLinkId} data-link={l.pageLinkId}>
            <a href={linkUrl(domain.hostname, l.path)}>{linkUrl(domain.hostname, l.path)}</a>{' '}
            <Serves pageId={pageId} target={l.target} audiences={audiences} />
            <MoveLink link={l} changed={links.reload} />
            <WriteButton
              label="Delete"
              name={`Delete link ${l.path}`}
              kind="danger"
              confirm={`Delete the link ${l.path}? Visitors following it get a 404.`}
              action={async () =>
                succeeded(await api.DELETE('/v0/page_links/{page_link_id}', { params: { path: { page_link_id: l.pageLinkId } } }))
              }
              done={links.reload}
            />
          </li>
        ))}
      </ul>
      <LoadMore list={links} />
    </Status>
  );
}

export function PageLinks({ pageId, audiences }: { pageId: string; audiences: Audience[] }) {
  const domains = useVerifiedDomains();
  const [round, setRound] = useState(0);
  const [tenantDomainId, setDomain] = useState('');
  const [path, setPath] = useState('');
  const [target, setTarget] = useState('page');
  const chosenDomain = tenantDomainId || domains.data?.find((d) => d.isFallback)?.tenantDomainId || '';
  const create = async () => {
    must(
      await api.POST('/v0/page_links', {
        params: { header: once() },
        body: {
          path,
          ...(chosenDomain ? { tenantDomainId: chosenDomain } : {}),
          target: target === 'page' ? { targetType: 'page', pageId } : { targetType: 'audience', audienceId: target },
        },
      }),
    );
    setPath('');
    setRound((r) => r + 1);
  };
  return (
    <Section title="Links">
      <Status loaded={domains}>
        {(domains.data ?? []).map((d) => (
          <DomainLinks key={d.tenantDomainId} pageId={pageId} domain={d} round={round} audiences={audiences} />
        ))}
      </Status>
      <ApiForm label="New link" submitLabel="Create link" onSubmit={create} notice="Link created.">
        <Field
          kind="select"
          name="tenantDomainId"
          label="Domain"
          value={chosenDomain}
          onInput={setDomain}
          options={(domains.data ?? []).map((d): [string, string] => [d.tenantDomainId, d.hostname])}
          hint="Verified domains only"
        />
        <Field
          name="path"
          label="Path"
          value={path}
          onInput={setPath}
          maxLength={2048}
          hint="What follows the domain, starting with /: /spring/jane"
        />
        <Field
          kind="select"
          name="target"
          label="Shows"
          value={target}
          onInput={setTarget}
          options={[
            ['page', 'the page (its home audience, else the page itself)'] as [string, string],
            ...audiences.map((a): [string, string] => [a.audienceId, `the page for ${a.effectiveName}`]),
          ]}
        />
      </ApiForm>
    </Section>
  );
}
