import OpenAI from 'openai';
import type { OpenAiConfig } from '../config.js';
import { ANSWER_JSON_SCHEMA, contentOfAnswer } from './layouts.js';
import { buildPrompt } from './prompt.js';
import { parseRetryAfter } from './retry-policy.js';
import { GenerationError, type Generator } from './types.js';

export interface OpenAiOptions {
  timeoutMs: number;
  maxPromptChars: number;
}

/** The answer's schema for structured output (src/agent/layouts.ts): texts only, every field required, as strict mode wants. */
export const CONTENT_JSON_SCHEMA = ANSWER_JSON_SCHEMA;

/**
 * Any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, LiteLLM), through the
 * official client: one request per try (the worker retries, so the client does not), structured
 * output with the content's schema. Every failure becomes a GenerationError whose reason names
 * what went wrong in our words (status, timeout, malformed answer) with the API key scrubbed from
 * anything the endpoint said; the client's own logging is off.
 */
export function openAiGenerator(config: OpenAiConfig, options: OpenAiOptions): Generator {
  const client = new OpenAI({
    baseURL: config.baseUrl,
    // A local endpoint (Ollama, vLLM) may need no key; the client insists on one.
    apiKey: config.apiKey ?? 'no-key',
    timeout: options.timeoutMs,
    maxRetries: 0,
    logLevel: 'off',
  });
  const scrub = (text: string) => (config.apiKey ? text.split(config.apiKey).join('[redacted]') : text).slice(0, 300);

  return {
    name: 'openai',
    inProcess: false,
    readsHistory: true,
    async generate(input, signal) {
      const prompt = buildPrompt(input, options.maxPromptChars);
      let text: string | null | undefined;
      try {
        const completion = await client.chat.completions.create(
          {
            model: config.model,
            messages: [
              { role: 'system', content: prompt.system },
              { role: 'user', content: prompt.user },
            ],
            response_format: { type: 'json_schema', json_schema: { name: 'page_content', strict: true, schema: CONTENT_JSON_SCHEMA } },
          },
          { signal },
        );
        text = completion.choices[0]?.message?.content;
      } catch (err) {
        // The worker's own deadline (the same timeout) may abort the request before the client's fires.
        const timedOut = signal.aborted && (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
        throw timedOut ? new GenerationError(`openai: no answer within ${options.timeoutMs} ms`) : failure(err, options.timeoutMs, scrub);
      }
      if (typeof text !== 'string' || text.trim() === '') throw new GenerationError('openai: the answer has no content');
      try {
        return contentOfAnswer(JSON.parse(text) as unknown, input.page.content);
      } catch {
        throw new GenerationError('openai: the answer is not JSON');
      }
    },
  };
}

function failure(err: unknown, timeoutMs: number, scrub: (text: string) => string): GenerationError {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new GenerationError(`openai: no answer within ${timeoutMs} ms`);
  if (err instanceof OpenAI.APIUserAbortError) return new GenerationError('openai: stopped');
  if (err instanceof OpenAI.APIConnectionError) return new GenerationError('openai: the endpoint could not be reached');
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const said = typeof err.message === 'string' ? `: ${scrub(err.message)}` : '';
    return new GenerationError(`openai: HTTP ${err.status}${said}`, parseRetryAfter(err.headers?.get('retry-after'), Date.now()));
  }
  return new GenerationError('openai: the request failed');
}
