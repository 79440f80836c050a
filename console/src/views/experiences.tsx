import { useState } from 'preact/hooks';
import { Badge, LoadMore, Section, Status, useCursorList, useLoad, When, WriteButton } from '../components.js';
import { OpenButton } from '../form.js';
import { href } from '../router.js';
import { plural } from '../words.js';
import { ExperienceForm } from './experience-forms.js';
import { ExperienceResults } from './experience-results.js';
import {
  createExperience,
  deleteExperience,
  getExperience,
  getSite,
  listExperiences,
  listSites,
  type Site,
  updateExperience,
  type UrlMatch,
} from './onsite-api.js';
import { Preview } from './experience-preview.js';

// Experiences (issue 48): per site, the changes made to its pages for chosen visitors. The list
// of one site, a new one, and one experience: its form, a preview as a chosen visitor, and results.

const matchText = (m: UrlMatch) => (m.type === 'exact' ? m.value : m.type === 'prefix' ? `${m.value}…` : m.value);

function SiteChooser({ sites, siteId }: { sites: Site[]; siteId: string }) {
  return (
    <label>
      Site{' '}
      <select name="site" value={siteId} onChange={(e) => (location.hash = href('sites', e.currentTarget.value, 'experiences'))}>
        {sites.map((s) => (
          <option key={s.siteId} value={s.siteId}>
            {s.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function SiteExperiences({ site }: { site: Site }) {
  const list = useCursorList((cursor) => listExperiences(site.siteId, cursor), [site.siteId]);
  const [adding, setAdding] = useState(false);
  return (
    <>
      {adding ? (
        <Section title="New experience">
          <ExperienceForm
            site={site}
            label="New experience"
            submitLabel="Create experience"
            save={async (body) => {
              const created = await createExperience(body);
              location.hash = href('experiences', created.experienceId);
            }}
          />
          <button type="button" class="secondary" onClick={() => setAdding(false)}>
            Cancel
          </button>
        </Section>
      ) : (
        <OpenButton label="New experience" onClick={() => setAdding(true)} />
      )}
      <Status loaded={list}>
        {list.items.length === 0 ? (
          <p>No experiences on {site.name} yet.</p>
        ) : (
          <table>
            <caption class="sr-only">Experiences on {site.name}</caption>
            <thead>
              <tr>
                {['Experience', 'Status', 'Pages', 'Changes', 'Priority', 'Holdout', 'Changed'].map((n) => (
                  <th scope="col" key={n}>
                    {n}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.items.map((e) => (
                <tr key={e.experienceId} data-experience={e.experienceId}>
                  <td>
                    <a href={href('experiences', e.experienceId)}>{e.name}</a>
                  </td>
                  <td>
                    <Badge value={e.status} />
                  </td>
                  <td>
                    <code>{matchText(e.urlMatch)}</code>
                  </td>
                  <td class="num">{plural('change', e.changes.length)}</td>
                  <td class="num">{e.priority}</td>
                  <td class="num">{e.holdoutPercent}%</td>
                  <td>
                    <When at={e.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <LoadMore list={list} />
      </Status>
    </>
  );
}

export function ExperiencesView({ siteId }: { siteId: string | undefined }) {
  // The chooser lists the first 100 sites: more than a tenant personalises.
  const sites = useLoad(async () => (await listSites(undefined, 100)).items, []);
  const site = sites.data?.find((s) => s.siteId === siteId) ?? (siteId ? undefined : sites.data?.[0]);
  return (
    <Section title="Experiences">
      <Status loaded={sites}>
        {sites.data?.length === 0 && (
          <p>
            Experiences change the pages of a site of yours: <a href={href('sites')}>add a site</a> first.
          </p>
        )}
        {sites.data && siteId && !site && (
          <p role="alert" class="error">
            There is no such site. <a href={href('sites')}>See your sites</a>.
          </p>
        )}
        {sites.data && site && (
          <>
            <SiteChooser sites={sites.data} siteId={site.siteId} />
            <SiteExperiences key={site.siteId} site={site} />
          </>
        )}
      </Status>
    </Section>
  );
}

export function ExperienceView({ experienceId }: { experienceId: string }) {
  const loaded = useLoad(async () => {
    const experience = await getExperience(experienceId);
    return { experience, site: await getSite(experience.siteId) };
  }, [experienceId]);
  const { experience: e, site } = loaded.data ?? {};
  return (
    <Status loaded={loaded}>
      {e && site && (
        <article>
          <nav aria-label="Breadcrumb">
            <p class="crumbs">
              <a href={href('sites')}>Sites</a> / <a href={href('sites', site.siteId, 'experiences')}>{site.name}</a> /
            </p>
          </nav>
          <h1>
            {e.name} <Badge value={e.status} />
          </h1>
          <p class="muted">
            On {site.name}, {plural('change', e.changes.length)}; changed <When at={e.updatedAt} />
          </p>
          <ExperienceResults experienceId={e.experienceId} holdoutPercent={e.holdoutPercent} />
          <Preview key={e.experienceId} experience={e} site={site} />
          <Section title="Edit">
            <ExperienceForm
              site={site}
              experience={e}
              label={`Edit ${e.name}`}
              submitLabel="Save"
              save={async (body) => {
                const { siteId: _site, ...changes } = body;
                await updateExperience(e.experienceId, changes);
                loaded.reload();
              }}
            />
          </Section>
          <div class="actions">
            <WriteButton
              label="Delete"
              kind="danger"
              name={`Delete the experience ${e.name}`}
              confirm={`Delete “${e.name}”? Its changes stop at once and its results are gone.`}
              action={() => deleteExperience(e.experienceId)}
              done={() => {
                location.hash = href('sites', site.siteId, 'experiences');
              }}
            />
          </div>
        </article>
      )}
    </Status>
  );
}
