import type { AgentConfig } from '../config.js';
import { templateGenerator } from './template.js';
import type { Generator } from './types.js';

/**
 * The generator AGENT_GENERATOR names (a new one is added here and in config.ts's AGENT_GENERATORS).
 * OpenAI's client is loaded only when it is the one named: an instance that does not use it never
 * holds it in memory.
 */
export async function generatorFor(config: AgentConfig): Promise<Generator> {
  if (config.generator === 'openai' && config.openai) {
    const { openAiGenerator } = await import('./openai.js');
    return openAiGenerator(config.openai, { timeoutMs: config.timeoutMs, maxPromptChars: config.maxPromptChars });
  }
  return templateGenerator;
}
