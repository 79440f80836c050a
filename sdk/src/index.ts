/**
 * The typed client of the Page and Audience Management API. Its types are generated from the
 * service's OpenAPI document at build time (`src/schema.ts`, by openapi-typescript); requests go
 * through openapi-fetch.
 */
export { type Call, type ClientOptions, createClient, type ListItem, type ListPath, type PamClient } from './client.js';
export { ApiError, type FieldError } from './errors.js';
export { fetchWithRetries, isRetryable, type RetryOptions, retryDelayMs } from './retry.js';
export type * from './schema.js';
export { verifyWebhook } from './webhooks.js';
