import { Type, type Static } from '@sinclair/typebox';
import { ApiKey } from '../admin/index.js';

/** The key a request was made with, as its holder may see it: what it may do, and until when. */
export const CallerKey = Type.Object(
  {
    tenantId: Type.String(),
    apiKey: ApiKey,
  },
  { $id: 'CallerKey' },
);
export type CallerKey = Static<typeof CallerKey>;
