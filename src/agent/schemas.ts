import { Type, type Static } from '@sinclair/typebox';
import { AGENT_GENERATORS } from '../config/agent.js';
import { MAX_SAFE_INTEGER, Nullable, StringEnum } from '../http/schemas.js';

export const MAX_REGENERATE_AUDIENCES = 10_000;

export const RegenerateBody = Nullable(
  Type.Object(
    {
      audienceIds: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
          maxItems: MAX_REGENERATE_AUDIENCES,
          uniqueItems: true,
          description:
            'Live audiences of the page, regenerated exactly, written by a person or not (the explicit choice); absent: every live audience of the page except, without includeWritten, those a person wrote',
        }),
      ),
      includeWritten: Type.Optional(
        Type.Boolean({
          description:
            'Page-wide only: also regenerate the audiences whose published or latest draft version is `written` (false, the default: they are skipped)',
        }),
      ),
      dryRun: Type.Optional(
        Type.Boolean({
          description:
            'Write nothing: answer 200 with what the request would queue and skip (the console asks this before confirming); false by default',
        }),
      ),
    },
    { additionalProperties: false, $id: 'RegenerateRequest' },
  ),
);
export type RegenerateBody = Static<typeof RegenerateBody>;

export const SKIP_REASONS = ['written'] as const;

export const Regenerated = Type.Object(
  {
    queued: Type.Integer({
      minimum: 0,
      maximum: MAX_SAFE_INTEGER,
      description: 'Versions queued for the page agent (with dryRun: that would be queued)',
    }),
    skipped: Type.Array(
      Type.Object({
        audienceId: Type.String(),
        reason: StringEnum(SKIP_REASONS, { description: '`written`: its published or latest draft version was written by a person' }),
      }),
      {
        description: 'The live audiences a page-wide regenerate left alone, in id order; empty when audienceIds or includeWritten is given',
      },
    ),
    dryRun: Type.Optional(Type.Literal(true, { description: 'Present (true) only in the answer to a dry run: nothing was written' })),
  },
  { $id: 'Regenerated' },
);
export type Regenerated = Static<typeof Regenerated>;

/** What writes new versions' copy, so a client (the console) can say what Regenerate will do. */
export const AgentInfo = Type.Object(
  {
    generator: StringEnum(AGENT_GENERATORS, {
      description:
        "`template`: copies the page's content and personalises it with tokens (no model); `openai`: an OpenAI-compatible model writes new copy",
    }),
    model: Nullable(Type.String({ description: 'The model named by AGENT_OPENAI_MODEL; null for the template generator' })),
    worker: Type.Boolean({ description: 'Whether this process runs the page agent (AGENT); another instance may run it when false' }),
  },
  { $id: 'AgentInfo' },
);
export type AgentInfo = Static<typeof AgentInfo>;
