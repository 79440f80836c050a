import createFetchClient, { type Client, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { ApiError } from './errors.js';
import { fetchWithRetries } from './retry.js';
import type { paths } from './schema.js';

export interface ClientOptions {
  /** Where the service answers, e.g. `https://api.example.com` (no trailing `/v0`). */
  baseUrl: string;
  /** The tenant's API key, sent as `x-api-key`. */
  apiKey: string;
  /** Further attempts after a 429 or 503 (retryable requests only; see `fetchWithRetries`). Default 3. */
  retries?: number;
  /** The longest `Retry-After` waited for; a longer one raises the error at once. Default 60 s. */
  maxRetryDelayMs?: number;
  /** Sends one request (default: the global fetch); for tests and proxies. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request besides the key (e.g. `user-agent`). */
  headers?: Record<string, string>;
}

/** openapi-fetch's rule: the options argument may be left out when nothing in it is required. */
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];
type Success<M extends HttpMethod, P extends PathsWithMethod<paths, M>, Init> = {
  /** The response body (nothing for a 204). */
  data: NonNullable<Extract<FetchResponse<NonNullable<paths[P][M]>, Init, MediaType>, { error?: never }>['data']>;
  response: Response;
};

/** A request by path and method: resolves to the success `{ data, response }`, raises `ApiError` otherwise. */
export type Call<M extends HttpMethod> = <P extends PathsWithMethod<paths, M>, Init extends MaybeOptionalInit<paths[P], M>>(
  url: P,
  ...init: InitParam<Init>
) => Promise<Success<M, P, Init>>;

type ListBody<P extends keyof paths> = paths[P]['get'] extends { responses: { 200: { content: { 'application/json': infer B } } } }
  ? B
  : never;
/** The list operations: their 200 is `{ items, hasMore, nextCursor, totalCount }`. */
export type ListPath = {
  [P in PathsWithMethod<paths, 'get'>]: ListBody<P> extends { items: unknown[]; hasMore: boolean; nextCursor: string | null } ? P : never;
}[PathsWithMethod<paths, 'get'>];
export type ListItem<P extends ListPath> = ListBody<P> extends { items: (infer I)[] } ? I : never;

export interface PamClient {
  GET: Call<'get'>;
  POST: Call<'post'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
  /** Every item of a list operation, page after page (following `nextCursor`), as they are needed. */
  paginate<P extends ListPath, Init extends MaybeOptionalInit<paths[P], 'get'>>(
    url: P,
    ...init: InitParam<Init>
  ): AsyncGenerator<ListItem<P>>;
  /** openapi-fetch's client with the same settings: it returns failures (`{ error }`) instead of raising them. */
  raw: Client<paths>;
}

type Loose = { params?: { query?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
type LooseRequest = (method: string, url: string, init?: Loose) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
type LooseCall = (url: string, init?: Loose) => Promise<{ data?: unknown; response: Response }>;

export function createClient(options: ClientOptions): PamClient {
  const fetchOnce = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...options.headers, 'x-api-key': options.apiKey },
    fetch: fetchWithRetries(fetchOnce, { retries: options.retries ?? 3, maxDelayMs: options.maxRetryDelayMs ?? 60_000 }),
  });
  const request = raw.request as unknown as LooseRequest;
  const call =
    (method: string): LooseCall =>
    async (url, init) => {
      const result = await request(method, url, init);
      if (result.error !== undefined || !result.response.ok) throw new ApiError(result.response, result.error);
      return result;
    };
  const get = call('GET');

  async function* paginate(url: string, init?: Loose): AsyncGenerator<unknown> {
    let cursor: string | undefined;
    for (;;) {
      const params = init?.params ?? {};
      const query = { ...params.query, ...(cursor === undefined ? {} : { cursor }) };
      const { data } = await get(url, { ...init, params: { ...params, query } });
      const page = data as { items: unknown[]; hasMore: boolean; nextCursor: string | null };
      yield* page.items;
      if (!page.hasMore || page.nextCursor === null) return;
      cursor = page.nextCursor;
    }
  }

  return {
    GET: get as unknown as Call<'get'>,
    POST: call('POST') as unknown as Call<'post'>,
    PATCH: call('PATCH') as unknown as Call<'patch'>,
    DELETE: call('DELETE') as unknown as Call<'delete'>,
    paginate: paginate as unknown as PamClient['paginate'],
    raw,
  };
}
