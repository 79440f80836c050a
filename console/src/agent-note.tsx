import { api, must } from './api.js';
import { useLoad } from './components.js';

type AgentInfo = Awaited<ReturnType<typeof readAgent>>;

/** Asked once per tab: what writes new copy does not change while the service runs. */
let asked: Promise<{ generator: string; model: string | null }> | undefined;
async function readAgent() {
  asked ??= api.GET('/v0/agent').then(must);
  return asked.catch((err: unknown) => {
    asked = undefined;
    throw err;
  });
}

export const NO_MODEL =
  "No model is configured: the template generator copies and personalises the page's copy; configure a model for new copy.";

/**
 * Said beside Regenerate: what the page agent will write with. Without a model (the template
 * generator) a marketer would otherwise expect new copy and get the page's own, personalised.
 */
export function AgentNote() {
  const agent = useLoad<AgentInfo>(readAgent, []);
  if (!agent.data) return null;
  if (agent.data.generator === 'template')
    return (
      <p class="muted small" data-agent="template">
        {NO_MODEL} (AGENT_GENERATOR=openai, see docs/agent.md)
      </p>
    );
  return (
    <p class="muted small" data-agent="model">
      New copy is written by {agent.data.model ?? 'the configured model'}.
    </p>
  );
}
