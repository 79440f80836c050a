// The console's one door to the service: every request goes through the SDK (sdk/), so its types
// are the SDK's, generated from the OpenAPI document at build time. Its openapi-fetch client
// (`raw`) is used, which returns failures instead of raising them: the views show them.
import { createClient } from '../../sdk/src/client.js';
import type { components, paths } from '../../sdk/src/schema.js';

export type { components, paths };
type Schemas = components['schemas'];
type JsonOf<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Page = JsonOf<'/v0/pages/{page_id}', 'get'>;
export type Audience = JsonOf<'/v0/pages/{page_id}/audiences/{audience_id}', 'get'>;
export type AudienceVersion = JsonOf<'/v0/pages/{page_id}/audiences/{audience_id}/versions', 'get'>['items'][number];
export type Experiment = JsonOf<'/v0/pages/{page_id}/experiments/{experiment_id}', 'get'>;
export type ExperimentResults = JsonOf<'/v0/pages/{page_id}/experiments/{experiment_id}/results', 'get'>;
export type Session = JsonOf<'/v0/pages/{page_id}/audience_sessions', 'get'>['items'][number];
export type PageLink = JsonOf<'/v0/page_links/search', 'get'>['items'][number];
export type Person = JsonOf<'/v0/persons/{person_id}', 'get'>;
export type Account = JsonOf<'/v0/accounts/search', 'get'>['items'][number];
export type PersonLog = JsonOf<'/v0/persons/{person_id}/logs', 'get'>['items'][number];
export type AccountLog = JsonOf<'/v0/accounts/{account_id}/logs', 'get'>['items'][number];
export type Subscription = JsonOf<'/v0/webhook_subscriptions', 'get'>['items'][number];
export type Delivery = JsonOf<'/v0/webhook_subscriptions/{subscription_id}/deliveries', 'get'>['items'][number];
export type CallerKey = JsonOf<'/v0/api_key', 'get'>;
export type PageAnalytics = JsonOf<'/v0/pages/{page_id}/analytics', 'get'>;
export type PageTotals = JsonOf<'/v0/analytics/pages', 'get'>['items'][number];
export type Schema<K extends keyof Schemas> = Schemas[K];
export type TenantDomain = Schema<'TenantDomain'>;
export type Asset = Schema<'Asset'>;
export type Topic = Schema<'Topic'>;
export type TopicEntry = Schema<'TopicEntry'>;
export type PageContent = NonNullable<Schema<'PageCreate'>['content']>;
export type PageAction = NonNullable<Schema<'PageCreate'>['actions']>[number];
export type EventType = Schema<'WebhookSubscriptionCreate'>['events'][number];

/** One field the API refused: a JSON Pointer into the request body, and why. */
export type FieldProblem = Schema<'FieldError'>;

/** What a failed call says: the problem's title and detail, its status, and the fields it names. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: FieldProblem[] = [],
  ) {
    super(message);
  }
}

// The key lives in this tab's sessionStorage only: never in a URL, a cookie or localStorage,
// never logged, and removed on sign-out.
const KEY = 'pam.apiKey';
export const storedKey = (): string | null => sessionStorage.getItem(KEY);
export const storeKey = (key: string): void => sessionStorage.setItem(KEY, key);
export const forgetKey = (): void => sessionStorage.removeItem(KEY);

// The key is read at each request (it is set and removed without a reload); retries of 429 and 503
// wait at most 5 s, which a person in front of the console can bear.
export const api = createClient({
  baseUrl: location.origin,
  apiKey: '',
  maxRetryDelayMs: 5_000,
  fetch: (request) => {
    const key = storedKey();
    if (key) request.headers.set('x-api-key', key);
    else request.headers.delete('x-api-key');
    return fetch(request);
  },
}).raw;

interface Problem {
  title?: string;
  detail?: string;
  errors?: FieldProblem[];
}

/** The data of a successful call, or an ApiError with the problem's words. */
export function must<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined && result.response.ok) return result.data;
  const problem = (typeof result.error === 'object' && result.error !== null ? result.error : {}) as Problem;
  throw new ApiError(result.response.status, problem.detail ?? problem.title ?? `HTTP ${result.response.status}`, problem.errors ?? []);
}

/** A call with no body to return (a DELETE's 204): nothing, or the ApiError of its problem. */
export function succeeded(result: { error?: unknown; response: Response }): void {
  if (!result.response.ok) must({ error: result.error, response: result.response, data: undefined });
}

/** Creates and actions take an Idempotency-Key: one per click, so a retried request is never done twice. */
export const once = (): { 'idempotency-key': string } => ({ 'idempotency-key': crypto.randomUUID() });

/** Saves a blob through a temporary link: a download that needed the key header cannot be a plain href. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
