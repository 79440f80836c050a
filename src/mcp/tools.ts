import type { OriginOf } from '../http/public-origin.js';
import { type Api, callJson, requestOf } from './api.js';
import type { Operation, RouteCatalogue } from './catalogue.js';
import { onsiteTools } from './onsite-tools.js';
import { itemsOf, type JsonSchema, linkServed, mergedInput, pageWithParts, plainSchema } from './schemas.js';
import { type Body, count, oneCall, READ_NOTE, type Tool, tool } from './tool.js';

import { type Rules, rulesInWords } from '../audiences/index.js';

export type { Tool, ToolAnswer } from './tool.js';

/** The tool table: the same for the Streamable HTTP endpoint and, through it, the stdio bin. */
export function buildTools(catalogue: RouteCatalogue): Tool[] {
  const op = (id: string) => catalogue.get(id);
  const personSearch = catalogue.find('searchPersons') ?? op('listPersons');
  const links = op('searchPageLinks');
  const audiences = op('listAudiences');
  const createVersion = op('createAudienceVersion');
  const updateVersion = op('updateAudienceVersion');
  const createLink = op('createPageLink');
  const domains = op('listTenantDomains');

  return [
    oneCall(
      {
        name: 'search_persons',
        title: 'Search persons',
        description: `The tenant's persons, newest first, a page at a time. ${READ_NOTE}`,
      },
      personSearch,
      (b) => count(b, 'persons'),
    ),
    oneCall(
      {
        name: 'search_accounts',
        title: 'Search accounts',
        description: `Accounts whose name or domain contains \`query\` (case-insensitive). ${READ_NOTE}`,
      },
      op('searchAccounts'),
      (b) => count(b, 'accounts'),
    ),
    oneCall(
      {
        name: 'search_audiences',
        title: 'Search audiences',
        description: `Audiences, across pages, whose name or page's name contains \`query\`; at most \`limit\` (100), no further pages. ${READ_NOTE}`,
      },
      op('searchAudiences'),
      (b) => count(b, 'audiences'),
    ),
    oneCall(
      {
        name: 'list_pages',
        title: 'List pages',
        description: `The tenant's pages, newest first, a page at a time, without their content unless include=content (then limit at most 10). ${READ_NOTE}`,
      },
      op('listPages'),
      (b) => count(b, 'pages'),
    ),
    getPage(op('getPage'), audiences, links, domains),
    oneCall(
      {
        name: 'list_templates',
        title: 'List page templates',
        description: `Page templates to start a page from (create_page's templateId): the built-ins first (product launch, account-based outreach, webinar or event, demo request), then the tenant's own, newest first, each with its actions; its content only with include=content (then limit at most 10), or from GET of one template. ${READ_NOTE}`,
      },
      op('listTemplates'),
      (b) => count(b, 'templates'),
    ),
    oneCall(
      {
        name: 'create_page',
        title: 'Create a page',
        description:
          "Creates a page: name, title, pageType, pageContext (what the page agent writes from), actions and content (headline, subheadline, sections in layouts). Or templateId (from list_templates) instead of content and actions: the page starts with the template's. status published makes it servable once it has a link.",
        write: { destructive: false, idempotent: false },
      },
      op('createPage'),
      (b) => `Created page ${String(b.pageId)} "${String(b.name)}" (${String(b.status)})`,
    ),
    oneCall(
      {
        name: 'create_audience',
        title: 'Create an audience',
        description:
          'Creates an audience of a page, for a person (personId) or an account, with an optional personRouteKey (the path segment of page_routing links).',
        write: { destructive: false, idempotent: false },
      },
      op('createAudience'),
      (b) => `Created audience ${String(b.audienceId)} "${String(b.effectiveName)}" on page ${String(b.pageId)}`,
    ),
    createSegment(op('createAudience')),
    writeVersion(createVersion, updateVersion),
    oneCall(
      {
        name: 'publish_version',
        title: 'Publish a version',
        description:
          "Publishes an audience's version: visitors of the audience see it from now on, and the previously published one is archived.",
        write: { destructive: true, idempotent: true },
      },
      updateVersion,
      (b) => `Version ${String(b.versionId)} is ${String(b.status)}`,
      { status: 'published' },
    ),
    oneCall(
      {
        name: 'regenerate',
        title: 'Regenerate a page',
        description:
          'Queues a new version for the page agent to write, for every live audience of the page except those whose published or latest draft version a person wrote (unless includeWritten), or for exactly the listed audienceIds; the versions appear as queued, then processing, then published (or failed). dryRun: true says what it would do and writes nothing.',
        write: { destructive: false, idempotent: false },
      },
      op('regeneratePage'),
      (b) =>
        `${b.dryRun === true ? 'Would queue' : 'Queued'} ${String(b.queued)} versions for the page agent; skipped ${Array.isArray(b.skipped) ? b.skipped.length : 0} written by a person`,
    ),
    oneCall(
      {
        name: 'get_page_analytics',
        title: 'Page analytics',
        description: `A page's visits, conversions and time on page over a range (startDate to endDate, by interval), with the top groups by groupBy. ${READ_NOTE}`,
      },
      op('getPageAnalytics'),
      (b, a) => `Analytics of page ${String(a.pageId)}${a.groupBy ? ` grouped by ${String(a.groupBy)}` : ''}: ${summaryOfTotals(b)}`,
    ),
    oneCall(
      {
        name: 'list_recent_visits',
        title: 'Recent visits',
        description: `The sessions of a page (or one audienceId), newest first, with their classes and UTM values. ${READ_NOTE}`,
      },
      op('listAudienceSessions'),
      (b) => count(b, 'sessions'),
    ),
    oneCall(
      {
        name: 'get_experiment_results',
        title: 'Experiment results',
        description: `The results of a page's experiment: each arm's visitors and conversions, the comparison and whether one is winning. ${READ_NOTE}`,
      },
      op('getExperimentResults'),
      (_b, a) => `Results of experiment ${String(a.experimentId)}`,
    ),
    oneCall(
      {
        name: 'list_deals',
        title: 'List deals',
        description: `The tenant's CRM deals (from the API, HubSpot or Salesforce), newest first by their creation, filtered by source, stage, accountId and dates. ${READ_NOTE}`,
      },
      op('listDeals'),
      (b) => count(b, 'deals'),
    ),
    oneCall(
      {
        name: 'pipeline_report',
        title: 'Influenced pipeline',
        description: `The deals (created between startDate and endDate) whose account visited within windowDays before, credited to the pages, audiences, segments, experiment arms (groupBy; arm needs experimentId), channel groups, UTM sources or campaigns of any, the first or the last visit, or shared between the visits (model linear, time_decay with halfLifeDays, or position: 40% to the first and last each); attributedAmount is each group's share, the shares adding up to the deals' amount. Amounts are per currency. ${READ_NOTE}`,
      },
      op('getPipeline'),
      (b) => `Influenced pipeline: ${summaryOfPipeline(b)}`,
    ),
    createLinkTool(createLink, domains),
    ...onsiteTools(catalogue),
  ];
}

