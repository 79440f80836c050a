import { Type, type Static } from '@sinclair/typebox';
import { MAX_SAFE_INTEGER, Nullable } from '../http/schemas.js';

export const MAX_REGENERATE_AUDIENCES = 10_000;

export const RegenerateBody = Nullable(
  Type.Object(
    {
      audienceIds: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
          maxItems: MAX_REGENERATE_AUDIENCES,
          uniqueItems: true,
          description: 'Live audiences of the page; absent: every live audience of the page',
        }),
      ),
    },
    { additionalProperties: false, $id: 'RegenerateRequest' },
  ),
);
export type RegenerateBody = Static<typeof RegenerateBody>;

export const Regenerated = Type.Object(
  {
    queued: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Versions queued for the page agent' }),
  },
  { $id: 'Regenerated' },
);
export type Regenerated = Static<typeof Regenerated>;
