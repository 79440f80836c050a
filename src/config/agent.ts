import { ConfigError, type Env, readBoolean, readInteger, readString } from './read.js';

/** The page agent (src/agent/, docs/agent.md). */
export interface AgentConfig {
  /** Run the worker in this process. */
  enabled: boolean;
  /** Generations at once in this process (for a generator that waits on the network). */
  concurrency: number;
  generator: AgentGeneratorName;
  /** How long one generation may take; the claim's lease outlives it. */
  timeoutMs: number;
  /** The most characters a generator's prompt may have. */
  maxPromptChars: number;
  /** Set when `generator` is `openai`. */
  openai: OpenAiConfig | undefined;
}

export interface OpenAiConfig {
  /** Any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, LiteLLM). */
  baseUrl: string;
  /** Never logged, never in an error or a failureReason. */
  apiKey: string | undefined;
  model: string;
}

export const AGENT_GENERATORS = ['template', 'openai'] as const;
export type AgentGeneratorName = (typeof AGENT_GENERATORS)[number];
const isGenerator = (value: string): value is AgentGeneratorName => (AGENT_GENERATORS as readonly string[]).includes(value);

export function readAgent(env: Env): AgentConfig {
  const generator = readString(env, 'AGENT_GENERATOR')?.trim() ?? 'template';
  if (!isGenerator(generator)) throw new ConfigError(`AGENT_GENERATOR must be ${AGENT_GENERATORS.join(' or ')}, got "${generator}"`);
  return {
    enabled: readBoolean(env, 'AGENT', true),
    concurrency: readInteger(env, 'AGENT_CONCURRENCY', 4, 1, 1000),
    generator,
    timeoutMs: readInteger(env, 'AGENT_TIMEOUT_MS', 60_000, 100, 3_600_000),
    maxPromptChars: readInteger(env, 'AGENT_MAX_PROMPT_CHARS', 48_000, 4000, 10_000_000),
    openai: generator === 'openai' ? readOpenAi(env) : undefined,
  };
}

function readOpenAi(env: Env): OpenAiConfig {
  const baseUrl = readString(env, 'AGENT_OPENAI_BASE_URL')?.trim() ?? 'https://api.openai.com/v1';
  if (!/^https?:\/\//i.test(baseUrl) || !URL.canParse(baseUrl))
    throw new ConfigError(`AGENT_OPENAI_BASE_URL must be an http(s) URL, got "${baseUrl.split(':')[0]}:..."`);
  const model = readString(env, 'AGENT_OPENAI_MODEL')?.trim();
  if (model === undefined) throw new ConfigError('AGENT_OPENAI_MODEL must be set when AGENT_GENERATOR is openai');
  // The key itself is never echoed, not even in this message.
  const apiKey = readString(env, 'AGENT_OPENAI_API_KEY');
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey))
    throw new ConfigError('AGENT_OPENAI_API_KEY must be visible ASCII without spaces');
  return { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey, model };
}
