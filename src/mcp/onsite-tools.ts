import { type Rules, rulesInWords } from '../audiences/index.js';
import { callJson, requestOf } from './api.js';
import type { Operation, RouteCatalogue } from './catalogue.js';
import { argumentName, type JsonSchema, mergedInput, plainSchema } from './schemas.js';
import { type Body, count, oneCall, READ_NOTE, type Tool, tool } from './tool.js';

/**
 * Sites and experiences (issue 48): the customer's own site, personalised by its snippet. The
 * tools are the API's operations; an experience is answered with its rules in words.
 */
export function onsiteTools(catalogue: RouteCatalogue): Tool[] {
  const op = (id: string) => catalogue.get(id);
  return [
    oneCall(
      {
        name: 'list_sites',
        title: 'List sites',
        description: `The tenant's own sites personalised by a snippet, newest first, each with its origins, snippet and lastSeenAt (null: the snippet never ran, so not installed). ${READ_NOTE}`,
      },
      op('listSites'),
      (b) => count(b, 'sites'),
    ),
    oneCall(
      {
        name: 'create_site',
        title: 'Add a site',
        description:
          'Adds a site the tenant already has (Webflow, WordPress, Next.js…): name and origins (1–20, scheme://host[:port], https). Answers the snippet to paste into the head of every page.',
        write: { destructive: false, idempotent: false },
      },
      op('createSite'),
      (b) => `Added site ${String(b.siteId)} "${String(b.name)}". Paste into the head of every page: ${String(b.snippet)}`,
    ),
    oneCall(
      {
        name: 'list_experiences',
        title: 'List experiences',
        description: `Experiences (changes by CSS selector on a site's pages), newest first, of one siteId or all, by status. ${READ_NOTE}`,
      },
      op('listExperiences'),
      (b) => count(b, 'experiences'),
    ),
    oneCall(
      {
        name: 'get_experience_analytics',
        title: 'Experience analytics',
        description: `An experience's views, visitors, clicks on its changed elements and conversions over a range of UTC days (startDate to endDate), per arm; with a holdout, the anytime-valid decision, pValue and lift of the personalised arm against it. ${READ_NOTE}`,
      },
      op('getExperienceAnalytics'),
      (b, a) => {
        const totals = b.totals as Body;
        const held =
          b.decision === undefined ? '' : `; against the holdout: ${String(b.decision)}${b.winner ? ` (${String(b.winner)})` : ''}`;
        return `Experience ${String(a.experienceId)}: ${String(totals.views)} views, ${String(totals.visitors)} visitors, ${String(totals.clicks)} clicks, ${String(totals.conversions)} conversions${held}`;
      },
    ),
    experienceTool(op('createExperience'), {
      name: 'create_experience',
      title: 'Create an experience',
      description:
        "Creates an experience on a site: urlMatch {type: exact|prefix|glob, value: a path} says which pages, rules (the segments' {match, conditions}; null: every visitor) which visitors, and changes (1–50) what they see: {selector, action: text, value} (takes tokens like {{utm.term | fallback}}), {selector, action: attribute, attribute: href|src|alt|title|placeholder|aria-label, value} (href and src https or a path), {selector, action: hide}, {selector, action: section, value: a page section, placement: before|after}. status draft (default) until made live; holdoutPercent 0–90 measures it against visitors who see the page unchanged.",
      write: { destructive: false, idempotent: false },
    }),
    experienceTool(op('updateExperience'), {
      name: 'update_experience',
      title: 'Update an experience',
      description:
        "Changes an experience's fields: status live applies it on the site at once (paused stops it), and changes or rules replace the old ones whole. Only the fields given change.",
      write: { destructive: true, idempotent: true },
    }),
  ];
}

/** The update's own fields only: the read-only ones an API client sends back are nothing for an assistant to fill in. */
function ownFields(operation: Operation): JsonSchema {
  const merged = mergedInput({ params: [operation.params], rest: [operation.body] });
  const params = new Set(Object.keys(plainSchema(operation.params).properties ?? {}).map(argumentName));
  const body = plainSchema(operation.body).properties ?? {};
  const properties = Object.fromEntries(
    Object.entries(merged.properties ?? {}).filter(([name]) => params.has(name) || body[name]?.readOnly !== true),
  );
  for (const name of params)
    properties[name] = plainSchema(operation.params).properties?.[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] ?? {};
  return { ...merged, properties };
}

function experienceTool(operation: Operation, shape: Parameters<typeof tool>[0]): Tool {
  return tool(shape, ownFields(operation), plainSchema(operation.response), async (args, api) => {
    const body = await callJson<Body>(api, requestOf(operation, args));
    const rules = body.rules as Rules | null;
    const who = rules ? rulesInWords(rules) : 'Every visitor';
    const verb = shape.name === 'create_experience' ? 'Created' : 'Updated';
    return {
      structured: body,
      summary: `${verb} experience ${String(body.experienceId)} "${String(body.name)}" (${String(body.status)}) on site ${String(body.siteId)}: ${who}, on ${String((body.urlMatch as Body).type)} ${String((body.urlMatch as Body).value)}`,
    };
  });
}
