/** One refused field of a request: a JSON Pointer to it, and what is wrong. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * A failed request: the service's problem details (RFC 9457) as fields. `code` is stable (branch on
 * it, never on `message`); quote `requestId` when reporting a failure.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly errors: FieldError[];
  readonly requestId: string | undefined;
  readonly title: string;
  readonly detail: string;
  /** The response, for its headers (`retry-after`, rate-limit ones). Its body has been read. */
  readonly response: Response;

  constructor(response: Response, problem: unknown) {
    const p = isRecord(problem) ? problem : {};
    const text = (key: string) => (typeof p[key] === 'string' ? (p[key] as string) : undefined);
    const title = text('title') ?? (response.statusText || `HTTP ${response.status}`);
    const detail = text('detail') ?? title;
    super(`${response.status} ${text('code') ?? 'http_error'}: ${detail}`);
    this.status = typeof p.status === 'number' ? p.status : response.status;
    this.code = text('code') ?? 'http_error';
    this.errors = Array.isArray(p.errors) ? p.errors.filter(isFieldError) : [];
    this.requestId = text('requestId') ?? response.headers.get('x-request-id') ?? undefined;
    this.title = title;
    this.detail = detail;
    this.response = response;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isFieldError = (value: unknown): value is FieldError =>
  isRecord(value) && typeof value.path === 'string' && typeof value.message === 'string';
