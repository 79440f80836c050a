import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, forgetKey, must, storedKey, storeKey } from './api.js';
import { type Session, SessionContext, useBusy } from './components.js';
import { href, type Route, useRoute } from './router.js';
import { AudienceView } from './views/audience.js';
import { ExperimentView } from './views/experiment.js';
import { IntegrationsView } from './views/integrations.js';
import { LeadsView } from './views/leads.js';
import { PageView } from './views/page.js';
import { PagesView } from './views/pages.js';
import { SiteView } from './views/site.js';
import { GoalsView } from './views/goals.js';
import { AccountsView, AccountView, PersonsView, PersonView } from './views/people.js';
import { SubscriptionView, WebhooksView } from './views/webhooks.js';
import { AlertsView } from './views/alerts.js';
import { AssetsView } from './views/assets.js';
import { BrandView } from './views/brand.js';
import { DomainsView } from './views/domains.js';
import { TopicsView } from './views/topics.js';
import { ExperiencesView, ExperienceView } from './views/experiences.js';
import { SitesView } from './views/sites.js';

/** What the key may do, asked of the API itself (GET /v0/api_key), so nothing is guessed from a failed write. */
async function sessionOfKey(): Promise<Session> {
  const caller = must(await api.GET('/v0/api_key'));
  return { tenantId: caller.tenantId, readOnly: !caller.apiKey.scopes.includes('write') };
}

function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const { busy, error, run } = useBusy();
  const submit = async (e: Event) => {
    e.preventDefault();
    await run(async () => {
      storeKey(key.trim());
      try {
        onSignedIn(await sessionOfKey());
      } catch (err) {
        forgetKey();
        throw err instanceof ApiError && err.status === 401 ? new Error('That API key is unknown, revoked or expired.') : err;
      }
    });
  };
  return (
    <main id="main" class="signin">
      <h1>Sign in to the console</h1>
      <p>Paste an API key. It is kept in this tab only (session storage) and sent with each request; signing out forgets it.</p>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="apiKey"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          maxLength={512}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function View({ route }: { route: Route }) {
  switch (route.view) {
    case 'pages':
      return <PagesView />;
    case 'site':
      return <SiteView />;
    case 'goals':
      return <GoalsView />;
    case 'page':
      return <PageView pageId={route.pageId} tab={route.tab} />;
    case 'audience':
      return <AudienceView pageId={route.pageId} audienceId={route.audienceId} />;
    case 'experiment':
      return <ExperimentView pageId={route.pageId} experimentId={route.experimentId} />;
    case 'persons':
      return <PersonsView />;
    case 'person':
      return <PersonView personId={route.personId} />;
    case 'accounts':
      return <AccountsView />;
    case 'account':
      return <AccountView accountId={route.accountId} />;
    case 'leads':
      return <LeadsView />;
    case 'brand':
      return <BrandView />;
    case 'webhooks':
      return <WebhooksView />;
    case 'alerts':
      return <AlertsView />;
    case 'integrations':
      return <IntegrationsView />;
    case 'subscription':
      return <SubscriptionView subscriptionId={route.subscriptionId} />;
    case 'domains':
      return <DomainsView />;
    case 'assets':
      return <AssetsView />;
    case 'topics':
      return <TopicsView />;
    case 'sites':
      return <SitesView />;
    case 'experiences':
      return <ExperiencesView siteId={route.siteId} />;
    case 'experience':
      return <ExperienceView experienceId={route.experienceId} />;
  }
}

const NAV: [string, Route['view'][], string][] = [
  ['Pages', ['pages', 'page', 'audience', 'experiment'], href('pages')],
  ['Site', ['site'], href('site')],
  ['Goals', ['goals'], href('goals')],
  ['Sites', ['sites'], href('sites')],
  ['Experiences', ['experiences', 'experience'], href('experiences')],
  ['Leads', ['leads'], href('leads')],
  ['Persons', ['persons', 'person'], href('persons')],
  ['Accounts', ['accounts', 'account'], href('accounts')],
  ['Alerts', ['alerts'], href('alerts')],
  ['Webhooks', ['webhooks', 'subscription'], href('webhooks')],
  ['Integrations', ['integrations'], href('integrations')],
  ['Domains', ['domains'], href('domains')],
  ['Assets', ['assets'], href('assets')],
  ['Brand', ['brand'], href('brand')],
  ['Topics', ['topics'], href('topics')],
];

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [checking, setChecking] = useState(storedKey() !== null);
  // A reload of the tab keeps its key (session storage): ask again what it may do.
  useEffect(() => {
    if (!storedKey()) return;
    sessionOfKey()
      .then(setSession, () => forgetKey())
      .finally(() => setChecking(false));
  }, []);
  // Focus moves to the new view's heading, so keyboard and screen-reader users land on it.
  useEffect(() => {
    const main = document.getElementById('main');
    main?.focus({ preventScroll: true });
  }, [route]);

  if (checking) return <p class="muted">Loading…</p>;
  if (!session) return <SignIn onSignedIn={setSession} />;
  const signOut = () => {
    forgetKey();
    setSession(null);
    location.hash = '';
  };
  return (
    <SessionContext.Provider value={session}>
      <header class="top">
        <span class="brand">Console</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([label, views, link]) => (
              <li key={label}>
                <a href={link} aria-current={views.includes(route.view) ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          {session.readOnly && <span class="badge badge-readonly">read-only key</span>}
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <View route={route} />
      </main>
    </SessionContext.Provider>
  );
}
