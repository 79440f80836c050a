import type { AgentConfig } from '../config.js';
import { openAiGenerator } from './openai.js';
import { templateGenerator } from './template.js';
import type { Generator } from './types.js';

/** The generator AGENT_GENERATOR names (a new one is added here and in config.ts's AGENT_GENERATORS). */
export function generatorFor(config: AgentConfig): Generator {
  if (config.generator === 'openai' && config.openai) {
    return openAiGenerator(config.openai, { timeoutMs: config.timeoutMs, maxPromptChars: config.maxPromptChars });
  }
  return templateGenerator;
}
