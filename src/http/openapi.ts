import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { components, optionalNullableBodies } from './openapi-components.js';

declare module 'fastify' {
  interface FastifySchema {
    /** Beyond the v0 reference: the document marks the operation `x-extension: true`. */
    'x-extension'?: boolean;
  }
}

/** The OpenAPI 3.1 document is generated from the route schemas; this is only its frame. */
export function openApiOptions(): FastifyDynamicSwaggerOptions {
  // The document is generated once, on its first request: the named schemas are collected as the
  // routes are read, then declared under components.
  let named = components();
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Page and Audience Management API',
        version: '0',
        description: [
          'Personalised landing pages, their audiences, visit analytics, assets, topics, persons, accounts, page links and webhooks.',
          '',
          'Every /v0 operation needs the `x-api-key` header. Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`.',
          'Lists return `{items, hasMore, nextCursor, totalCount}`; pass `nextCursor` back as `cursor` for the next page.',
          'Operations marked `x-extension: true` are not in the v0 reference; they create and manage what the reference only reads.',
        ].join('\n'),
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN the service was started with' },
        },
      },
      // The API answers on the host that serves this document.
      servers: [{ url: '/', description: 'This service' }],
      security: [{ apiKey: [] }],
      tags: [
        { name: 'persons', description: 'Persons and their logs' },
        { name: 'accounts', description: 'Accounts and their logs' },
        { name: 'pages', description: 'Pages, their actions, content and previews' },
        { name: 'audiences', description: 'Audiences of a page, their versions, and audience search' },
        { name: 'audience sessions', description: 'Recorded visits of an audience' },
        { name: 'leads', description: 'Lead forms submitted on served pages, each with its person (extension)' },
        { name: 'site settings', description: "The tenant's brand on served pages (extension)" },
        { name: 'assets', description: 'Image files, assets and their signed download links' },
        { name: 'topics', description: 'Topics and their entries' },
        { name: 'page links', description: 'Links on tenant domains, and the domains' },
        { name: 'webhooks', description: 'Webhook subscriptions, deliveries and the events' },
        { name: 'analytics', description: 'Visits aggregated over time, per page and across pages' },
        { name: 'goals', description: 'What counts as a goal reached in a visit' },
        { name: 'funnels', description: 'Steps in order, and how many visitors reach each' },
        { name: 'templates', description: 'Page templates: the built-ins and those saved from pages (extension)' },
        { name: 'sites', description: "The customer's own sites, personalised by a snippet in their head (extension)" },
        {
          name: 'experiences',
          description: "Changes by selector on a site's pages, for the visitors whose URL and rules match (extension)",
        },
        { name: 'api keys', description: 'The calling API key' },
        { name: 'admin', description: 'Tenants and API keys (only when ADMIN_TOKEN is set)' },
      ],
    },
    transform: ({ schema, url }) => ({ schema: schema && named.route(schema), url }),
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const doc = documentObject.openapiObject;
      const schemas = named.schemas();
      optionalNullableBodies(doc.paths as Record<string, Record<string, unknown>>, schemas);
      doc.components = { ...doc.components, schemas } as typeof doc.components;
      named = components();
      return doc;
    },
  };
}

/**
 * The document at /openapi.json and its browser at /docs. Registered before any area, since the
 * document is made of the routes declared after it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, openApiOptions());
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
