import type { TemplatesTable } from '../../db/types.js';
import { accountOutreach } from './account-outreach.js';
import { demoRequest } from './demo-request.js';
import { pricingPage } from './pricing-page.js';
import { productLaunch } from './product-launch.js';
import type { BuiltIn } from './built-in.js';
import { webinar } from './webinar.js';

/**
 * Every built-in is listed before any template of the tenant's: its sort time lies after any
 * row's (rows are stamped with the service's clock), and their ids descend in the order below.
 */
export const BUILT_IN_SORT_TIME = '9999-12-31T23:59:59.999Z';

const ORDERED: BuiltIn[] = [productLaunch, accountOutreach, webinar, demoRequest, pricingPage];

/** The built-ins as rows of the table, so one mapper (`toTemplate`) shows both. */
export const BUILT_INS: readonly TemplatesTable[] = ORDERED.map((b) => ({
  id: b.templateId,
  tenant_id: '',
  name: b.name,
  description: b.description,
  content: JSON.stringify(b.content),
  actions: JSON.stringify(b.actions),
  header_action_id: b.headerActionId,
  created_at: BUILT_IN_SORT_TIME,
  updated_at: BUILT_IN_SORT_TIME,
}));

for (let i = 1; i < BUILT_INS.length; i++) {
  // The list's keyset walks the built-ins by id, descending: a new one must keep that order.
  if (!((BUILT_INS[i - 1]?.id ?? '') > (BUILT_INS[i]?.id ?? '')))
    throw new Error('The built-in templates must be listed in descending id order');
}

const BY_ID = new Map(BUILT_INS.map((row) => [row.id, row]));

export const builtInById = (templateId: string): TemplatesTable | undefined => BY_ID.get(templateId);