function summaryOfTotals(body: Body): string {
  const totals = body.totals;
  if (totals === null || typeof totals !== 'object') return 'see the structured answer';
  return Object.entries(totals as Body)
    .filter(([, v]) => typeof v === 'number')
    .slice(0, 4)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
}

/** The tenant's domains (first 100): where links live, and the hostnames of their URLs. */
async function domainsOf(api: Api, domains: Operation): Promise<Body[]> {
  return (await callJson<Body>(api, requestOf(domains, { limit: 100 }))).items as Body[];
}

const urlOf = (domain: Body | undefined, path: string, originOf: OriginOf) =>
  domain ? `${originOf(String(domain.hostname))}${path}` : path;

/** A page with its audiences and the links to it on each domain: reads of the API. */
function getPage(page: Operation, audiences: Operation, links: Operation, domains: Operation): Tool {
  const output = pageWithParts(plainSchema(page.response), itemsOf(audiences.response), itemsOf(links.response));
  return tool(
    {
      name: 'get_page',
      title: 'Get a page',
      description: `A page with its live audiences and the links that lead to it, each with its URL (first 100 of each, per domain). ${READ_NOTE}`,
    },
    mergedInput({ params: [page.params] }),
    output,
    async (args, api, originOf) => {
      const found = await callJson<Body>(api, requestOf(page, args));
      const pageId = String(found.pageId);
      const listed = await callJson<Body>(api, requestOf(audiences, { pageId, limit: 100 }));
      const served: Body[] = [];
      let linksHasMore = false;
      for (const domain of await domainsOf(api, domains)) {
        const linked = await callJson<Body>(api, requestOf(links, { pageId, tenantDomainId: domain.tenantDomainId, limit: 100 }));
        for (const link of linked.items as Body[]) served.push({ ...link, url: urlOf(domain, String(link.path), originOf) });
        linksHasMore ||= linked.hasMore === true;
      }
      const structured = {
        ...found,
        audiences: listed.items as Body[],
        audiencesHasMore: listed.hasMore === true,
        links: served,
        linksHasMore,
      };
      return {
        structured,
        summary: `Page ${pageId} "${String(found.name)}" (${String(found.status)}): ${structured.audiences.length} audiences, ${served.length} links`,
      };
    },
  );
}

/** A draft's content: a new draft version, or (with versionId) a draft's content replaced. */
function writeVersion(create: Operation, update: Operation): Tool {
  const input = mergedInput({ params: [create.params, update.params], rest: [create.body] }, { optional: ['versionId'] });
  const versionId = input.properties?.versionId;
  if (versionId) versionId.description = 'A draft version to write into; absent: a new draft version is made';
  return tool(
    {
      name: 'write_version',
      title: 'Write a draft version',
      description:
        "Writes an audience's draft version: content is the headline, subheadline and Markdown sections (null: the page's content). Without versionId a new draft is made; with it, that draft's content is replaced. Publish it with publish_version.",
      write: { destructive: true, idempotent: false },
    },
    input,
    plainSchema(create.response),
    async (args, api) => {
      const { versionId, ...rest } = args;
      const request = versionId === undefined ? requestOf(create, rest) : requestOf(update, { ...rest, versionId });
      const body = await callJson<Body>(api, request);
      return { structured: body, summary: `Draft version ${String(body.versionId)} is ${String(body.status)}` };
    },
  );
}

/** A link on a domain of the tenant, and the full address it serves. */
function createLinkTool(create: Operation, domains: Operation): Tool {
  const link = plainSchema(create.response);
  return tool(
    {
      name: 'create_link',
      title: 'Create a page link',
      description:
        'Creates a link: a path on a verified domain of the tenant (tenantDomainId; the fallback domain when absent) that serves a page, an audience, or page_routing (<path>/<personRouteKey>). Answers the full URL.',
      write: { destructive: false, idempotent: false },
    },
    mergedInput({ params: [create.params], rest: [create.body] }),
    linkServed(link),
    async (args, api, originOf) => {
      const created = await callJson<Body>(api, requestOf(create, args));
      const url = await servedAt(api, domains, String(created.tenantDomainId), String(created.path), originOf);
      return { structured: { ...created, url }, summary: `Created link ${String(created.pageLinkId)}: ${url}` };
    },
  );
}

async function servedAt(api: Api, domains: Operation, tenantDomainId: string, path: string, originOf: OriginOf): Promise<string> {
  return urlOf(
    (await domainsOf(api, domains)).find((d) => d.tenantDomainId === tenantDomainId),
    path,
    originOf,
  );
}

/** The pipeline's totals in words: the deals, and the amount in each currency. */
function summaryOfPipeline(body: Body): string {
  const totals = (body.totals ?? {}) as {
    deals?: number;
    wonDeals?: number;
    byCurrency?: { currency: string; amount: number; wonAmount: number }[];
  };
  const sums = (totals.byCurrency ?? []).map((c) => `${c.amount} ${c.currency} (won ${c.wonAmount})`).join(', ');
  const groups = Array.isArray(body.groups) ? body.groups.length : 0;
  return `${totals.deals ?? 0} deals, ${totals.wonDeals ?? 0} won${sums ? `; ${sums}` : ''}; ${groups} groups`;
}

/** The fields of createAudience a segment takes: the rules say who it is for, never a person. */
const SEGMENT_ARGUMENTS = ['pageId', 'customName', 'rules', 'priority', 'supplementaryContext', 'isNewPageAgent'];

/** `create_segment` (issue 39): createAudience with rules and priority, answered with the rules in words. */
function createSegment(operation: Operation): Tool {
  const full = mergedInput({ params: [operation.params], rest: [operation.body] });
  const properties = Object.fromEntries(Object.entries(full.properties ?? {}).filter(([name]) => SEGMENT_ARGUMENTS.includes(name)));
  const input: JsonSchema = { type: 'object', properties, additionalProperties: false, required: ['pageId', 'rules'] };
  return tool(
    {
      name: 'create_segment',
      title: 'Create a segment audience',
      description:
        'Creates a segment audience of a page: anonymous visitors matched by rules ({match: all|any, conditions: [{field, operator, value}]}), e.g. utm.source equals linkedin, visitor.country equals DE, company.employees gte 50. Visitors of a link to the page see the highest-priority published segment they match. Write and publish its content like any audience.',
      write: { destructive: false, idempotent: false },
    },
    input,
    plainSchema(operation.response),
    async (args, api) => {
      const body = await callJson<Body>(api, requestOf(operation, args));
      const rules = body.rules as Rules | null;
      const words = rules ? rulesInWords(rules) : '';
      return {
        structured: body,
        summary: `Created segment ${String(body.audienceId)} "${String(body.effectiveName)}" (priority ${String(body.priority)}) on page ${String(body.pageId)}: ${words}`,
      };
    },
  );
}
